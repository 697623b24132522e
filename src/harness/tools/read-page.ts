// One page of a file for the read tool, streamed in one pass: from line `offset` (and character
// `column` of it) whole lines while they fit the bound, cleaned like command output. A first line
// whose rest does not fit is shown as a slice of it instead — as many characters as fit, never
// splitting a character — and the page says where the slice stops, so the next page starts there and
// every byte of the file stays reachable. Memory: the bounded window, plus one slice of the first line.
import { createReadStream } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import {
  incompleteTailStart,
  isHighSurrogate,
  isLowSurrogate,
  OutputCapture,
  utf8Length,
  utf8Prefix,
  type CaptureLimits,
  type CaptureView,
} from "../../capture/index.js";

export interface PageRequest {
  /** First line, 1-based. */
  readonly offset: number;
  /** First character of line `offset`, 1-based (characters are UTF-16 code units of the decoded line). */
  readonly column: number;
  /** Lines to show. */
  readonly limit: number;
  /** The page's bound (head): its maxBytes is also the longest slice of a line. */
  readonly limits: CaptureLimits;
  readonly signal?: AbortSignal;
}

export interface FilePage {
  readonly view: CaptureView;
  /** Bytes in the file. */
  readonly size: number;
  /** Lines in the file (a final line without a newline counts). */
  readonly totalLines: number;
  /** Characters of line `offset` (0 when the file has no such line). */
  readonly lineChars: number;
  /** The first character shown: the asked column, or one before it when that falls inside a surrogate pair. */
  readonly column: number;
  /** Set when the page is a slice of line `offset`: the first character it leaves out. */
  readonly nextColumn?: number;
}

/** Line `offset` as it streams by: its length in characters, and what of it (from the column on) the page shows. */
class FirstLine {
  chars = 0;
  /** 0-based: the first character shown. */
  start: number;
  private readonly decoder = new StringDecoder("utf8");
  /** The line from `start` on, kept up to a little more than fits (each character is at least one byte). */
  private rest = "";
  private restBytes = 0;
  /** The rest is longer than the page's room: the page is a slice. */
  private over = false;
  /** Column 1: the line's own bytes while it may fit, so a line that fits enters the page exactly as read. */
  private raw: Buffer[] = [];

  constructor(
    column: number,
    private readonly room: number,
  ) {
    this.start = column - 1;
  }

  take(bytes: Buffer): void {
    // Copied: the stream's chunks are not promised to stay unchanged after they are handed on.
    if (this.start === 0 && !this.over) this.raw.push(Buffer.from(bytes));
    this.add(this.decoder.write(bytes));
  }

  /** The line ended (with a newline, or at the end of the file): what the page shows of it. */
  finish(newline: boolean): { readonly bytes: Buffer[]; readonly nextColumn?: number } | undefined {
    this.add(this.decoder.end());
    if (this.start > this.chars) return undefined; // the column is past the end of the line
    if (!this.over && this.restBytes + (newline ? 1 : 0) <= this.room) {
      const nl = newline ? [Buffer.from("\n")] : [];
      return { bytes: this.start === 0 ? [...this.raw, ...nl] : [Buffer.from(this.rest), ...nl] };
    }
    // A rest of exactly `room` bytes with its newline: the whole rest is shown, and the next page
    // starts just past it (column = length + 1), at the newline.
    let slice = utf8Prefix(this.rest, this.room);
    // Never cut inside an escape sequence: cleaning strips only whole ones, so both halves would show
    // as text ("[31m"). The next page starts at its ESC instead.
    const open = incompleteTailStart(slice);
    if (open > 0) slice = slice.slice(0, open);
    return { bytes: [Buffer.from(slice)], nextColumn: this.start + 1 + slice.length };
  }

  private add(s: string): void {
    if (s === "") return;
    const at = this.chars;
    this.chars += s.length;
    if (this.over || this.chars <= this.start) return;
    let from = Math.max(0, this.start - at);
    // The decoder hands out whole characters, so a pair is never split across two strings; a column
    // inside one starts at the pair.
    if (from > 0 && isLowSurrogate(s.charCodeAt(from)) && isHighSurrogate(s.charCodeAt(from - 1))) {
      from--;
      this.start--;
    }
    const want = this.room + 2 - this.rest.length;
    const part = s.slice(from, from + want);
    this.rest += part;
    this.restBytes += utf8Length(part);
    if (this.restBytes > this.room + 1 || part.length < s.length - from) {
      this.over = true;
      this.raw = [];
    }
  }
}

export async function readPage(path: string, request: PageRequest): Promise<FilePage> {
  const { offset, limit, limits } = request;
  const capture = new OutputCapture(limits);
  const first = new FirstLine(request.column, limits.maxBytes);
  let line = 1; // the line the next byte belongs to
  let size = 0;
  let lastByte = 10;
  const last = offset + limit - 1;
  let firstSeen = false;
  let nextColumn: number | undefined;
  let more = true; // lines after the first still go to the page (not after a slice)
  const finishFirst = (newline: boolean): void => {
    const shown = first.finish(newline);
    for (const bytes of shown?.bytes ?? []) capture.push(bytes);
    if (shown === undefined || shown.nextColumn !== undefined) more = false;
    nextColumn = shown?.nextColumn;
  };
  for await (const chunk of createReadStream(path, request.signal ? { signal: request.signal } : {}) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) {
      if (line === offset) {
        first.take(chunk.subarray(start, nl));
        finishFirst(true);
      } else if (more && line > offset && line <= last) capture.push(chunk.subarray(start, nl + 1));
      line++;
      start = nl + 1;
    }
    if (start < chunk.length) {
      if (line === offset) {
        first.take(chunk.subarray(start));
        firstSeen = true;
      } else if (more && line > offset && line <= last) capture.push(chunk.subarray(start));
    }
    size += chunk.length;
    if (chunk.length > 0) lastByte = chunk[chunk.length - 1]!;
  }
  // The file ends inside line `offset` (no newline after it).
  if (line === offset && firstSeen) finishFirst(false);
  capture.end();
  const totalLines = size === 0 ? 0 : lastByte === 10 ? line - 1 : line;
  return {
    view: capture.view(),
    size,
    totalLines,
    lineChars: first.chars,
    column: first.start + 1,
    ...(nextColumn !== undefined ? { nextColumn } : {}),
  };
}
