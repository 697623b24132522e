// The bounded view over cleaned text, kept as UTF-8 bytes: committed lines arrive as Buffer pieces
// (straight from the pipe on the fast path, no decoding), the open line as a string. The pieces are
// copied into one buffer the window owns (the pipe's read buffer is reused for the next read): tail
// keeps at least the last 2×maxBytes and compacts in place once 4×maxBytes are held, so each byte is
// copied at most about twice and nothing is allocated per read; head stops taking bytes once the view
// can no longer grow.
// Text is only decoded when a view is built (at most ~10×/s), and that is also where the remaining
// control characters are removed: only from the views, never from the raw bytes (the spill keeps those).
import { Buffer } from "node:buffer";
import type { CaptureLimits } from "./types.js";
import { utf8Length } from "./utf8.js";

/** C0 controls except tab and newline, DEL, C1 controls, and the interlinear annotation marks. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]+/g;
const NL = 0x0a;
const isContinuation = (b: number): boolean => (b & 0xc0) === 0x80;

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

function finish(bytes: Buffer, partial: boolean, lastLineBytes: number): WindowView {
  const text = bytes.toString("utf8").replace(CONTROL, "");
  return {
    text,
    outputLines: countLines(text),
    outputBytes: utf8Length(text),
    lastLinePartial: partial,
    ...(partial ? { lastLineBytes } : {}),
  };
}

export class BoundedWindow {
  committedBytes = 0;
  committedLines = 0;
  /** The retained bytes are store[0, stored): grown on demand up to 4×maxBytes (head: maxBytes + 1). */
  private store: Buffer = Buffer.alloc(0);
  private stored = 0;
  /** Head: nothing more can enter the view. */
  private full = false;
  private headLines = 0;
  /** Head: cleaned bytes of the first line, tracked until it completes. */
  private firstLineBytes = 0;
  private firstLineDone = false;

  constructor(private readonly limits: CaptureLimits) {}

  /** Completed lines: `piece` ends with a newline and holds `lines` of them. */
  append(piece: Buffer, lines: number): void {
    this.committedBytes += piece.length;
    this.committedLines += lines;
    if (this.limits.retain === "tail") this.appendTail(piece);
    else this.appendHead(piece, lines);
  }

  /**
   * Takes the last `k` committed lines back out (tail only: a head window that stopped growing does
   * not hold them). The terminal model uses this to put the lines still on screen back under its
   * cursor when output starts to move it.
   *
   * Only lines that begin within the last 2×maxBytes − 1 committed bytes: the store always holds
   * those and the newline before each (it keeps at least the last 2×maxBytes), however the appends
   * fell. What it holds beyond them depends on the reads (where a compaction fell, a piece of
   * 2×maxBytes or more kept by its end), and a line that had lost its start there came back cut:
   * the terminal model redrew a different line, and the view depended on how the output was split
   * into reads (a newline, 15 `A`s, two newlines and `ESC [2A`, maxBytes 8: the screen got 14 `A`s
   * in one read, 15 in two).
   */
  takeBack(k: number): string {
    if (k <= 0 || this.limits.retain !== "tail" || this.committedLines === 0 || this.stored === 0) return "";
    const buf = this.store.subarray(0, this.stored);
    // The line after a newline at `nl` is taken back only if `nl` is at or past this.
    const floor = this.stored - 2 * this.limits.maxBytes;
    let start = buf.length;
    let found = 0;
    for (let pos = buf.length - 1; found < Math.min(k, this.committedLines); ) {
      const nl = pos > 0 ? buf.lastIndexOf(NL, pos - 1) : -1;
      if (nl < floor) break;
      found++;
      start = nl + 1;
      if (nl === -1) break;
      pos = nl;
    }
    const taken = buf.toString("utf8", start);
    this.committedBytes -= buf.length - start;
    this.committedLines -= found;
    this.stored = start;
    return taken;
  }

  view(open: OpenLine): WindowView {
    return this.limits.retain === "tail" ? this.viewTail(open) : this.viewHead(open);
  }

  /** Room for `bytes` in the store, keeping what it holds. */
  private reserve(bytes: number, most: number): void {
    if (bytes <= this.store.length) return;
    const grown = Buffer.allocUnsafe(Math.min(most, Math.max(bytes, 2 * this.store.length, 4096)));
    this.store.copy(grown, 0, 0, this.stored);
    this.store = grown;
  }

  private appendTail(piece: Buffer): void {
    const keep = 2 * this.limits.maxBytes;
    if (piece.length >= keep) {
      // One piece covers everything the view can show: keep its end.
      this.reserve(keep, 2 * keep);
      piece.copy(this.store, 0, piece.length - keep);
      this.stored = keep;
      return;
    }
    if (this.stored + piece.length > 2 * keep) {
      this.store.copyWithin(0, this.stored - keep, this.stored);
      this.stored = keep;
    }
    this.reserve(this.stored + piece.length, 2 * keep);
    this.stored += piece.copy(this.store, this.stored);
  }

  private appendHead(piece: Buffer, lines: number): void {
    if (!this.firstLineDone) {
      const nl = piece.indexOf(NL);
      this.firstLineBytes += nl === -1 ? piece.length : nl;
      this.firstLineDone = nl !== -1;
    }
    if (this.full) return;
    const most = this.limits.maxBytes + 1;
    const taken = Math.min(piece.length, most - this.stored);
    this.reserve(this.stored + taken, most);
    this.stored += piece.copy(this.store, this.stored, 0, taken);
    this.headLines += lines;
    if (this.stored > this.limits.maxBytes || this.headLines > this.limits.maxLines) this.full = true;
  }

  private viewTail(open: OpenLine): WindowView {
    const held = this.store.subarray(0, this.stored);
    const buf = open.text ? Buffer.concat([held, Buffer.from(open.text)]) : held;
    const { maxLines, maxBytes } = this.limits;
    const lastLineBytes = open.text.length > 0 ? open.bytes : open.lastCompletedBytes;
    // Start of the maxLines-th line from the end.
    let start = 0;
    let pos = buf.length > 0 && buf[buf.length - 1] === NL ? buf.length - 1 : buf.length;
    for (let found = 0; pos > 0; ) {
      const nl = buf.lastIndexOf(NL, pos - 1);
      if (nl === -1) break;
      if (++found === maxLines) {
        start = nl + 1;
        break;
      }
      pos = nl;
    }
    // Then the first line start that fits the bytes; never past the last line. Trimming keeps at
    // least 2×maxBytes, so a first line that lost its start to a trim never survives this step.
    if (buf.length - start > maxBytes) {
      const p = buf.length - maxBytes;
      const nl = buf[p - 1] === NL ? p - 1 : buf.indexOf(NL, p);
      if (nl === -1 || nl === buf.length - 1) {
        let cut = p;
        while (cut < buf.length && isContinuation(buf[cut]!)) cut++;
        return finish(buf.subarray(cut), true, lastLineBytes);
      }
      start = nl + 1;
    }
    return finish(buf.subarray(start), false, 0);
  }

  private viewHead(open: OpenLine): WindowView {
    const held = this.store.subarray(0, this.stored);
    const buf = this.full || !open.text ? held : Buffer.concat([held, Buffer.from(open.text)]);
    const { maxLines, maxBytes } = this.limits;
    let end = buf.length;
    let pos = 0;
    for (let k = 0; k < maxLines; k++) {
      const nl = buf.indexOf(NL, pos);
      if (nl === -1) {
        pos = buf.length;
        break;
      }
      pos = nl + 1;
    }
    end = pos;
    if (end > maxBytes) {
      const nl = buf.lastIndexOf(NL, maxBytes - 1);
      if (nl === -1) {
        let cut = maxBytes;
        while (cut > 0 && isContinuation(buf[cut]!)) cut--;
        const lastLineBytes = this.firstLineDone ? this.firstLineBytes : this.firstLineBytes + open.bytes;
        return finish(buf.subarray(0, cut), true, lastLineBytes);
      }
      end = nl + 1;
    }
    return finish(buf.subarray(0, end), false, 0);
  }
}
