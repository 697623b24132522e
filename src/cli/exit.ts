// How a command ends, in one place: exit codes by error class and the one-line message a user sees.
//   0 ok · the command's own status for `run` · 1 runtime failure · 2 usage or bad input
//   124 after `run --timeout` (as GNU timeout) · 130 after Ctrl-C.
// No stack trace reaches a user (SPOOL_DEBUG=1 prints it for errors that are not spool's own).
import { CaptureError } from "../capture/index.js";
import { ConfigError, FormatError, RecallError } from "../context/index.js";
import { printableText, SpoolError } from "../errors/index.js";
import { EXIT } from "./exit-codes.js";
import { SessionIdError } from "../store/index.js";
import { SessionLookupError } from "./session-catalog.js";
import { UsageError } from "./usage-error.js";

export { EXIT };

/** Bad input: the user can fix the call. Everything else that fails is a runtime failure. */
function isBadInput(err: unknown): boolean {
  return (
    err instanceof UsageError ||
    err instanceof SessionLookupError ||
    err instanceof SessionIdError ||
    err instanceof FormatError ||
    err instanceof ConfigError ||
    (err instanceof RecallError && err.code !== "SPOOL_RECALL_NOT_FOUND") ||
    (err instanceof CaptureError && err.code === "SPOOL_CAPTURE_OPTIONS")
  );
}

export function exitCodeFor(err: unknown): number {
  return isBadInput(err) ? EXIT.usage : EXIT.failure;
}

/** process.cwd() in a directory removed since the shell entered it: Node says only "ENOENT: …, uv_cwd". */
function isGoneCwd(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === "ENOENT" && (err as NodeJS.ErrnoException).syscall === "uv_cwd";
}

export function errorLine(command: string | undefined, err: unknown): string {
  const prefix = command ? `spool ${command}` : "spool";
  const message = isGoneCwd(err)
    ? "the current directory no longer exists (it was removed); cd to a directory that exists and run it again"
    : err instanceof Error
      ? err.message
      : String(err);
  const hint = err instanceof UsageError && err.help ? `\nRun 'spool ${command ? `${command} ` : ""}--help' for usage.` : "";
  const debug = process.env.SPOOL_DEBUG && err instanceof Error && !(err instanceof SpoolError) ? `\n${err.stack}` : "";
  // The message may quote what the user or a model typed (a flag, a session id, a path): printed as
  // text, never as terminal escapes.
  return `${prefix}: ${printableText(message)}${hint}${debug}\n`;
}
