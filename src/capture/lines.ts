// Line assembly after ANSI removal: carriage-return progress frames collapse to the last frame of
// their line (deleting `\r` instead glues frames together — pi's old behaviour), backspace moves the
// cursor one cell left as on a terminal (what is written next overwrites; what lies after the cursor
// stays), and one line longer than maxLineBytes is cut with a marker (a minified 2 MB line would
// otherwise be the whole window). Other control characters pass through here and are removed from
// the view when it is built (see window.ts), so the byte-level fast path and this path count exactly
// the same bytes.
//
// Backspace used to delete the previous code point: `printf 'abc\b\bX'` showed `aX` where a terminal
// and `col -b` show `aXc`. Overwriting also gives man-page overstrike (`_\bX` underline, `X\bX` bold)
// as the plain `X` that `col -b` prints. From a line's first backspace on, the line is a terminal row
// (row.ts): columns, not code points, so a backspace over a wide character or after a tab lands where
// a terminal's does (`日本\bX` → `日 X`, `ab\t\bX` → `ab     X`; the code-point cells before gave
// `日X` and `abX`). At column 0 a backspace does nothing. The `\r` rule is unchanged: after it the next
// character starts a new frame (a terminal would overwrite from column 0, `abc\rX` → `Xbc`; spool
// shows `X`).
import { countOf } from "../errors/index.js";
import { Row } from "./row.js";
import { utf8Length, utf8Prefix } from "./utf8.js";

const STRUCTURAL = /[\r\n\b]/g;

export const cutMarker = (bytes: number): string => ` [… ${countOf(bytes, "byte")} cut from this line]`;
export const CUT_MARKER_AT_END = / \[… \d+ bytes? cut from this line\]$/;

export class LineCleaner {
  /** The current line (its latest frame), already capped; no trailing newline. */
  private open = "";
  private openBytes = 0;
  /** Bytes of the current line that did not fit under the cap. */
  private openCut = 0;
  private pendingCR = false;
  /** The current line as a terminal row, from its first backspace on (row.ts); `open` is unused then. */
  private row: Row | undefined;
  /** Lines completed by the latest push. */
  lines = 0;
  /** Completed lines that were cut, over everything so far. */
  private cutDone = 0;
  /** Cleaned bytes of the most recently completed line, without its newline. */
  lastLineBytes = 0;

  constructor(private readonly maxLineBytes: number) {}

  /**
   * Lines that were cut, the current one included: output that ends in an over-long line without a
   * newline is cut as much as one that has it. Counted once, as it completes or not.
   */
  get cutLines(): number {
    return this.cutDone + (this.openCut > 0 ? 1 : 0);
  }

  /** A completed line was cut elsewhere (committed in bulk, or from the terminal model). */
  countCut(): void {
    this.cutDone++;
  }

  /** No `\r` pending (text after a backspace may still take the byte path: appendOpen writes on the row). */
  get canTakePlain(): boolean {
    return !this.pendingCR;
  }

  /** The current line as the view shows it. */
  get openLine(): string {
    if (this.row) return this.row.render();
    return this.openCut > 0 ? this.open + cutMarker(this.openCut) : this.open;
  }

  get openLineBytes(): number {
    return this.openCut > 0 ? this.openBytes + utf8Length(cutMarker(this.openCut)) : this.openBytes;
  }

  /** Any text (ANSI already removed). Returns the completed lines, each ending in a newline. */
  push(text: string): string {
    let out = "";
    let lines = 0;
    let from = 0;
    STRUCTURAL.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = STRUCTURAL.exec(text)) !== null) {
      if (m.index > from) this.appendFrame(text.slice(from, m.index));
      const ch = text.charCodeAt(m.index);
      if (ch === 10) {
        out += this.takeLine();
        lines++;
      } else if (ch === 13) {
        this.pendingCR = true;
      } else {
        this.backspace();
      }
      from = m.index + 1;
    }
    if (from < text.length) this.appendFrame(text.slice(from));
    this.lines = lines;
    return out;
  }

  private appendFrame(segment: string): void {
    this.startFrameIfCR();
    this.appendOpen(segment);
  }

  /** A `\r` not followed by `\n` starts a new frame of the same line: the old frame is discarded. */
  private startFrameIfCR(): void {
    if (!this.pendingCR) return;
    this.pendingCR = false;
    this.open = "";
    this.openBytes = 0;
    this.openCut = 0;
    this.row = undefined;
  }

  /**
   * One column left. After a pending `\r` the cursor is at column 0 already (the frame is still shown
   * until something is written); past the cap the cut bytes are not kept, so neither is the cursor.
   */
  private backspace(): void {
    if (this.pendingCR || this.openCut > 0) return;
    if (this.row === undefined) {
      if (this.open === "") return;
      const row = Row.from(this.open);
      // Still at column 0 (zero-width code points only): nothing moves, the line stays a string.
      if (row.cursor === 0) return;
      this.row = row;
    }
    this.row.backspace();
    // As a row the line may take more bytes than as a string (a tab is spaces to the next stop).
    this.settleRow(this.row);
  }

  /** Text without `\r`, `\n` or backspace, continuing the current line at the cursor. */
  appendOpen(segment: string): void {
    if (segment === "") return;
    const row = this.row;
    if (row !== undefined) {
      row.write(segment);
      this.settleRow(row);
      return;
    }
    if (this.openCut > 0) {
      this.openCut += utf8Length(segment);
      return;
    }
    const bytes = utf8Length(segment);
    if (this.openBytes + bytes <= this.maxLineBytes) {
      this.open += segment;
      this.openBytes += bytes;
      return;
    }
    const kept = utf8Prefix(segment, this.maxLineBytes - this.openBytes);
    const keptBytes = utf8Length(kept);
    this.open += kept;
    this.openBytes += keptBytes;
    this.openCut = bytes - keptBytes;
  }

  /** The row's bytes are the line's; over the cap, what fits is kept and the line goes on as a cut one. */
  private settleRow(row: Row): void {
    this.openBytes = row.bytes;
    if (this.openBytes <= this.maxLineBytes) return;
    const kept = utf8Prefix(row.render(), this.maxLineBytes);
    const keptBytes = utf8Length(kept);
    this.openCut = this.openBytes - keptBytes;
    this.open = kept;
    this.openBytes = keptBytes;
    this.row = undefined;
  }

  /**
   * Hands the current line over (with a pending `\r`, still unapplied) and starts empty. A cut line
   * goes with its marker and stays counted, as a completed one taken back from the window does.
   */
  release(): string {
    let line = this.openLine + (this.pendingCR ? "\r" : "");
    // The emulator's cursor goes back where this one was (one backspace a column, or spaces past the end).
    const row = this.row;
    if (row !== undefined && !this.pendingCR) {
      line += row.cursor <= row.columns ? "\b".repeat(row.columns - row.cursor) : " ".repeat(row.cursor - row.columns);
    }
    if (this.openCut > 0) this.cutDone++;
    this.pendingCR = false;
    this.open = "";
    this.openBytes = 0;
    this.openCut = 0;
    this.row = undefined;
    return line;
  }

  /** Completes the current line; returns it with its newline. */
  takeLine(): string {
    this.pendingCR = false;
    const line = this.openLine;
    if (this.openCut > 0) this.cutDone++;
    this.lastLineBytes = this.openLineBytes;
    this.open = "";
    this.openBytes = 0;
    this.openCut = 0;
    this.row = undefined;
    return line + "\n";
  }
}
