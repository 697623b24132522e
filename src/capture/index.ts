// spool/capture — running a shell command and owning its output at the source: spawning in a
// process group, timeouts and aborts, streaming UTF-8 decode, cleaning (ANSI, CR frames, backspace,
// control characters, long lines, binary), the bounded head/tail view with truncation metadata,
// update kinds, the adaptive publisher, and the lossless spill with backpressure.
// A leaf layer: it must not import anything else from spool (it knows nothing of ops, storage or models).
// The header's list, plus: `start` (exec as a handle: view, input, kill), `prepareExec` (for a
// process about to run its first command) and the terminal size of `pty` runs and of the terminal model.
export { exec, prepareExec, start, type RunningCommand } from "./exec.js";
export { fileLimitAdvice } from "./file-limit.js";
export { DEFAULT_COLS, DEFAULT_ROWS, type TerminalSize } from "./output-capture.js";
export { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, DEFAULT_MAX_LINE_BYTES, MAX_WINDOW_BYTES, MAX_WINDOW_LINES, resolveLimits } from "./limits.js";
export { OutputCapture } from "./output-capture.js";
export { AdaptivePublisher, type PublisherOptions } from "./publisher.js";
export { applyUpdate, deriveUpdate, measureUpdate, metadataOf } from "./updates.js";
export { describeTruncation, formatBytes } from "./describe.js";
export { isHighSurrogate, isLowSurrogate, utf8Length, utf8Prefix, utf8Suffix } from "./utf8.js";
export { countLines } from "./window.js";
export { isTimeoutAbort } from "./timeout-abort.js";
export { incompleteTailStart } from "./ansi.js";
export { CallbackError, CaptureError, InputClosedError, InvalidOptionsError, MissingCwdError, SpawnError, SpillError, SpillLimitError } from "./errors.js";
export type {
  CaptureLimits,
  CaptureMetadata,
  CaptureUpdate,
  CaptureView,
  ExecOptions,
  ExecResult,
  Retain,
  SpillOptions,
  TruncatedBy,
  Truncation,
} from "./types.js";
