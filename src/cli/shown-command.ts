// A recorded command as the text reports show it (`spool sessions`, `spool inspect`): one printable
// line through the harness's endReason. The command is anyone's text (on a shared PostgreSQL store,
// another user's), and printed raw its escapes drove the reader's terminal and its newlines broke
// the table's rows; a record written by another program may hold no string at all, shown as "?".
// `--json` keeps the command as it was recorded.
import { endReason } from "../harness/index.js";

/** `command` on one line (whitespace runs as one space, controls escaped), cut to `maxChars` with "…". */
export function shownCommand(command: unknown, maxChars = Number.POSITIVE_INFINITY): string {
  return typeof command === "string" ? (endReason(command, maxChars) ?? "") : "?";
}
