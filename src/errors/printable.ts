// Text a message quotes from a user, a model or a file, made safe to print on a terminal: control
// characters (C0 but newline and tab, DEL, C1, the bidirectional marks, overrides and isolates that
// reorder what a terminal shows, U+2028/2029) are shown as \xNN / \uNNNN escapes, so an escape
// sequence in an error's argument is seen as text and cannot clear, move or recolour the screen.

const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g;

/** `text` with its control characters escaped; newlines and tabs kept. */
export function printableText(text: string): string {
  return text.replace(CONTROL, escapeControl);
}

/** One control character as the escape printableText shows it: \xNN up to U+00FF, \uNNNN above. */
export function escapeControl(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}
