// Every failure the store reports is one of these: a stable `code` for callers to branch on and a
// message that says what was wrong and what to do about it.
import { SpoolError } from "../errors/index.js";

export class ScopeIdError extends SpoolError {
  constructor(detail: string) {
    super(
      "SPOOL_STORE_SCOPE_ID",
      `invalid ephemeral scope id: ${detail}. Use a non-empty, well-formed string whose encodeURIComponent form is at most 180 characters (e.g. an operation id).`,
    );
  }
}

export class AddressError extends SpoolError {
  constructor(detail: string) {
    super("SPOOL_STORE_ADDRESS", `invalid storage address: ${detail}. Namespaces are non-empty strings, keys are strings, both well-formed Unicode.`);
  }
}

export class WriteError extends SpoolError {
  constructor(detail: string) {
    super("SPOOL_STORE_WRITE", `invalid write: ${detail}`);
  }
}

/** A transaction touched more than one scope; nothing was written. */
export class MixedScopeError extends SpoolError {
  constructor(detail: string) {
    super(
      "SPOOL_STORE_MIXED_SCOPE",
      `a transaction must stay in one scope (${detail}); nothing was written. ` +
        "Commit session writes (and retireScope) separately from ephemeral writes, one ephemeral scope id per transaction.",
    );
  }
}

export class ReadOptionsError extends SpoolError {
  constructor(detail: string) {
    super("SPOOL_STORE_READ_OPTIONS", `invalid list read options: ${detail}`);
  }
}

export class StoreClosedError extends SpoolError {
  constructor(what: string) {
    super("SPOOL_STORE_CLOSED", `cannot ${what}: the store is closed. Open it again to keep using the session.`);
  }
}

/** The disk (or the user's quota) is full: nothing of the transaction was written. */
export class StoreFullError extends SpoolError {
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(
      "SPOOL_STORE_FULL",
      `no space left to write ${file} (${(cause as NodeJS.ErrnoException)?.code === "EDQUOT" ? "the disk quota is used up" : "the disk is full"}); nothing of this write was kept. ` +
        "Free some space, or record sessions on another disk (--root DIR).",
      { cause },
    );
  }
}

/** `err` as StoreFullError when it says the disk or quota is full; otherwise `err` itself. */
export function fullDiskAs(err: unknown, file: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT" ? new StoreFullError(file, err) : err;
}

/** A write or fsync hit an I/O error that leaves the log in an unknown state. */
export class StoreFailedError extends SpoolError {
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(
      "SPOOL_STORE_FAILED",
      `an I/O error left ${file} in an unknown state (${String((cause as Error)?.message ?? cause)}). ` +
        "The store refuses further writes; close it and reopen the session, which repairs a torn tail.",
    );
  }
}

/** The log was deleted under the writer and could not be published again: later writes would reach nobody. */
export class SessionLogRemovedError extends SpoolError {
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(
      "SPOOL_STORE_LOG_REMOVED",
      `${file} was deleted while the session was writing it, and writing it again failed (${String((cause as Error)?.message ?? cause)}); ` +
        "the store refuses further writes: end the run and start a new session (do not remove .spool while a run is in progress).",
    );
  }
}

/**
 * Damage that is not a crash signature (anything but the final line), or a file that is not ours.
 * Found on open, or (`onRead`) when a read reaches a line of the log that a checkpoint vouched for.
 */
export class CorruptSessionError extends SpoolError {
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
    options: { readonly repairable?: boolean; readonly onRead?: boolean } = {},
  ) {
    super(
      "SPOOL_STORE_CORRUPT",
      `${file}:${line}: ${detail}. This is damage a crash cannot cause, so ${options.onRead ? "the read failed" : "the session was not opened"}; ` +
        (options.repairable && line > 1
          ? "restore the file from a backup, or run `spool repair SESSION` to cut the log back to its last good line (the cut lines are kept beside it in a .damaged file)."
          : "restore the file from a backup or move it aside (spool never rewrites a corrupt log)."),
    );
  }
}

/** A reader (snapshot, follower) found the log it indexed replaced or cut under it: read the session again. */
export class SessionChangedError extends SpoolError {
  constructor(readonly file: string) {
    super(
      "SPOOL_STORE_CHANGED",
      `${file} was replaced or cut while it was being read (a repair, a delete, or a new session under the same name); read the session again.`,
    );
  }
}

export class SessionLockedError extends SpoolError {
  constructor(
    readonly file: string,
    readonly pid: number,
    readonly host: string,
    /** The lock file, for a session on files: the one thing to delete when its holder is surely gone. */
    lockFile?: string,
    /** "remove": the holder is removing the session (`spool gc`, `repo.delete`: its lock says so), not a writer. */
    readonly purpose?: "remove",
  ) {
    const where = `process ${pid}${host ? ` on ${host}` : ""}`;
    super(
      "SPOOL_STORE_LOCKED",
      (purpose === "remove"
        ? `session ${file} is being removed, its records with it, by \`spool gc\` or a \`repo.delete\` in ${where}: open another session, or wait for the removal to finish to start a new one under this id.`
        : `session ${file} is open in ${where}${pid === process.pid ? " (this process)" : ""}. ` +
          "One writer per session: close it there first (a lock left by a dead process on this machine is cleared automatically).") +
        (lockFile === undefined
          ? ""
          : ` A lock from another host or a container, whose processes spool cannot see, stays until you delete ${lockFile} — only once that process is surely gone.`),
    );
  }
}

export class SessionNotFoundError extends SpoolError {
  constructor(readonly what: string) {
    super("SPOOL_STORE_NOT_FOUND", `session not found: ${what}. Create it first, or check the id and the repository root.`);
  }
}

/**
 * A session file that holds no session: created, and its process stopped before it wrote the first
 * record (a SQLite file is created empty, then given its schema). Read as it is, never written to.
 */
export class EmptySessionError extends SpoolError {
  constructor(readonly file: string) {
    super(
      "SPOOL_STORE_EMPTY",
      `${file} holds no session: it is empty, as a process that stopped before its first write leaves it. It was left as it is; delete its directory if you do not need it.`,
    );
  }
}

export class SessionExistsError extends SpoolError {
  constructor(readonly what: string) {
    super("SPOOL_STORE_EXISTS", `session already exists: ${what}. Open it instead, or pick another id.`);
  }
}

export class SessionIdError extends SpoolError {
  constructor(id: unknown, rule = "use 1–128 characters from [A-Za-z0-9._-], not starting with '.' or '-'") {
    super("SPOOL_STORE_SESSION_ID", `invalid session id ${JSON.stringify(id)}: ${rule}.`);
  }
}

export class UnsupportedFormatError extends SpoolError {
  constructor(
    readonly file: string,
    version: unknown,
  ) {
    super(
      "SPOOL_STORE_FORMAT",
      `${file} uses format version ${JSON.stringify(version)}, which this spool does not read (it reads version 1). Upgrade spool to open it.`,
    );
  }
}

/** The session root or a session directory cannot be created (not writable, not a directory, /proc…). */
export class SessionDirError extends SpoolError {
  constructor(
    readonly dir: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super("SPOOL_STORE_DIR", `cannot create ${dir}: ${reason}. Choose a writable directory (e.g. --root DIR).`, options);
  }
}
