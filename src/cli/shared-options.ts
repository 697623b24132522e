// Options several commands share, declared once so their names and help read the same everywhere.
import { sessionsDir } from "../store/index.js";
import type { OptionSpec } from "./command.js";
import { checkDirectoryOption } from "./directory-option.js";

export const ROOT = {
  type: "string",
  value: "DIR",
  help: "spool directory (default .spool); sessions live in DIR/sessions",
  check: (value: string, flag: string) => checkDirectoryOption(value, flag, sessionsDir(value)),
} as const satisfies OptionSpec;

/** A directory-valued option: never empty, never a file. */
export const directoryOption = (help: string) => ({ type: "string", value: "DIR", help, check: checkDirectoryOption }) as const satisfies OptionSpec;
export const JSON_OUTPUT = { type: "boolean", help: "print one JSON document instead of text" } as const satisfies OptionSpec;

/** The largest window --max-bytes / --max-lines may ask for, wherever a command bounds bash's output. */
export { MAX_WINDOW_BYTES, MAX_WINDOW_LINES } from "../capture/index.js";

/** --max-spill, wherever bash runs commands: what a runaway command may print before it is stopped. */
export const MAX_SPILL = {
  type: "string",
  value: "N",
  help: "stop a command once it has printed N bytes (10M, 2G; its spill keeps them; default: no\nlimit, but a command is always stopped before it leaves the disk under 256 MiB free)",
} as const satisfies OptionSpec;
export const MAX_SPILL_BYTES = Number.MAX_SAFE_INTEGER;

/** --min-free: the free space a command's spill must leave on its disk. */
export const MIN_FREE = {
  type: "string",
  value: "N",
  help: "stop a command before its spill leaves under N bytes free on the disk\n(default 256M; 0 turns the check off)",
} as const satisfies OptionSpec;
