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
// as the plain `X` that `col -b` prints. A cell here is a code point with the zero-width ones after it
// (combining marks, joiners, controls, which a terminal does not advance over); a tab is one cell and
// a wide (CJK) character one, not two as on a terminal: `中\b\bX` overwrites the character before 中.
// At column 0 a backspace does nothing. The `\r` rule is unchanged: after it the next character
// starts a new frame (a terminal would overwrite from column 0, `abc\rX` → `Xbc`; spool shows `X`).
import { utf8Length, utf8Prefix } from "./utf8.js";

/** Code points a terminal's cursor does not advance over (the view's CONTROL set, combining marks, joiners). */
const ZERO_WIDTH = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb\p{M}\u200b-\u200d\u2060]/u;

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** The code point of `s` that starts at `i` is zero-width (see ZERO_WIDTH). */
function zeroWidthAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c >= 0x20 && c < 0x7f) return false;
  return ZERO_WIDTH.test(String.fromCodePoint(s.codePointAt(i)!));
}

/** The end of the cell that starts at `i` (its code point and the zero-width ones after it). */
function cellEnd(s: string, i: number): number {
  let j = i + (isHigh(s.charCodeAt(i)) && isLow(s.charCodeAt(i + 1)) ? 2 : 1);
  while (j < s.length && zeroWidthAt(s, j)) j += isHigh(s.charCodeAt(j)) && isLow(s.charCodeAt(j + 1)) ? 2 : 1;
  return j;
}

/**
 * UTF-8 bytes of a few units, counted in JavaScript (as Buffer.byteLength does: a lone surrogate is
 * U+FFFD, 3 bytes): overwrites are a character or two (a spinner's `|\b/`), where the native call's
 * own cost was most of the overwrite.
 */
function shortUtf8Length(s: string): number {
  if (s.length > 16) return utf8Length(s);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (isHigh(c) && isLow(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Column 0: after the zero-width code points a line starts with (they belong to no cell). */
function lineStart(s: string): number {
  let i = 0;
  while (i < s.length && zeroWidthAt(s, i)) i += isHigh(s.charCodeAt(i)) && isLow(s.charCodeAt(i + 1)) ? 2 : 1;
  return i;
}

/** The start of the cell that ends at `i`, or column 0 (see lineStart) from `i` there or before it. */
function cellStart(s: string, i: number, start: number): number {
  while (i > start) {
    i -= i > 1 && isLow(s.charCodeAt(i - 1)) && isHigh(s.charCodeAt(i - 2)) ? 2 : 1;
    if (!zeroWidthAt(s, i)) return i;
  }
  return start;
}

const STRUCTURAL = /[\r\n\b]/g;

export const cutMarker = (bytes: number): string => ` [… ${bytes} bytes cut from this line]`;
export const CUT_MARKER_AT_END = / \[… \d+ bytes cut from this line\]$/;

export class LineCleaner {
  /** The current line (its latest frame), already capped; no trailing newline. */
  private open = "";
  private openBytes = 0;
  /** Bytes of the current line that did not fit under the cap. */
  private openCut = 0;
  private pendingCR = false;
  /** UTF-16 units of the current line after the cursor (backspaces moved it back); 0 at the end. */
  private after = 0;
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

  /** No `\r` pending (text after a backspace may still take the byte path: appendOpen overwrites). */
  get canTakePlain(): boolean {
    return !this.pendingCR;
  }

  /** The current line as the view shows it. */
  get openLine(): string {
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
    this.after = 0;
  }

  /**
   * One cell left. After a pending `\r` the cursor is at column 0 already (the frame is still shown
   * until something is written); past the cap the cut bytes are not kept, so neither is the cursor.
   */
  private backspace(): void {
    if (this.pendingCR || this.openCut > 0) return;
    const cursor = this.open.length - this.after;
    const start = lineStart(this.open);
    if (cursor > start) this.after = this.open.length - cellStart(this.open, cursor, start);
  }

  /**
   * Writes `segment` over the cells after the cursor, one cell for one; returns what goes past the
   * end of the line. Zero-width code points at its start join the cell before the cursor.
   */
  private overwrite(segment: string): string {
    const open = this.open;
    const at = open.length - this.after;
    let i = at;
    let j = 0;
    while (j < segment.length && zeroWidthAt(segment, j)) j += isHigh(segment.charCodeAt(j)) && isLow(segment.charCodeAt(j + 1)) ? 2 : 1;
    while (j < segment.length && i < open.length) {
      j = cellEnd(segment, j);
      i = cellEnd(open, i);
    }
    // The cell under the cursor may take zero-width code points after the overwrite ends.
    while (j < segment.length && zeroWidthAt(segment, j)) j += isHigh(segment.charCodeAt(j)) && isLow(segment.charCodeAt(j + 1)) ? 2 : 1;
    const written = segment.slice(0, j);
    this.open = open.slice(0, at) + written + open.slice(i);
    this.openBytes += shortUtf8Length(written) - shortUtf8Length(open.slice(at, i));
    this.after = open.length - i;
    return segment.slice(j);
  }

  /** Text without `\r`, `\n` or backspace, continuing the current line at the cursor. */
  appendOpen(segment: string): void {
    if (segment === "") return;
    if (this.after > 0) {
      segment = this.overwrite(segment);
      if (this.openBytes > this.maxLineBytes) {
        // Wider characters written over narrower ones took the line over the cap.
        const kept = utf8Prefix(this.open, this.maxLineBytes);
        const keptBytes = utf8Length(kept);
        this.openCut = this.openBytes - keptBytes + utf8Length(segment);
        this.open = kept;
        this.openBytes = keptBytes;
        this.after = 0;
        return;
      }
      if (segment === "") return;
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

  /**
   * Hands the current line over (with a pending `\r`, still unapplied) and starts empty. A cut line
   * goes with its marker and stays counted, as a completed one taken back from the window does.
   */
  release(): string {
    let line = this.openLine + (this.pendingCR ? "\r" : "");
    // The emulator's cursor goes back where this one was (one backspace a cell).
    const start = lineStart(this.open);
    for (let i = this.open.length, at = i - this.after; i > at; i = cellStart(this.open, i, start)) line += "\b";
    if (this.openCut > 0) this.cutDone++;
    this.pendingCR = false;
    this.open = "";
    this.openBytes = 0;
    this.openCut = 0;
    this.after = 0;
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
    this.after = 0;
    return line + "\n";
  }
}
