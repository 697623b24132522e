// The bounded view over cleaned text: a working buffer of committed lines plus the open line.
// Tail keeps a rolling buffer of at least 2×maxBytes UTF-16 units (every unit is at least one UTF-8
// byte, so that always covers a maxBytes view) and trims it back when it passes 4×maxBytes, so the
// copy cost per byte stays constant. Head stops appending once the view can no longer grow.
import type { CaptureLimits } from "./types.js";
import { utf8Length, utf8Prefix, utf8Suffix } from "./utf8.js";

export interface OpenLine {
  readonly text: string;
  readonly bytes: number;
  /** Bytes of the last completed line (used when the view ends in a partial line). */
  readonly lastCompletedBytes: number;
}

export interface WindowView {
  readonly text: string;
  readonly outputLines: number;
  readonly outputBytes: number;
  readonly lastLinePartial: boolean;
  readonly lastLineBytes?: number;
}

export function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.length > 0 && !text.endsWith("\n") ? n + 1 : n;
}

export class BoundedWindow {
  committedBytes = 0;
  committedLines = 0;
  private buf = "";
  /** Tail: the buffer's first line lost its start in a trim. */
  private startsMidLine = false;
  /** Head: nothing more can enter the view. */
  private full = false;
  private headLines = 0;
  /** Head: cleaned bytes of the first line, tracked until it completes. */
  private firstLineBytes = 0;
  private firstLineDone = false;

  constructor(private readonly limits: CaptureLimits) {}

  /** Completed lines (text ends with a newline). */
  append(text: string, bytes: number, lines: number): void {
    this.committedBytes += bytes;
    this.committedLines += lines;
    if (this.limits.retain === "tail") this.appendTail(text);
    else this.appendHead(text, bytes);
  }

  view(open: OpenLine): WindowView {
    return this.limits.retain === "tail" ? this.viewTail(open) : this.viewHead(open);
  }

  private appendTail(text: string): void {
    this.buf += text;
    const keep = 2 * this.limits.maxBytes;
    if (this.buf.length <= 2 * keep) return;
    const cutAt = this.buf.length - keep;
    const nl = this.buf.lastIndexOf("\n", cutAt - 1);
    if (nl >= 0) {
      this.buf = this.buf.slice(nl + 1);
      this.startsMidLine = false;
    } else {
      const c = this.buf.charCodeAt(cutAt);
      this.buf = this.buf.slice(c >= 0xdc00 && c <= 0xdfff ? cutAt + 1 : cutAt);
      this.startsMidLine = true;
    }
  }

  private appendHead(text: string, bytes: number): void {
    if (!this.firstLineDone) {
      const nl = text.indexOf("\n");
      if (nl === -1) this.firstLineBytes += bytes;
      else {
        this.firstLineBytes += utf8Length(text.slice(0, nl));
        this.firstLineDone = true;
      }
    }
    if (this.full) return;
    // Past maxBytes units the text is past maxBytes bytes: nothing further can be shown.
    const room = this.limits.maxBytes + 1 - this.buf.length;
    this.buf += text.length > room ? text.slice(0, room) : text;
    this.headLines += countLines(text);
    if (this.buf.length > this.limits.maxBytes || this.headLines > this.limits.maxLines) this.full = true;
  }

  private viewTail(open: OpenLine): WindowView {
    const s = this.buf + open.text;
    const { maxLines, maxBytes } = this.limits;
    // Start of the maxLines-th line from the end.
    let start = 0;
    let pos = s.endsWith("\n") ? s.length - 1 : s.length;
    for (let found = 0; pos > 0; ) {
      const nl = s.lastIndexOf("\n", pos - 1);
      if (nl === -1) break;
      if (++found === maxLines) {
        start = nl + 1;
        break;
      }
      pos = nl;
    }
    let bytes = utf8Length(s.slice(start));
    // Drop whole lines from the front until the bytes fit; never the last line.
    while (bytes > maxBytes) {
      const nl = s.indexOf("\n", start);
      if (nl === -1 || nl === s.length - 1) break;
      bytes -= utf8Length(s.slice(start, nl + 1));
      start = nl + 1;
    }
    let text = s.slice(start);
    const lastLineBytes = open.text.length > 0 ? open.bytes : open.lastCompletedBytes;
    if (bytes > maxBytes || (start === 0 && this.startsMidLine && !/\n./s.test(text))) {
      // One line bigger than the whole window: keep its end.
      text = utf8Suffix(text, maxBytes);
      return { text, outputLines: countLines(text), outputBytes: utf8Length(text), lastLinePartial: true, lastLineBytes };
    }
    return { text, outputLines: countLines(text), outputBytes: bytes, lastLinePartial: false };
  }

  private viewHead(open: OpenLine): WindowView {
    const s = this.full ? this.buf : this.buf + open.text;
    const { maxLines, maxBytes } = this.limits;
    let end = s.length;
    let pos = 0;
    for (let k = 0; k < maxLines; k++) {
      const nl = s.indexOf("\n", pos);
      if (nl === -1) {
        pos = s.length;
        break;
      }
      pos = nl + 1;
    }
    end = pos;
    let text = s.slice(0, end);
    const fitting = utf8Prefix(text, maxBytes);
    if (fitting.length < text.length) {
      const nl = fitting.lastIndexOf("\n");
      if (nl >= 0) text = fitting.slice(0, nl + 1);
      else {
        const lastLineBytes = this.firstLineDone ? this.firstLineBytes : this.firstLineBytes + open.bytes;
        return {
          text: fitting,
          outputLines: countLines(fitting),
          outputBytes: utf8Length(fitting),
          lastLinePartial: true,
          lastLineBytes,
        };
      }
    }
    return { text, outputLines: countLines(text), outputBytes: utf8Length(text), lastLinePartial: false };
  }
}
