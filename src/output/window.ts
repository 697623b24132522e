// Agent-side windowing of the sink's text block, with the same rules the capture layer applies at the
// source: `tail` keeps whole lines from the end (a rolling window), `head` keeps the start and stops.
// Sizes are UTF-8 bytes and lines; a cut never splits a code point.
import { countLines, utf8Length as byteLength, utf8Prefix, utf8Suffix } from "../capture/index.js";

export interface Fit {
  readonly text: string;
  /** True when something was dropped (tail) or refused (head). */
  readonly cut: boolean;
  readonly by: "bytes" | "lines" | null;
}

/** Keep the end of `text` within the limits, dropping whole lines from the front. */
export function fitTail(text: string, maxBytes: number, maxLines: number): Fit {
  let bytes = byteLength(text);
  let lines = countLines(text);
  if (bytes <= maxBytes && lines <= maxLines) return { text, cut: false, by: null };
  const by = lines > maxLines ? "lines" : "bytes";
  let start = 0;
  while ((bytes > maxBytes || lines > maxLines) && start < text.length) {
    const nl = text.indexOf("\n", start);
    if (nl < 0 || nl === text.length - 1) break; // the last line: cut inside it below
    bytes -= byteLength(text.slice(start, nl + 1));
    lines--;
    start = nl + 1;
  }
  let kept = text.slice(start);
  if (byteLength(kept) > maxBytes) kept = utf8Suffix(kept, maxBytes);
  return { text: kept, cut: true, by };
}

/** Append `add` to `text` as far as the limits allow (whole lines when a line boundary is near). */
export function fitHead(text: string, add: string, maxBytes: number, maxLines: number): Fit {
  const joined = text + add;
  const bytes = byteLength(joined);
  const lines = countLines(joined);
  if (bytes <= maxBytes && lines <= maxLines) return { text: joined, cut: false, by: null };
  const by = lines > maxLines ? "lines" : "bytes";
  let end = 0;
  let used = 0;
  for (let n = 0; n < maxLines; n++) {
    const nl = joined.indexOf("\n", end);
    if (nl < 0) break;
    const lineBytes = byteLength(joined.slice(end, nl + 1));
    if (used + lineBytes > maxBytes) break;
    used += lineBytes;
    end = nl + 1;
  }
  let kept = joined.slice(0, end);
  if (end === 0) kept = utf8Prefix(joined, maxBytes); // a single line bigger than the window
  if (kept.length < text.length) kept = text; // never take back what was already shown
  return { text: kept, cut: true, by };
}
