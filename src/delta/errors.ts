// Errors a stream consumer may see. Anything else thrown by decode/apply is a TypeError (malformed tuple).
import type { Path, Seg } from "./ops.js";

export class PathError extends Error {
  readonly code = "SPOOL_DELTA_PATH";
  constructor(
    readonly path: Path | number,
    detail = "",
  ) {
    super(
      `unresolvable path: ${JSON.stringify(path)}${detail ? ` (${detail})` : ""}. ` +
        "The batch does not fit this replica; discard the replica and decoder and resume from the next base batch.",
    );
    this.name = "PathError";
  }
}

export class UnsafePathError extends Error {
  readonly code = "SPOOL_DELTA_UNSAFE_PATH";
  constructor(
    readonly segment: Seg,
    detail = "",
  ) {
    super(
      `unsafe path segment ${JSON.stringify(segment)}${detail ? ` (${detail})` : ""}: ` +
        "segments must be non-negative integer indices or strings other than __proto__, constructor and prototype.",
    );
    this.name = "UnsafePathError";
  }
}

/** Thrown by the tracker when state would stop being plain JSON (Map, Date, function, cycle, NaN, …). */
export class NotJsonError extends TypeError {
  readonly code = "SPOOL_DELTA_NOT_JSON";
  constructor(
    readonly path: Path,
    what: string,
  ) {
    super(
      `cannot track ${what} at ${JSON.stringify(path)}: tracked state must be plain JSON ` +
        "(objects, arrays, strings, finite numbers, booleans, null). Convert it first (e.g. a Map to an object, a Date to an ISO string).",
    );
    this.name = "NotJsonError";
  }
}
