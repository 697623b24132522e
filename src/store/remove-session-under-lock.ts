// Removing a file session (JSONL or SQLite) under the session's single-writer lock (`<log>.lock`,
// the one every writer takes), for `spool gc` (remove-idle-session.ts) and `repo.delete`. Judging and
// removing are two steps: without the lock, a writer that opened or resumed the session between them
// had its directory removed under it. `repo.delete` checked the lock, then removed: the same gap.
import { readdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { acquireLock } from "./jsonl/lock.js";

/**
 * `removed`; `changed`: its log was written after it was judged (a writer came and went: kept);
 * `gone`: another gc removed it, or holds its lock to remove it now.
 */
export type LockedRemoval = "removed" | "changed" | "gone";

/**
 * removeIdleSession without its judgement of the holder: a live holder's SessionLockedError is thrown
 * (naming a gc by its lock's purpose). `judgedMtimeMs` undefined (`repo.delete`): the log is removed
 * whatever was written to it before the lock was taken.
 */
export function removeSessionUnderLock(dir: string, log: string, judgedMtimeMs?: number): LockedRemoval {
  const lockPath = `${log}.lock`;
  let release: () => void;
  try {
    release = acquireLock(lockPath, log, "remove");
  } catch (e) {
    // The holder first (the error names it, purpose included), then the log: another gc removes the log
    // before it lets go of the lock.
    // ENOENT: the directory went (the lock's temporary file is written beside the log). Or another gc
    // removed the log and holds the lock still, or just let go of it: see removeIfEmpty.
    if (mtimeOf(log) === undefined) {
      removeIfEmpty(dir);
      return "gone";
    }
    throw e;
  }
  let outcome: LockedRemoval = "removed";
  try {
    const mtime = mtimeOf(log);
    // Another gc removed the log and let go of the lock in the moment between; the directory is left.
    if (mtime === undefined) outcome = "gone";
    else if (judgedMtimeMs !== undefined && mtime !== judgedMtimeMs) return "changed";
    else {
      const logName = basename(log);
      const lockName = basename(lockPath);
      const rm = (name: string) => rmSync(join(dir, name), { recursive: true, force: true });
      for (const name of readdirSync(dir)) if (!name.startsWith(logName)) rm(name);
      // Then the files named after the log (checkpoint, sidecars, WAL), the log after them (a sidecar
      // directory without its log is reported as damage by every listing), then the lock's own debris
      // (a dead writer's; a live one's, taking the lock now, fails it with ENOENT and finds the log
      // gone). The lock stays until the log is gone, so no writer opens a half-removed session.
      const lockDebris = (name: string) => name.startsWith(`${lockName}.`);
      for (const name of readdirSync(dir)) if (name !== lockName && name !== logName && !lockDebris(name)) rm(name);
      rm(logName);
      for (const name of readdirSync(dir)) if (lockDebris(name)) rm(name);
    }
  } finally {
    release();
  }
  removeIfEmpty(dir);
  return outcome;
}

/**
 * Trap: whoever tried the lock as it was released has a file here: another gc (its lock, or the
 * temporary file it links the lock from), which finds the log gone and removes the directory after it
 * (two gcs at once left empty directories in 1 of 10 runs of 400 sessions); or a writer starting a new
 * session in a directory it made sure exists, whose files are its own.
 */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT") throw e;
  }
}

function mtimeOf(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
