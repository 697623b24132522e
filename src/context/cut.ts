// Where to cut a text for a head + tail preview. Sizes are JS string length (UTF-16 code units).
// Rules: a cut never splits a surrogate pair; the head ends just after a newline when the last
// newline is in its second half; the tail starts just after a newline when the first one is in its
// first half. Upstream (chatcli) sliced bytes and could split a rune; we snap instead.

import { countLines, isHighSurrogate as isHigh, isLowSurrogate as isLow } from "../capture/index.js";

export { countLines };

/** Length of the head to keep when at most `max` units are wanted. */
export function headEnd(text: string, max: number): number {
  if (max >= text.length) return text.length;
  if (max <= 0) return 0;
  if (text.charCodeAt(max - 1) === 10) return max;
  const nl = text.lastIndexOf("\n", max - 1);
  if (nl >= 0 && nl + 1 > max / 2) return nl + 1;
  return isHigh(text.charCodeAt(max - 1)) && isLow(text.charCodeAt(max)) ? max - 1 : max;
}

/** Start index of the tail to keep when at most `max` units are wanted; never before `floor`. */
export function tailStart(text: string, max: number, floor = 0): number {
  let start = Math.max(floor, text.length - max);
  if (start >= text.length) return text.length;
  if (start === 0) return 0;
  if (text.charCodeAt(start - 1) === 10) return start;
  const nl = text.indexOf("\n", start);
  if (nl >= 0 && nl - start < (text.length - start) / 2) return nl + 1;
  if (isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start++;
  return start;
}

export interface HeadTail {
  readonly head: string;
  readonly tail: string;
  /** Exactly the number of units between head and tail. */
  readonly omitted: number;
}

/** Head and tail of `text`; the tail never overlaps the head. */
export function headTail(text: string, headMax: number, tailMax: number): HeadTail {
  const h = headEnd(text, headMax);
  const t = tailStart(text, tailMax, h);
  return { head: text.slice(0, h), tail: text.slice(t), omitted: t - h };
}

/** Number of lines: newlines + 1, except that a text ending in a newline does not open an empty last line. */
