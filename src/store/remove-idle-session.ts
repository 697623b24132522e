// Removing a file session (JSONL or SQLite) that `spool gc` judged idle, under the session's
// single-writer lock (`<log>.lock`, the one every writer takes): removeSessionUnderLock, with its
// judgement of a live holder (a writer: kept, as running; another gc: gone).
import { SessionLockedError } from "./errors.js";
import { type LockedRemoval, removeSessionUnderLock } from "./remove-session-under-lock.js";

/** removeSessionUnderLock's outcomes, and `held`: a live process holds the session's lock (a writer: kept, as running). */
export type IdleRemoval = LockedRemoval | "held";

/**
 * Removes the session directory `dir` whose log is `log`, judged idle when the log's mtime was
 * `judgedMtimeMs`. A lock whose owner is dead is broken, as a writer breaks it. Throws when a file
 * cannot be removed: the log goes last, so the session stays listed, whole enough for the next gc.
 */
export function removeIdleSession(dir: string, log: string, judgedMtimeMs: number): IdleRemoval {
  try {
    return removeSessionUnderLock(dir, log, judgedMtimeMs);
  } catch (e) {
    if (e instanceof SessionLockedError) return e.purpose === "remove" ? "gone" : "held";
    throw e;
  }
}
