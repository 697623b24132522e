// One writer per session. The lock file is published complete with link() (atomic, fails if it
// exists), names its owner (pid, host, PID namespace), and is broken only when that owner is surely
// dead (process-owner.ts).
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { fullDiskAs, SessionLockedError } from "../errors.js";
import { currentOwner, ownerLiveness, ownerPlace, type ProcessOwner } from "../process-owner.js";

interface LockOwner extends ProcessOwner {
  readonly host: string;
  readonly nonce: string;
  /** "remove": held by `spool gc` or `repo.delete` removing the session, not by a writer (another gc skips it). */
  readonly purpose?: "remove";
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const o = JSON.parse(readFileSync(path, "utf8")) as Partial<LockOwner>;
    if (typeof o.pid === "number" && typeof o.host === "string" && typeof o.nonce === "string") return o as LockOwner;
  } catch {
    /* missing or unreadable: treated by the caller */
  }
  return undefined;
}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/** Who holds the lock, if a live process does. */
export function lockHolder(lockPath: string): LockOwner | undefined {
  const o = readOwner(lockPath);
  if (o === undefined) return undefined;
  return ownerLiveness(o) === "dead" ? undefined : o;
}

/** Takes the lock or throws SessionLockedError; returns the release function. */
export function acquireLock(lockPath: string, sessionFile: string, purpose?: "remove"): () => void {
  const me: LockOwner = { ...currentOwner(), nonce: randomBytes(8).toString("hex"), ...(purpose === undefined ? {} : { purpose }) };
  const tmp = `${lockPath}.${me.nonce}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(me), { flag: "wx", mode: 0o600 });
  } catch (e) {
    tryUnlink(tmp); // created, then the write failed (a full disk)
    throw fullDiskAs(e, lockPath);
  }
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(tmp, lockPath);
        return () => {
          if (readOwner(lockPath)?.nonce === me.nonce) tryUnlink(lockPath);
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const owner = readOwner(lockPath);
      // A lock whose owner cannot be checked (another host, a container still running) is respected;
      // so is a live pid.
      const liveness = owner === undefined ? "dead" : ownerLiveness(owner);
      if (owner !== undefined && liveness !== "dead") {
        throw new SessionLockedError(sessionFile, owner.pid, ownerPlace(owner), lockPath, owner.purpose);
      }
      // Stale (dead owner, or a torn lock file that link() can never produce): move it aside, and
      // if what we moved is not what we judged stale, someone else took the lock meanwhile: put it back.
      const aside = `${lockPath}.${me.nonce}.stale`;
      try {
        renameSync(lockPath, aside);
      } catch {
        continue;
      }
      const moved = readOwner(aside);
      if (moved !== undefined && moved.nonce !== owner?.nonce) {
        try {
          linkSync(aside, lockPath);
        } catch {
          /* a third party holds it now; the next attempt will see that */
        }
      }
      tryUnlink(aside);
    }
    const last = readOwner(lockPath);
    throw new SessionLockedError(sessionFile, last?.pid ?? 0, "", undefined, last?.purpose);
  } finally {
    tryUnlink(tmp);
  }
}

/**
 * Takes the lock again after its file went with the session directory (dir-removed.ts): a new lock
 * (and its release) when the file is gone, `release` unchanged while it still names this process.
 * Another live holder means a new session took the path: that throws.
 */
export function retakeLock(lockPath: string, sessionFile: string, release: () => void): () => void {
  if (!existsSync(lockPath)) return acquireLock(lockPath, sessionFile);
  if (lockHolder(lockPath)?.pid !== process.pid) throw new Error(`${lockPath} is held by another process`);
  return release;
}
