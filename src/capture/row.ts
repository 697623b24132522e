// One line as a terminal row, for the line cleaner once a backspace moved its cursor back: cells by
// column, as xterm.js (the emulated path's terminal, and the one the property test compares with)
// keeps them. A wide (CJK) character is two columns, a tab moves the cursor to the next multiple of 8
// without writing, a backspace moves one column, zero-width code points join the cell before the
// cursor. Writing over half of a wide character blanks the other half: `日本\bX` shows `日 X`,
// `ab\t\bX` shows `ab     X` (the string model these replaced showed `日X` and `abX`). Cells the
// cursor skipped and never wrote are spaces.
//
// Only lines with a backspace come here; plain appends stay a string (lines.ts). Each code point
// costs a few array stores, and the UTF-8 byte count is kept as cells change (O(1) a code point), so
// a long line with a backspace every few characters (man-page overstrike) stays linear.
// OutputCapture.push, 64 KiB reads, both builds in one process, min of 9: the bench generator's
// plain, coloured and short lines unchanged (0.57, 0.81, 0.38 ms/MiB: no backspace, no row); 16 MiB of
// man-page overstrike 56 → 46 ms/MiB; a made-up worst case, every line CJK with tabs and backspaces
// written over it, 35 → 77 ms/MiB (a string per CJK cell; the code-point model sliced strings).
/** The view's CONTROL set, combining marks, joiners: code points a terminal's cursor does not advance over. */
export const ZERO_WIDTH = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb\p{M}\u200b-\u200d\u2060]/u;

/** Two columns, as xterm.js's default Unicode 6 table (Markus Kuhn's wcwidth) has them. */
export function isWide(cp: number): boolean {
  if (cp < 0x1100) return false;
  return (
    cp < 0x1160 ||
    cp === 0x2329 ||
    cp === 0x232a ||
    (cp >= 0x2e80 && cp < 0xa4d0 && cp !== 0x303f) ||
    (cp >= 0xac00 && cp < 0xd7a4) ||
    (cp >= 0xf900 && cp < 0xfb00) ||
    (cp >= 0xfe10 && cp < 0xfe1a) ||
    (cp >= 0xfe30 && cp < 0xfe70) ||
    (cp >= 0xff00 && cp < 0xff61) ||
    (cp >= 0xffe0 && cp < 0xffe7) ||
    (cp >= 0x20000 && cp <= 0x2fffd) ||
    (cp >= 0x30000 && cp <= 0x3fffd)
  );
}

const TAB_STOP = 8;
/** widths[i]: 1 a narrow cell or a blank one (null), 2 a wide character, 0 the column its second half takes. */
const HALF = 0;

/** UTF-8 bytes of a cell's few units (a lone surrogate counts 3, as Buffer.byteLength). */
function cellBytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

export class Row {
  /** Zero-width code points written at column 0 before any cell (they belong to none). */
  private prefix = "";
  private readonly cells: (string | null)[] = [];
  private readonly widths: number[] = [];
  /** The cursor's column; past the last cell after a tab. */
  cursor = 0;
  /** UTF-8 bytes of render(). */
  bytes = 0;
  private rendered: string | undefined = "";
  /** A blank or an orphaned half may be among the cells (an overwrite, a tab): render() cannot just join them. */
  private irregular = false;

  /** The row a string-model line (appended text, tabs in it) is on a terminal, the cursor at its end. */
  static from(line: string): Row {
    const row = new Row();
    row.write(line);
    return row;
  }

  backspace(): void {
    if (this.cursor > 0) this.cursor--;
  }

  /** Text without `\r`, `\n` or backspace, written at the cursor. */
  write(text: string): void {
    if (text === "") return;
    this.rendered = undefined;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x20 && c < 0x7f) {
        this.put(text[i]!, 1);
        continue;
      }
      if (c === 9) {
        this.cursor = (Math.floor(this.cursor / TAB_STOP) + 1) * TAB_STOP;
        continue;
      }
      const cp = text.codePointAt(i)!;
      const ch = cp > 0xffff ? text.slice(i, i + 2) : text[i]!;
      if (cp > 0xffff) i++;
      // CJK ideographs and Hangul syllables are wide and never zero-width: no regex for them.
      if ((cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7a3)) this.put(ch, 2);
      else if (ZERO_WIDTH.test(ch)) this.join(ch);
      else this.put(ch, isWide(cp) ? 2 : 1);
    }
  }

  /** What the row shows: blanks and orphaned halves as spaces; nothing after the last cell. */
  render(): string {
    if (this.rendered !== undefined) return this.rendered;
    // A wide character's second half is "" and joins as nothing.
    if (!this.irregular) return (this.rendered = this.prefix + this.cells.join(""));
    let s = this.prefix;
    const { cells, widths } = this;
    for (let i = 0; i < cells.length; i++) {
      const w = widths[i]!;
      if (w === 2) {
        s += cells[i];
        i++;
      } else s += w === HALF ? " " : (cells[i] ?? " ");
    }
    this.rendered = s;
    return s;
  }

  /** Columns the row holds (a cell each). */
  get columns(): number {
    return this.cells.length;
  }

  private contribution(i: number): number {
    const w = this.widths[i]!;
    if (w === HALF) return i > 0 && this.widths[i - 1] === 2 ? 0 : 1;
    const c = this.cells[i];
    return c === null || c === undefined ? 1 : cellBytes(c);
  }

  private span(from: number, to: number): number {
    let n = 0;
    for (let i = Math.max(0, from); i < Math.min(to, this.cells.length); i++) n += this.contribution(i);
    return n;
  }

  private pad(to: number): void {
    while (this.cells.length < to) {
      this.irregular = true;
      this.cells.push(null);
      this.widths.push(1);
      this.bytes += 1;
    }
  }

  private put(ch: string, w: number): void {
    const x = this.cursor;
    const { cells, widths } = this;
    if (x === cells.length) {
      // At the end (the usual case): nothing is overwritten.
      cells.push(ch);
      widths.push(w);
      if (w === 2) {
        cells.push("");
        widths.push(HALF);
      }
      this.bytes += cellBytes(ch);
      this.cursor = x + w;
      return;
    }
    this.pad(x);
    this.irregular = true;
    const before = this.span(x - 1, x + w + 1);
    // On the second half of a wide character: its first half is blanked (xterm.js does the same).
    if (widths[x] === HALF && x > 0 && widths[x - 1] === 2) {
      cells[x - 1] = null;
      widths[x - 1] = 1;
    }
    cells[x] = ch;
    widths[x] = w;
    if (w === 2) {
      cells[x + 1] = "";
      widths[x + 1] = HALF;
    }
    this.bytes += this.span(x - 1, x + w + 1) - before;
    this.cursor = x + w;
  }

  /** A zero-width code point joins the cell left of the cursor (a wide character's, from its second half). */
  private join(ch: string): void {
    let x = this.cursor - 1;
    this.irregular = true;
    if (x < 0) {
      this.prefix += ch;
      this.bytes += cellBytes(ch);
      return;
    }
    this.pad(x + 1);
    if (this.widths[x] === HALF && x > 0 && this.widths[x - 1] === 2) x--;
    const before = this.contribution(x);
    // A blank or an orphaned half shows as a space: the mark goes on that space.
    const base = this.widths[x] === HALF ? " " : (this.cells[x] ?? " ");
    if (this.widths[x] === HALF) this.widths[x] = 1;
    this.cells[x] = base + ch;
    this.bytes += this.contribution(x) - before;
  }
}
