// The one line a session record keeps of why its run ended (`reason`), from text the caller gives —
// often an error's message, which may carry a provider's error body: several lines, JSON, an HTML
// page, terminal escapes. `spool sessions --json` and `spool inspect` print it as is, so it is made one
// short, printable line here, once, before it is stored: whitespace runs (newlines, tabs) become one
// space; other control characters (C0, DEL, C1, the bidirectional marks, overrides and isolates that
// reorder what a terminal shows, U+2028/2029) are shown as \xNN / \uNNNN rather than dropped, so an
// escape sequence stays visible as one; a lone surrogate becomes U+FFFD (the UTF-8 log would do the
// same); past MAX_REASON_CHARS it is cut between two code points, never inside a pair or an escape,
// and ends in "…".

import { escapeControl } from "../errors/index.js";

/** The most a stored reason holds, in JS string length (UTF-16 units), the "…" included. */
export const MAX_REASON_CHARS = 300;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CONTROL = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/;

/**
 * `text` as one printable line of at most `maxChars` (MAX_REASON_CHARS by default); undefined when
 * nothing is left of it. The CLI's text reports show a recorded command through it too (`spool
 * sessions`, `spool inspect`): the command is anyone's text, and printed raw its escapes drove the
 * reader's terminal and its newlines broke the table's rows.
 */
export function endReason(text: string, maxChars = MAX_REASON_CHARS): string | undefined {
  const line = text.replace(LONE_SURROGATE, "\uFFFD").replace(/\s+/g, " ").trim();
  if (line === "") return undefined;
  // Code point by code point, so that a cut keeps an escape or a surrogate pair whole or leaves it out.
  const pieces: string[] = [];
  let length = 0;
  let cutAt = -1;
  for (const c of line) {
    const piece = CONTROL.test(c) ? escapeControl(c) : c;
    if (cutAt < 0 && length + piece.length > maxChars - 1) cutAt = pieces.length;
    pieces.push(piece);
    length += piece.length;
  }
  return length <= maxChars ? pieces.join("") : `${pieces.slice(0, cutAt).join("")}…`;
}
