// One page of a file for the read tool, streamed in one pass: from line `offset` (and character
// `column` of it) whole lines while they fit the bound, cleaned like command output. A first line
// whose rest does not fit is shown as a slice of it instead — as many characters as fit, never
// splitting a character — and the page says where the slice stops, so the next page starts there and
// every byte of the file stays reachable. A line is measured by what it shows: read from column 1,
// line `offset` streams into the page's own capture, so a line of `\r` progress frames (200 KB raw,
// one 80-char frame on a terminal) whose cleaned form fits is shown whole and the page goes on after
// it; only one whose cleaned form is over the bound too (minified JSON) comes in slices, which are
// measured on the raw line, as are columns. Memory: the bounded window (the capture caps its open
// line at the bound, so a line of frames is cleaned in it: 200 MB of them read in 1.2 s with V8's old
// space capped at 16 MB; 50 MB in 0.3 s, peak RSS 78 MB from 53 MB), plus one slice of the first line.
import { constants } from "node:fs";
import { open } from "node:fs/promises";
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

const NEWLINE = Buffer.from("\n");

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
  /** Lines in the file (a final line without a newline counts); for a binary page, only those read before it was judged so. */
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
  /** The rest is longer than the page's room in raw bytes: the page is a slice unless the line shows shorter. */
  over = false;

  constructor(
    column: number,
    private readonly room: number,
  ) {
    this.start = column - 1;
  }

  take(bytes: Buffer): void {
    this.add(this.decoder.write(bytes));
  }

  /**
   * The line ended (with a newline, or at the end of the file): its rest whole, when that fits the
   * room with the newline, or else the slice the page shows and the first character it leaves out.
   */
  finish(newline: boolean): { readonly rest: string; readonly nextColumn?: number } | undefined {
    this.add(this.decoder.end());
    if (this.start > this.chars) return undefined; // the column is past the end of the line
    if (!this.over && this.restBytes + (newline ? 1 : 0) <= this.room) return { rest: this.rest };
    // A rest of exactly `room` bytes with its newline: the whole rest is shown, and the next page
    // starts just past it (column = length + 1), at the newline.
    let slice = utf8Prefix(this.rest, this.room);
    // Never cut inside an escape sequence: cleaning strips only whole ones, so both halves would show
    // as text ("[31m"). The next page starts at its ESC instead.
    const open = incompleteTailStart(slice);
    if (open > 0) slice = slice.slice(0, open);
    return { rest: slice, nextColumn: this.start + 1 + slice.length };
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
    if (this.restBytes > this.room + 1 || part.length < s.length - from) this.over = true;
  }
}

export async function readPage(path: string, request: PageRequest): Promise<FilePage> {
  const { offset, limit, limits } = request;
  let capture = new OutputCapture(limits);
  const first = new FirstLine(request.column, limits.maxBytes);
  // From column 1, line `offset` streams into the page's capture as it is read: a line that fits
  // enters the page exactly as read, and one over the room in raw bytes is cleaned there as it goes
  // (its `\r` frames collapse to the last one). Once it is over the room both raw and cleaned it will
  // be a slice: the rest is not cleaned. (A later `\r` could still empty the open line: a line whose
  // one frame is over 50 KB comes in slices, as every long line did before.)
  let feeding = request.column === 1;
  let line = 1; // the line the next byte belongs to
  let size = 0;
  let lastByte = 10;
  const last = offset + limit - 1;
  let firstSeen = false;
  let nextColumn: number | undefined;
  let more = true; // lines after the first still go to the page (not after a slice)
  const takeFirst = (bytes: Buffer): void => {
    first.take(bytes);
    if (!feeding) return;
    capture.push(bytes);
    if (first.over && capture.truncatedBy !== null) feeding = false;
  };
  const finishFirst = (newline: boolean): void => {
    const shown = first.finish(newline);
    if (shown === undefined) {
      more = false;
      return;
    }
    if (shown.nextColumn === undefined || feeding) {
      // Read from column 1, the line is in the capture already; from a column, its rest goes in.
      if (!feeding) capture.push(Buffer.from(shown.rest));
      if (newline) capture.push(NEWLINE);
      // Over the room raw, its cleaned form fits: shown whole, and the page goes on.
      if (shown.nextColumn === undefined || capture.truncatedBy === null) return;
    }
    capture = new OutputCapture(limits);
    capture.push(Buffer.from(shown.rest));
    more = false;
    nextColumn = shown.nextColumn;
  };
  // The file as it is when the read begins: one still being written (`yes > f`, a live log) would
  // otherwise keep the read going for as long as the writer outpaces it. A size of 0 is no bound:
  // /proc files (/proc/self/status, /proc/meminfo) stat as 0 bytes and hold text, so one is read to its
  // end (a regular file empty at the stat that then grows fast is read as before this bound).
  // O_NONBLOCK: a kernel stream that stats as an empty regular file (/proc/kmsg) blocks a read until
  // something arrives, in libuv's thread pool where no abort reaches it, so a cancelled read stayed
  // stuck and `spool mcp` could not exit (not on stdin's end, nor on SIGTERM). Non-blocking, such a
  // read fails at once with EAGAIN; a regular file ignores the flag (and a FIFO's open does not block).
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const sizeAtStart = (await file.stat()).size;
    // A stream given a signal that is already aborted emits its AbortError on a later tick, after the
    // loop below has stopped listening: an uncaught 'error' that ended the process (the MCP server).
    request.signal?.throwIfAborted();
    // A file of unknown size is read on from its start without positions: a stream that cannot seek
    // fails a positional read (pread) with ESPIPE.
    const chunks = file.createReadStream({
      ...(sizeAtStart > 0 ? { start: 0, end: sizeAtStart - 1 } : {}),
      autoClose: false,
      ...(request.signal ? { signal: request.signal } : {}),
    }) as AsyncIterable<Buffer>;
    for await (const chunk of chunks) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) {
        if (line === offset) {
          takeFirst(chunk.subarray(start, nl));
          finishFirst(true);
        } else if (more && line > offset && line <= last) capture.push(chunk.subarray(start, nl + 1));
        line++;
        start = nl + 1;
      }
      if (start < chunk.length) {
        if (line === offset) {
          takeFirst(chunk.subarray(start));
          firstSeen = true;
        } else if (more && line > offset && line <= last) capture.push(chunk.subarray(start));
      }
      size += chunk.length;
      if (chunk.length > 0) lastByte = chunk[chunk.length - 1]!;
      // A binary page shows nothing but the file's size, known from the stat: reading on only counted
      // lines nobody is told (a 4 GB disk image took 25 s to be called binary). A /proc file (size 0
      // at the stat) is read to its end, for its size.
      if (capture.binary && sizeAtStart > 0) {
        size = sizeAtStart;
        break;
      }
    }
  } finally {
    await file.close();
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
