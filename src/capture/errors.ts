// Errors exec can fail with. Each has a stable `code` and says what to do about it.
import { countOf, SpoolError } from "../errors/index.js";
import { fileLimitAdvice } from "./file-limit.js";
import { formatBytes } from "./describe.js";
import type { CaptureView } from "./types.js";
import { utf8Length } from "./utf8.js";

export class CaptureError extends SpoolError {
  /** The latest bounded view at the moment of failure, when there was one. */
  view: CaptureView | undefined;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** Thrown synchronously-ish (as a rejection) before anything is spawned. */
export class InvalidOptionsError extends CaptureError {
  constructor(what: string) {
    super("SPOOL_CAPTURE_OPTIONS", `invalid capture option: ${what}`);
  }
}

export class MissingCwdError extends CaptureError {
  constructor(readonly cwd: string) {
    super(
      "SPOOL_CAPTURE_CWD",
      `working directory ${JSON.stringify(cwd)} does not exist or is not a directory; ` + "create it first or pass an existing `cwd`. Nothing was spawned.",
    );
  }
}

export class SpawnError extends CaptureError {
  constructor(shell: string, cause: unknown, command?: string) {
    const limit = fileLimitAdvice(cause);
    super(
      "SPOOL_CAPTURE_SPAWN",
      (cause as NodeJS.ErrnoException | undefined)?.code === "E2BIG"
        ? `the command is too long to start (${Math.round(utf8Length(command ?? "") / 1024)} KiB; Linux takes at most 128 KiB in one argument): ` +
            "write it to a script file and run that. Nothing was spawned."
        : limit !== undefined
          ? `could not start ${JSON.stringify(shell)}: ${limit}. Nothing was spawned.`
          : `could not start ${JSON.stringify(shell)}: ${cause instanceof Error ? cause.message : String(cause)}. ` +
            "Check that the shell exists and is executable, or pass another `shell`.",
      { cause },
    );
  }
}

export class InputClosedError extends CaptureError {
  constructor(pty: boolean) {
    super(
      "SPOOL_CAPTURE_INPUT",
      pty
        ? "the command has finished, so its terminal takes no more input; start it again to interact with it."
        : 'the command\'s input is closed (it has finished, or was started without stdin: "pipe"); start it with stdin: "pipe" to write to it.',
    );
  }
}

export class CallbackError extends CaptureError {
  constructor(cause: unknown) {
    super(
      "SPOOL_CAPTURE_CALLBACK",
      `onUpdate threw: ${cause instanceof Error ? cause.message : String(cause)}. ` +
        "The process group was killed; fix the callback (it must not throw) and run the command again.",
      { cause },
    );
  }
}

export class SpillError extends CaptureError {
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(
      "SPOOL_CAPTURE_SPILL",
      `could not preserve complete output in ${JSON.stringify(path)}: ` +
        `${cause instanceof Error ? cause.message : String(cause)}. ` +
        "The process group was killed rather than return a lossy result; free disk space or pass another spill directory.",
      { cause },
    );
  }
}

/** The command printed past what its spill may take: `spill.maxBytes`, or the free space to leave. */
export class SpillLimitError extends CaptureError {
  constructor(
    readonly path: string,
    limit: { readonly maxBytes: number } | { readonly minFreeBytes: number; readonly freeBytes: number },
  ) {
    super(
      "SPOOL_CAPTURE_SPILL_LIMIT",
      "maxBytes" in limit
        ? `the command printed more than ${countOf(limit.maxBytes, "byte", "bytes", limit.maxBytes.toLocaleString("en-US"))}, the most its spill may keep (spill.maxBytes, --max-spill), so its process group ` +
            `was killed. What it printed up to then is in ${JSON.stringify(path)}. Have it print less (filter it, or write to a file of its own and ` +
            "read that in parts), or raise the limit."
        : `the disk holding ${JSON.stringify(path)} is down to ${formatBytes(limit.freeBytes)} free (spool leaves ${formatBytes(limit.minFreeBytes)}: ` +
            "spill.minFreeBytes, --min-free), so the command's process group was killed before its output filled the disk. " +
            "What it printed up to then is in that file. Free some space, limit what the command prints, or lower the reserve.",
    );
  }
}
