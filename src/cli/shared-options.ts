// Options several commands share, declared once so their names and help read the same everywhere.
import type { OptionSpec } from "./command.js";

export const ROOT = { type: "string", value: "DIR", help: "spool directory (default .spool); sessions live in DIR/sessions" } as const satisfies OptionSpec;
export const JSON_OUTPUT = { type: "boolean", help: "print one JSON document instead of text" } as const satisfies OptionSpec;
