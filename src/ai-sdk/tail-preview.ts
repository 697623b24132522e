// What a preliminary tool result carries of the output so far: its last lines, not the whole view.
// The AI SDK hands each preliminary to a UI message stream, and a running command's view is up to
// 50 KiB: one per batch of output (the harness paces them ≥ 100 ms apart) sent 24.2 MB over a 60 s
// command printing 20 lines a second. A UI shows the end of a running command; the final result still
// carries the whole bounded output.
import { headTail } from "../context/index.js";

/** At most this many lines of the output so far… */
export const PREVIEW_LINES = 20;
/** …and at most this many chars (JS string length), cut at a line start where one is near. */
export const PREVIEW_CHARS = 2048;

/** The last PREVIEW_LINES lines of `text`, at most PREVIEW_CHARS chars; a surrogate pair is never split. */
export function tailPreview(text: string): string {
  const { tail } = headTail(text, 0, PREVIEW_CHARS);
  // A newline that ends the text opens no line of its own.
  let start = tail.length - (tail.endsWith("\n") ? 1 : 0);
  for (let n = 0; n < PREVIEW_LINES; n++) {
    const nl = start > 0 ? tail.lastIndexOf("\n", start - 1) : -1;
    if (nl < 0) return tail;
    start = nl;
  }
  return tail.slice(start + 1);
}
