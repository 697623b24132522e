// Every failure the store reports is one of these: a stable `code` for callers to branch on and a
// message that says what was wrong and what to do about it.

export class ScopeIdError extends Error {
  readonly code = "SPOOL_STORE_SCOPE_ID";
  constructor(detail: string) {
    super(`invalid ephemeral scope id: ${detail}. Use a non-empty, well-formed string whose encodeURIComponent form is at most 180 characters (e.g. an operation id).`);
    this.name = "ScopeIdError";
  }
}

export class AddressError extends Error {
  readonly code = "SPOOL_STORE_ADDRESS";
  constructor(detail: string) {
    super(`invalid storage address: ${detail}. Namespaces are non-empty strings, keys are strings, both well-formed Unicode.`);
    this.name = "AddressError";
  }
}

export class WriteError extends Error {
  readonly code = "SPOOL_STORE_WRITE";
  constructor(detail: string) {
    super(`invalid write: ${detail}`);
    this.name = "WriteError";
  }
}

/** A transaction touched more than one scope; nothing was written. */
export class MixedScopeError extends Error {
  readonly code = "SPOOL_STORE_MIXED_SCOPE";
  constructor(detail: string) {
    super(
      `a transaction must stay in one scope (${detail}); nothing was written. ` +
        "Commit session writes (and retireScope) separately from ephemeral writes, one ephemeral scope id per transaction.",
    );
    this.name = "MixedScopeError";
  }
}

export class ReadOptionsError extends Error {
  readonly code = "SPOOL_STORE_READ_OPTIONS";
  constructor(detail: string) {
    super(`invalid list read options: ${detail}`);
    this.name = "ReadOptionsError";
  }
}

export class StoreClosedError extends Error {
  readonly code = "SPOOL_STORE_CLOSED";
  constructor(what: string) {
    super(`cannot ${what}: the store is closed. Open it again to keep using the session.`);
    this.name = "StoreClosedError";
  }
}

/** A write or fsync hit an I/O error that leaves the log in an unknown state. */
export class StoreFailedError extends Error {
  readonly code = "SPOOL_STORE_FAILED";
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(
      `an I/O error left ${file} in an unknown state (${String((cause as Error)?.message ?? cause)}). ` +
        "The store refuses further writes; close it and reopen the session, which repairs a torn tail.",
    );
    this.name = "StoreFailedError";
  }
}

/** Damage that is not a crash signature (anything but the final line), or a file that is not ours. */
export class CorruptSessionError extends Error {
  readonly code = "SPOOL_STORE_CORRUPT";
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
    options: { readonly repairable?: boolean } = {},
  ) {
    super(
      `${file}:${line}: ${detail}. This is damage a crash cannot cause, so the session was not opened; ` +
        (options.repairable
          ? "restore the file from a backup, or run `spool repair SESSION` to cut the log back to its last good line (the cut lines are kept beside it in a .damaged file)."
          : "restore the file from a backup or move it aside (spool never rewrites a corrupt log)."),
    );
    this.name = "CorruptSessionError";
  }
}

export class SessionLockedError extends Error {
  readonly code = "SPOOL_STORE_LOCKED";
  constructor(
    readonly file: string,
    readonly pid: number,
    readonly host: string,
  ) {
    super(
      `session ${file} is open in process ${pid}${host ? ` on ${host}` : ""}${pid === process.pid ? " (this process)" : ""}. ` +
        "One writer per session: close it there first (a lock left by a dead process is cleared automatically).",
    );
    this.name = "SessionLockedError";
  }
}

export class SessionNotFoundError extends Error {
  readonly code = "SPOOL_STORE_NOT_FOUND";
  constructor(readonly what: string) {
    super(`session not found: ${what}. Create it first, or check the id and the repository root.`);
    this.name = "SessionNotFoundError";
  }
}

export class SessionExistsError extends Error {
  readonly code = "SPOOL_STORE_EXISTS";
  constructor(readonly what: string) {
    super(`session already exists: ${what}. Open it instead, or pick another id.`);
    this.name = "SessionExistsError";
  }
}

export class SessionIdError extends Error {
  readonly code = "SPOOL_STORE_SESSION_ID";
  constructor(id: unknown, rule = "use 1–128 characters from [A-Za-z0-9._-], not starting with '.' or '-'") {
    super(`invalid session id ${JSON.stringify(id)}: ${rule}.`);
    this.name = "SessionIdError";
  }
}

export class UnsupportedFormatError extends Error {
  readonly code = "SPOOL_STORE_FORMAT";
  constructor(
    readonly file: string,
    version: unknown,
  ) {
    super(`${file} uses format version ${JSON.stringify(version)}, which this spool does not read (it reads version 1). Upgrade spool to open it.`);
    this.name = "UnsupportedFormatError";
  }
}
