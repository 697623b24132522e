// The line that rows harvested from the terminal model's scrollback are building. Whether a row ends
// its line is only known once the next row has scrolled off too (that row's wrap flag, final in the
// scrollback, says whether it continues the line), so the last harvested row always stays here, open,
// until then or until the view is rendered.
//
// Only the first bytes are kept: the line cap, and room for a cut marker the line may already carry
// (a line cut before the terminal model took it back). Beyond that only the bytes are counted, so a
// repeat of 300 million characters (`CSI n b`) is a count, not a 600 MB string.
import { CUT_MARKER_AT_END, cutMarker } from "./lines.js";
import { utf8Length, utf8Prefix } from "./utf8.js";

/** A cut marker's most bytes (` [… N bytes cut from this line]`, N at most 16 digits), and some. */
const MARKER_ROOM = 64;

/** `text` of `bytes` UTF-8 bytes in all (more than its own when only a prefix was kept): capped, with a marker when cut. */
export function capLine(text: string, bytes: number, cap: number): { line: string; cut: boolean } {
  if (bytes <= cap) return { line: text, cut: false };
  // A line cut before the terminal model took it back, intact: cutting it again would count it twice.
  const m = CUT_MARKER_AT_END.exec(text);
  if (m !== null && utf8Length(text) === bytes && bytes - utf8Length(m[0]) <= cap) return { line: text, cut: false };
  const kept = utf8Prefix(text, cap);
  return { line: kept + cutMarker(bytes - utf8Length(kept)), cut: true };
}

export class HarvestedLine {
  /** The line's first bytes (all of it while it is short). */
  text = "";
  /** UTF-8 bytes of the whole line. */
  bytes = 0;
  private keptBytes = 0;
  /** A row did not fit whole: nothing more is kept (a later, shorter character must not follow the gap). */
  private frozen = false;
  /** A row is in the line (an empty row is an empty line). */
  open = false;
  private readonly keep: number;

  constructor(cap: number) {
    this.keep = cap + MARKER_ROOM;
  }

  add(row: string): void {
    this.open = true;
    if (row === "") return;
    const n = utf8Length(row);
    this.bytes += n;
    if (this.frozen) return;
    if (this.keptBytes + n <= this.keep) {
      this.text += row;
      this.keptBytes += n;
      return;
    }
    const part = utf8Prefix(row, this.keep - this.keptBytes);
    this.text += part;
    this.keptBytes += utf8Length(part);
    this.frozen = true;
  }

  /** Only bytes are counted from here on: the kept text is full. */
  get full(): boolean {
    return this.frozen;
  }

  /** Rows of `bytes` bytes in all added to a full line (see TerminalScreen.repeat). */
  addBytes(bytes: number): void {
    this.bytes += bytes;
  }

  /** The line with `rest` (rows still on screen) after it: its first bytes and its bytes in all. */
  with(rest: string): { text: string; bytes: number } {
    if (rest === "") return { text: this.text, bytes: this.bytes };
    const bytes = this.bytes + utf8Length(rest);
    if (this.frozen) return { text: this.text, bytes };
    return { text: this.text + utf8Prefix(rest, this.keep - this.keptBytes), bytes };
  }

  clear(): void {
    this.text = "";
    this.bytes = 0;
    this.keptBytes = 0;
    this.frozen = false;
    this.open = false;
  }
}
