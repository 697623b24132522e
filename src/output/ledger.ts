// The sink's window as line lengths: a FIFO of the complete lines' UTF-16 units and UTF-8 bytes plus the
// open (unterminated) last line, so a tail window evicts whole lines from its front in O(1) each and a
// write costs O(its own text) — the window's text is never re-read.
import { utf8Length } from "../capture/index.js";

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

export class WindowLedger {
  private units: number[] = [];
  private byteCounts: number[] = [];
  private head = 0;
  private openUnits = 0;
  private openBytes = 0;
  /** The last UTF-16 unit of the window (a pair split across two writes is 4 bytes, not 3 + 3). */
  private last = 0;
  /** UTF-8 bytes in the window. */
  bytes = 0;
  /** UTF-16 units in the window. */
  length = 0;
  /** The last `add`'s text: its UTF-8 bytes on its own (a pair split across writes counts 3 + 3) and its newlines. */
  addedBytes = 0;
  addedNewlines = 0;

  /** Complete lines (newlines) in the window. */
  get newlines(): number {
    return this.units.length - this.head;
  }

  /** Lines as the capture layer counts them: newlines, plus one for an unterminated last line. */
  get lines(): number {
    return this.newlines + (this.openUnits > 0 ? 1 : 0);
  }

  /** True when the window ends inside a line. */
  get open(): boolean {
    return this.openUnits > 0;
  }

  /** Start over from `text` (O(text)). */
  reset(text: string): void {
    this.units = [];
    this.byteCounts = [];
    this.head = 0;
    this.openUnits = 0;
    this.openBytes = 0;
    this.last = 0;
    this.bytes = 0;
    this.length = 0;
    if (text.length > 0) this.add(text);
  }

  /** Account for `text` appended to the window (one pass over it; see `addedBytes`). */
  add(text: string): void {
    this.addedBytes = 0;
    this.addedNewlines = 0;
    if (text.length === 0) return;
    let pairFix = isLow(text.charCodeAt(0)) && isHigh(this.last) ? 2 : 0;
    let from = 0;
    let raw = 0;
    let newlines = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", nl + 1)) {
      const units = nl + 1 - from;
      const lineBytes = utf8Length(from === 0 && nl === text.length - 1 ? text : text.slice(from, nl + 1));
      raw += lineBytes;
      newlines++;
      const bytes = lineBytes - pairFix;
      pairFix = 0;
      this.units.push(this.openUnits + units);
      this.byteCounts.push(this.openBytes + bytes);
      this.openUnits = 0;
      this.openBytes = 0;
      this.bytes += bytes;
      from = nl + 1;
    }
    if (from < text.length) {
      const openBytes = utf8Length(from === 0 ? text : text.slice(from));
      raw += openBytes;
      const bytes = openBytes - pairFix;
      this.openUnits += text.length - from;
      this.openBytes += bytes;
      this.bytes += bytes;
    }
    this.length += text.length;
    this.last = text.charCodeAt(text.length - 1);
    this.addedBytes = raw;
    this.addedNewlines = newlines;
  }

  /**
   * Whether the oldest line can be evicted whole: it is complete and not the window's last line (the
   * last line is cut inside instead, by the reference rule).
   */
  get canDrop(): boolean {
    const n = this.newlines;
    return n > 1 || (n === 1 && this.openUnits > 0);
  }

  /**
   * Drop `units` from the front when that is a whole number of complete lines (then true). False, and
   * nothing dropped, when the cut lands inside a line: the caller recounts from the text.
   */
  dropUnits(units: number): boolean {
    let i = this.head;
    let left = units;
    while (left > 0 && i < this.units.length && this.units[i]! <= left) left -= this.units[i++]!;
    if (left !== 0) return false;
    // Count, not index: dropFirst may compact the FIFO and move the head.
    for (let n = i - this.head; n > 0; n--) this.dropFirst();
    return true;
  }

  /** Evict the oldest complete line; returns its UTF-16 units. */
  dropFirst(): number {
    const units = this.units[this.head]!;
    this.bytes -= this.byteCounts[this.head]!;
    this.length -= units;
    if (this.length === 0) this.last = 0;
    this.head++;
    if (this.head >= 1024 && this.head * 2 >= this.units.length) {
      this.units = this.units.slice(this.head);
      this.byteCounts = this.byteCounts.slice(this.head);
      this.head = 0;
    }
    return units;
  }
}
