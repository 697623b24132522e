// Raw bytes in, bounded cleaned view out: binary sniff → streaming UTF-8 decode → ANSI removal →
// line assembly (CR frames, backspace, line cap) → bounded window (which strips other controls).
//
// Most output is plain lines. A read of valid UTF-8 with no CR (but in CRLF) or backspace byte, and
// no escape other than complete CSI colour sequences, takes the byte-level fast path: one pass of the
// WebAssembly kernel (kernel.ts) removes the sequences and counts the newlines, UTF-8 is checked
// natively, and the complete lines are copied to the window as bytes — only the first and last partial
// lines are decoded. Anything else goes through the string path. Both paths produce the same view for
// any split of the same bytes (property tests hold them to it). A read is never kept: the pipes reuse
// one read buffer.
import { isUtf8 } from "node:buffer";
import { StringDecoder } from "node:string_decoder";
import { AnsiStripper, HOLD_LIMIT } from "./ansi.js";
import { BinarySniffer } from "./binary.js";
import { firstCursorMove } from "./cursor.js";
import { SCAN_SLICE, byteKernel } from "./kernel.js";
import { capLine } from "./harvested-line.js";
import { LineCleaner, cutMarker } from "./lines.js";
import { countNewlines } from "./newlines.js";
import { type ScreenText, TerminalScreen } from "./screen.js";
import type { CaptureLimits, CaptureView, Truncation, TruncatedBy } from "./types.js";
import { leadingContinuations, trailingPartial, utf8Length, utf8Prefix } from "./utf8.js";
import { BoundedWindow, countLines } from "./window.js";

const NL = 0x0a;
/** Lines from the kernel are taken in bulk when it saw none longer than a cap of at least this (see kernel.ts). */
const KERNEL_MIN_CAP = 64;
/** Carriage return or backspace: the line assembler has to replay them. */
const FRAMING = /[\r\b]/;
/**
 * What a NUL in text is shown as (U+2400 SYMBOL FOR NULL): `find -print0` output read as names glued
 * together when NUL went the way of the other control characters (removed from the view). Counted
 * in the view's bytes (3 each), so the limits bound what is shown. The terminal model drops NUL as a
 * terminal does (curses pads with it); the spill keeps the raw byte.
 */
const NUL_SYMBOL = "\u2400";
export const DEFAULT_COLS = 120;
export const DEFAULT_ROWS = 40;

/** A terminal's size, for the terminal model (and the pseudo-terminal, when there is one). */
export interface TerminalSize {
  readonly cols: number;
  readonly rows: number;
}

/**
 * How many leading bytes of a read can continue a CSI sequence held from the previous read: its
 * parameter and intermediate bytes (and the `[` after a lone ESC), then the final byte.
 */
function csiContinuation(chunk: Buffer): number {
  const most = Math.min(chunk.length, HOLD_LIMIT);
  let j = 0;
  while (j < most && ((chunk[j]! >= 0x20 && chunk[j]! <= 0x3f) || chunk[j] === 0x5b)) j++;
  return j < chunk.length ? j + 1 : j;
}

export class OutputCapture {
  rawBytes = 0;
  // StringDecoder rather than TextDecoder: same streaming guarantee (no code point split across
  // reads, invalid bytes become U+FFFD) and measured 7× faster here on 64 KiB chunks.
  private readonly decoder = new StringDecoder("utf8");
  private readonly sniffer = new BinarySniffer();
  private readonly ansi = new AnsiStripper();
  private readonly lines: LineCleaner;
  private readonly window: BoundedWindow;
  /** The terminal model, from the first cursor-moving sequence on (see cursor.ts). */
  private screen: TerminalScreen | undefined;
  private screenText: ScreenText | undefined;
  /** The start of a CSI sequence cut by the end of the previous read (byte path), glued to the next. */
  private heldCsi: Buffer | undefined;
  /** The kernel's mode for the next read: the previous one had fewer than one special byte per 512. */
  private sparse = true;

  constructor(
    readonly limits: CaptureLimits,
    readonly terminal: TerminalSize = { cols: DEFAULT_COLS, rows: DEFAULT_ROWS },
  ) {
    this.lines = new LineCleaner(limits.maxLineBytes);
    this.window = new BoundedWindow(limits);
  }

  get binary(): boolean {
    return this.sniffer.binary;
  }

  /** Faults of the terminal model's emulator that were survived (see screen.ts); 0 but for its bugs. */
  get emulatorFaults(): number {
    return this.screen?.faults ?? 0;
  }

  /** Whether the output is being rendered through the terminal model. */
  get emulated(): boolean {
    return this.screen !== undefined;
  }

  /** The chunk is not kept: it may be a read buffer that the caller reuses. */
  push(chunk: Buffer): void {
    this.rawBytes += chunk.length;
    this.sniffer.push(chunk);
    if (this.sniffer.binary || chunk.length === 0) return;
    // Longer reads go in slices the kernel takes whole (a split never changes the view).
    if (chunk.length <= SCAN_SLICE) this.feed(chunk);
    else for (let from = 0; from < chunk.length; from += SCAN_SLICE) this.feed(chunk.subarray(from, from + SCAN_SLICE));
  }

  private feed(chunk: Buffer): void {
    // Only the bytes that can complete the held sequence are glued to it (a copy of a few bytes, not
    // of the whole read); the rest follows as if the read had been split there. The glued bytes may
    // end in the start of another sequence (`ESC` + `[[ESC`): that one is glued to the rest in turn.
    while (this.heldCsi !== undefined) {
      const n = csiContinuation(chunk);
      const glued = Buffer.concat([this.heldCsi, chunk.subarray(0, n)]);
      this.heldCsi = undefined;
      this.take(glued);
      if (n === chunk.length) return;
      chunk = chunk.subarray(n);
    }
    this.take(chunk);
  }

  private take(chunk: Buffer): void {
    if (this.screen) {
      this.writeScreen(this.decoder.write(chunk));
      return;
    }
    // Reads split characters often (every 64 KiB boundary in non-ASCII text). The leading
    // continuation bytes finish (or invalidate) whatever the decoder holds from the previous read;
    // after them the read starts on a character boundary. Only a read made of nothing but 1–2
    // continuation bytes leaves that undecided, and takes the string path.
    const k = leadingContinuations(chunk);
    const kernel = (k < chunk.length || k === 3) && !this.ansi.holding && this.lines.canTakePlain ? byteKernel() : undefined;
    if (kernel !== undefined) {
      const body = k > 0 ? chunk.subarray(k) : chunk;
      const scan = kernel.scan(body, this.limits.maxLineBytes, HOLD_LIMIT, this.sparse);
      // Valid UTF-8 (but for a character the read cut at its end, or a held sequence) or the string
      // path: the kept bytes can then go to the window as they are. Checked on the read's own bytes,
      // as the string path decodes them: a removed sequence must not glue a broken character together.
      if (scan !== undefined) this.sparse = scan.specials * 512 < body.length;
      if (scan !== undefined && isUtf8(body.subarray(0, body.length - (scan.held > 0 ? scan.held : trailingPartial(body))))) {
        const finished = (k > 0 ? this.decoder.write(chunk.subarray(0, k)) : "") + this.decoder.end();
        if (finished) this.lines.appendOpen(finished);
        if (scan.held > 0) this.heldCsi = Buffer.from(body.subarray(body.length - scan.held));
        if (scan.out.length > 0) this.pushPlain(scan.out, scan.lines, scan.mayBeLong);
        return;
      }
    }
    this.pushText(this.decoder.write(chunk));
  }

  end(): void {
    this.sniffer.end();
    if (this.sniffer.binary) return;
    if (this.heldCsi !== undefined) {
      // Never completed: the string path cleans it as it would have without the byte path.
      this.pushText(this.decoder.write(this.heldCsi));
      this.heldCsi = undefined;
    }
    if (this.screen) {
      this.writeScreen(this.decoder.end());
      const done: [string, number][] = [];
      this.screen.end((line, bytes) => done.push([line, bytes]));
      this.commitScreenLines(done);
      this.screenText = undefined;
      return;
    }
    this.pushText(this.decoder.end());
    const held = this.ansi.end();
    if (held) this.commitText(this.lines.push(held));
  }

  /** Cheap (no view is built): have the limits been crossed? */
  get truncatedBy(): TruncatedBy | null {
    if (this.sniffer.binary) return "binary";
    if (this.totalLines > this.limits.maxLines) return "lines";
    if (this.totalBytes > this.limits.maxBytes) return "bytes";
    if (this.cutLines > 0) return "line-length";
    return null;
  }

  /** Lines cut at the cap, a harvested line still open in the terminal model's view included. */
  private get cutLines(): number {
    return this.lines.cutLines + (this.screen && this.renderScreen().cut ? 1 : 0);
  }

  get totalBytes(): number {
    if (this.screen) return this.window.committedBytes + utf8Length(this.renderScreen().text);
    return this.window.committedBytes + this.lines.openLineBytes;
  }

  get totalLines(): number {
    if (this.screen) return this.window.committedLines + countLines(this.renderScreen().text);
    return this.window.committedLines + (this.lines.openLineBytes > 0 ? 1 : 0);
  }

  view(spillPath?: string): CaptureView {
    const { maxLines, maxBytes } = this.limits;
    const base = { binary: this.binary, rawBytes: this.rawBytes, ...(spillPath !== undefined ? { spillPath } : {}) };
    if (this.sniffer.binary) {
      const truncation: Truncation = {
        truncated: true,
        truncatedBy: "binary",
        totalLines: 0,
        totalBytes: this.rawBytes,
        outputLines: 0,
        outputBytes: 0,
        maxLines,
        maxBytes,
        cutLines: 0,
        lastLinePartial: false,
      };
      return { text: "", truncation, ...base };
    }
    const screen = this.screen ? this.renderScreen().text : undefined;
    const w = this.window.view(
      screen !== undefined
        ? { text: screen, bytes: utf8Length(screen.slice(screen.lastIndexOf("\n") + 1)), lastCompletedBytes: this.lines.lastLineBytes }
        : { text: this.lines.openLine, bytes: this.lines.openLineBytes, lastCompletedBytes: this.lines.lastLineBytes },
    );
    const truncatedBy = this.truncatedBy;
    const truncation: Truncation = {
      truncated: truncatedBy !== null,
      truncatedBy,
      totalLines: this.totalLines,
      totalBytes: this.totalBytes,
      outputLines: w.outputLines,
      outputBytes: w.outputBytes,
      maxLines,
      maxBytes,
      cutLines: this.cutLines,
      lastLinePartial: w.lastLinePartial,
      ...(w.lastLinePartial ? { lastLineBytes: w.lastLineBytes } : {}),
    };
    return { text: w.text, truncation, ...base };
  }

  private pushText(text: string): void {
    if (text === "") return;
    if (this.ansi.holding || text.includes("\x1b")) {
      // A cursor sequence may have begun in the previous read: test it whole.
      const raw = this.ansi.holding ? this.ansi.take() + text : text;
      const at = firstCursorMove(raw);
      if (at >= 0) {
        // What came before goes the usual way, so the switch happens at the same byte however the
        // output was split into reads.
        this.pushLines(raw.slice(0, at));
        this.enterScreen(this.ansi.take() + raw.slice(at));
        return;
      }
      text = raw;
    }
    this.pushLines(text);
  }

  private pushLines(text: string): void {
    if (text === "") return;
    // (the byte path hands every read with a NUL to this one: see wasm/kernel.ts)
    if (text.includes("\0")) text = text.replaceAll("\0", NUL_SYMBOL);
    const stripped = !this.ansi.holding && !text.includes("\x1b") ? text : this.ansi.push(text);
    // Coloured output without progress frames is plain once stripped: commit its lines in bulk.
    if (this.lines.canTakePlain && !FRAMING.test(stripped)) this.pushPlainText(stripped);
    else this.commitText(this.lines.push(stripped));
  }

  /**
   * From here on the output goes through the terminal model. The lines that would still be on a
   * terminal's screen go back under its cursor (a display that moves up over lines printed in an
   * earlier read redraws them, not new ones), and so does the current line.
   */
  private enterScreen(raw: string): void {
    const reopened = this.window.takeBack(this.terminal.rows - 1);
    const open = this.lines.release();
    this.screen = new TerminalScreen(this.terminal.cols, this.terminal.rows, this.limits.maxLineBytes);
    this.writeScreen(reopened + open + raw);
  }

  private writeScreen(text: string): void {
    if (text === "") return;
    this.screenText = undefined;
    const done: [string, number][] = [];
    this.screen!.write(text, (line, bytes) => done.push([line, bytes]));
    this.commitScreenLines(done);
  }

  private renderScreen(): ScreenText {
    this.screenText ??= this.screen!.render();
    return this.screenText;
  }

  /** Lines that scrolled off the screen are final: capped like any line, then committed. */
  private commitScreenLines(done: [string, number][]): void {
    if (done.length === 0) return;
    const cap = this.limits.maxLineBytes;
    let text = "";
    let last = 0;
    for (const [first, bytes] of done) {
      const { line, cut } = capLine(first, bytes, cap);
      if (cut) this.lines.countCut();
      text += line + "\n";
      last = cut ? utf8Length(line) : bytes;
    }
    this.window.append(Buffer.from(text, "utf8"), done.length);
    this.lines.lastLineBytes = last;
  }

  private pushPlainText(text: string): void {
    const first = text.indexOf("\n");
    if (first === -1) {
      this.lines.appendOpen(text);
      return;
    }
    this.lines.appendOpen(text.slice(0, first));
    this.commitText(this.lines.takeLine(), 1);
    const last = text.lastIndexOf("\n");
    if (last > first) this.commitLines(Buffer.from(text.slice(first + 1, last + 1), "utf8"));
    if (last + 1 < text.length) this.lines.appendOpen(text.slice(last + 1));
  }

  /** Kept bytes from the kernel, holding `lines` newlines; `mayBeLong` as the kernel reports it. */
  private pushPlain(chunk: Buffer, lines: number, mayBeLong: boolean): void {
    if (lines === 0) {
      this.lines.appendOpen(this.decoder.write(chunk));
      return;
    }
    const first = chunk.indexOf(NL);
    this.lines.appendOpen(chunk.toString("utf8", 0, first));
    this.commitText(this.lines.takeLine(), 1);
    const last = lines === 1 ? first : chunk.lastIndexOf(NL);
    if (last > first) {
      const complete = chunk.subarray(first + 1, last + 1);
      if (mayBeLong || this.limits.maxLineBytes < KERNEL_MIN_CAP) this.commitLines(complete);
      else this.commitShortLines(complete, lines - 1);
    }
    if (last + 1 < chunk.length) this.lines.appendOpen(this.decoder.write(chunk.subarray(last + 1)));
  }

  /** Complete lines, none of them over the cap: `bytes` ends with a newline and holds `lines` of them. */
  private commitShortLines(bytes: Buffer, lines: number): void {
    const end = bytes.length;
    this.window.append(bytes, lines);
    // (A negative start would count from the end: a lone "\n" has no earlier newline.)
    this.lines.lastLineBytes = end - 2 - (end >= 2 ? bytes.lastIndexOf(NL, end - 2) : -1);
  }

  /**
   * Complete lines as valid UTF-8 bytes ending in a newline, where some may be over the cap (and on
   * the string path). Lines are counted four bytes at a time (countNewlines); over-long lines are
   * found by jumping: from a line start s, the last newline at or before s + cap ends every line
   * begun in between within the cap, so there are about bytes / cap lookups, however short the lines.
   */
  private commitLines(bytes: Buffer): void {
    const cap = this.limits.maxLineBytes;
    const end = bytes.length;
    let from = 0;
    let lastLineBytes = -1;
    for (let s = 0; s + cap < end - 1; ) {
      const q = bytes.lastIndexOf(NL, s + cap);
      if (q >= s) {
        s = q + 1;
        continue;
      }
      // The line begun at s is longer than the cap.
      const nl = bytes.indexOf(NL, s + cap);
      if (s > from) this.window.append(bytes.subarray(from, s), countNewlines(bytes, from, s));
      const line = bytes.toString("utf8", s, nl);
      const kept = utf8Prefix(line, cap);
      const marked = kept + cutMarker(nl - s - utf8Length(kept));
      this.lines.countCut();
      this.window.append(Buffer.from(marked + "\n"), 1);
      if (nl === end - 1) lastLineBytes = utf8Length(marked);
      from = s = nl + 1;
    }
    if (from < end) {
      this.window.append(bytes.subarray(from), countNewlines(bytes, from, end));
      // (A negative start would count from the end: a lone "\n" has no earlier newline.)
      lastLineBytes = end - 2 - (end >= 2 ? bytes.lastIndexOf(NL, end - 2) : -1);
    }
    this.lines.lastLineBytes = lastLineBytes;
  }

  private commitText(completed: string, lines = this.lines.lines): void {
    if (completed !== "") this.window.append(Buffer.from(completed, "utf8"), lines);
  }
}
