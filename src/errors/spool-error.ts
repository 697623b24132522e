// The one error base every spool error extends. `code` is stable (`SPOOL_<LAYER>_<WHAT>`) for
// callers to branch on; the message says what was wrong and what to do. The CLI maps errors to exit
// codes by class (`instanceof`), never by matching code strings.

export class SpoolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
