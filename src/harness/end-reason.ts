// The one line a session record keeps of why its run ended (`reason`), from text the caller gives —
// often an error's message, which may carry a provider's error body: several lines, JSON, an HTML
// page, terminal escapes. `spool sessions --json` and `spool inspect` print it as is, so it is made one
// short, printable line here, once, before it is stored: whitespace runs (newlines, tabs) become one
// space; other control characters (C0, DEL, C1, the bidirectional overrides and isolates that reorder
// what a terminal shows, U+2028/2029) are shown as \xNN / \uNNNN rather than dropped, so an escape
// sequence stays visible as one; a lone surrogate becomes U+FFFD (the UTF-8 log would do the same);
// past MAX_REASON_CHARS it is cut, at a code point, and ends in "…".

/** The most a stored reason holds, in JS string length (UTF-16 units), the "…" included. */
export const MAX_REASON_CHARS = 300;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CONTROL = /[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g;

/** `text` as one printable line of at most MAX_REASON_CHARS; undefined when nothing is left of it. */
export function endReason(text: string): string | undefined {
  const line = text
    .replace(LONE_SURROGATE, "\uFFFD")
    .replace(/\s+/g, " ")
    .trim()
    .replace(CONTROL, (c: string) => {
      const code = c.charCodeAt(0);
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
    });
  if (line === "") return undefined;
  if (line.length <= MAX_REASON_CHARS) return line;
  let end = MAX_REASON_CHARS - 1;
  // A surrogate pair is kept whole or left out.
  if (/[\uD800-\uDBFF]/.test(line[end - 1]!)) end--;
  return `${line.slice(0, end)}…`;
}
