// UTF-8 byte arithmetic: cutting strings by byte counts without splitting a code point (a split surrogate pair
// becomes U+FFFD and makes some provider APIs reject the request).
import { Buffer } from "node:buffer";

export const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
export const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;
const isContinuation = (b: number): boolean => (b & 0xc0) === 0x80;

/** The longest prefix of `s` whose UTF-8 encoding is at most `maxBytes`. */
export function utf8Prefix(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  // Each UTF-16 unit is at least one byte, so the first maxBytes units hold every candidate.
  let head = s.length > maxBytes ? s.slice(0, maxBytes) : s;
  if (isHighSurrogate(head.charCodeAt(head.length - 1))) head = head.slice(0, -1);
  const buf = Buffer.from(head, "utf8");
  if (buf.length <= maxBytes) return head;
  let end = maxBytes;
  while (end > 0 && isContinuation(buf[end]!)) end--;
  return buf.toString("utf8", 0, end);
}

/** The longest suffix of `s` whose UTF-8 encoding is at most `maxBytes`. */
export function utf8Suffix(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  let tail = s.length > maxBytes ? s.slice(s.length - maxBytes) : s;
  if (isLowSurrogate(tail.charCodeAt(0))) tail = tail.slice(1);
  const buf = Buffer.from(tail, "utf8");
  if (buf.length <= maxBytes) return tail;
  let start = buf.length - maxBytes;
  while (start < buf.length && isContinuation(buf[start]!)) start++;
  return buf.toString("utf8", start);
}

// Buffer is imported above, not read from the global: in Node the global `Buffer` is a getter, and
// calling it on every count was ~2% of a sink write.
export const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8");

/** Bytes at the end of `buf` that begin a UTF-8 sequence the buffer does not complete. */
export function trailingPartial(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back]!;
    if (isContinuation(b)) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/** Continuation bytes (10xxxxxx) at the start of `buf`, up to 3 (the most a character can need). */
export function leadingContinuations(buf: Buffer): number {
  let k = 0;
  while (k < 3 && k < buf.length && isContinuation(buf[k]!)) k++;
  return k;
}
