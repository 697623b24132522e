// Errors a stream consumer may see, each a SpoolError with a stable code. Anything else thrown by
// decode/apply is a TypeError (a malformed tuple: a bug in the producer, not a state to recover from).
import { SpoolError } from "../errors/index.js";
import type { Path, Seg } from "./ops.js";

export class PathError extends SpoolError {
  constructor(
    readonly path: Path | number,
    detail = "",
  ) {
    super(
      "SPOOL_DELTA_PATH",
      `unresolvable path: ${JSON.stringify(path)}${detail ? ` (${detail})` : ""}. ` +
        "The batch does not fit this replica; discard the replica and decoder and resume from the next base batch.",
    );
  }
}

export class UnsafePathError extends SpoolError {
  constructor(
    readonly segment: Seg,
    detail = "",
  ) {
    super(
      "SPOOL_DELTA_UNSAFE_PATH",
      `unsafe path segment ${JSON.stringify(segment)}${detail ? ` (${detail})` : ""}: ` +
        "segments must be non-negative integer indices or strings other than __proto__, constructor and prototype.",
    );
  }
}

/** Thrown by the tracker when state would stop being plain JSON (Map, Date, function, cycle, NaN, …). */
export class NotJsonError extends SpoolError {
  constructor(
    readonly path: Path,
    what: string,
  ) {
    super(
      "SPOOL_DELTA_NOT_JSON",
      `cannot track ${what} at ${JSON.stringify(path)}: tracked state must be plain JSON ` +
        "(objects, arrays, strings, finite numbers, booleans, null). Convert it first (e.g. a Map to an object, a Date to an ISO string).",
    );
  }
}
