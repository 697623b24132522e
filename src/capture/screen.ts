// The terminal model: output that moves the cursor (progress displays that redraw several lines,
// full-screen programs) is run through a headless terminal emulator (@xterm/headless), so the view
// holds what a person would see — the final frame, not every frame glued together.
//
// Memory stays bounded: rows that scroll off the top of the normal screen can never change again,
// so after every slice they are harvested as finished lines (wrapped rows joined back into one
// line, of which only the first maxLineBytes are kept: harvested-line.ts). The scrollback is kept full rather than emptied: a full one recycles its oldest row for the
// next one scrolled in, where one with room allocates a row (emptying it after every slice made every
// scroll allocate: a tenth of the model's time in cloning rows, and ~250 MB peak RSS on 32 MiB of
// redrawn output). The screen itself is rendered only when a view is built. The alternate screen
// keeps no scrollback, so a full-screen program leaves nothing behind — neither the rows its
// newlines scroll off nor those a scroll-up (`CSI n S`) drops — and leaving it (`CSI ? 1049 l`)
// brings the normal screen back as it was.
// On the normal screen a scroll-up with the scroll region at the top row sends the rows it scrolls
// off to the scrollback, as xterm does; xterm.js dropped them (its own FIXME), so `seq 30; tput indn 5`
// on 24 rows lost lines 8–12 from the captured output.
// Clearing the normal screen (`CSI 2 J`, `CSI J` from the top-left corner, a reset `ESC c`) first
// scrolls its rows up to the last one written into the scrollback, as VTE and PuTTY do (xterm.js's
// scrollOnEraseInDisplay, done here so the rows are harvested at once, like SU's): they used to be
// erased, so `seq 1 5; printf '\033[2J\033[H'; echo after` showed only `after`, untruncated, and a
// program redrawing between clears (watch-like, on a pipe too) kept only its last frame. Now every
// frame stays, in order, and the limits and the spill apply to them as to any line.
import { createRequire } from "node:module";
import type { IBuffer, Terminal as XTerminal } from "@xterm/headless";
import { clampCounts } from "./clamp-counts.js";
import { eraseAbove } from "./erase-above.js";
import { HarvestedLine, capLine } from "./harvested-line.js";
import { openSequenceStart } from "./open-sequence.js";
import { utf8Length } from "./utf8.js";
import { type PrintingHandler, printByCharacterWithoutAutowrap } from "./print-runs.js";

/** Text fed to the emulator per synchronous write; bounds how many rows one write can scroll. */
const SLICE = 2048;
/** The emulator's internals used here: a synchronous write, the normal buffer's row list, and a newline's scroll (for SU). */
interface Core {
  writeSync(data: string): void;
  readonly buffers: { readonly normal: { readonly lines: RowList } };
  /** `scroll` moves the scroll region up one row, the top row into the scrollback when the region starts at the top. */
  readonly _bufferService: { scroll(eraseAttr: unknown): void; readonly buffer: ActiveBuffer };
  readonly _inputHandler: InputHandler;
}
/** The active buffer: the cursor (x may be `cols`, a wrap pending), the rows (`ybase` the screen's first). */
interface ActiveBuffer {
  readonly scrollTop: number;
  readonly scrollBottom: number;
  readonly x: number;
  readonly y: number;
  readonly ybase: number;
  readonly lines: { readonly length: number; get(i: number): { isWrapped: boolean } | undefined };
}
/** The emulator's sequence handlers used here (see erase-above.ts, print-runs.ts and repeat below). */
export interface InputHandler extends PrintingHandler {
  _eraseAttrData(): unknown;
  /** Clamps the cursor to the screen, its column to `maxCol`. */
  _restrictCursor(maxCol?: number): void;
  /** Erases screen row y from column start to end (exclusive), its wrap flag too when asked. */
  _eraseInBufferLine(y: number, start: number, end: number, clearWrap?: boolean, respectProtect?: boolean): void;
  /** Erases screen row y and its wrap flag. */
  _resetBufferLine(y: number, respectProtect?: boolean): void;
  /** REP: prints the character before the cursor `params.params[0]` more times. */
  repeatPrecedingCharacter(params: { readonly params: ArrayLike<number>; readonly length: number }): boolean;
}
/** Fires with the number of rows dropped from the top (a full list recycling its oldest, an erase). */
interface RowList {
  readonly onTrim: (listener: (rows: number) => void) => unknown;
}

type TerminalCtor = new (options: Record<string, unknown>) => XTerminal;
let TerminalClass: TerminalCtor | undefined;
function terminalClass(): TerminalCtor {
  // Loaded on first use: plain output never pays for the emulator's module.
  TerminalClass ??= (createRequire(import.meta.url)("@xterm/headless") as { Terminal: TerminalCtor }).Terminal;
  return TerminalClass;
}

export interface ScreenText {
  /** Finished lines and the rows on screen: the screen's empty rows below the cursor are left out. */
  readonly text: string;
  /** A line in it was longer than the line cap and was cut (a harvested line only: see render). */
  readonly cut: boolean;
}

/** Receives a finished line: its first bytes (see HarvestedLine) and its UTF-8 bytes in all. */
export type Finished = (line: string, bytes: number) => void;

export class TerminalScreen {
  private readonly term: XTerminal;
  private readonly core: Core;
  /** The line the rows harvested last belong to; whether it goes on is decided by the next row. */
  private readonly pending: HarvestedLine;
  /** An escape sequence split across writes, held until it is complete. */
  private held = "";
  /** The current write's receiver of finished lines (for the parser hooks below). */
  private finishing: Finished | undefined;
  /** Rows at the top of the normal scrollback already passed on; rows trimmed from the top lower it. */
  private collected = 0;
  /** Writes (and renders) the emulator threw on (see writeSlices). */
  faults = 0;
  /** The normal buffer's row list whose trims are counted (a reset, `ESC c`, makes a new one). */
  private watched: RowList | undefined;

  constructor(
    readonly cols: number,
    readonly rows: number,
    /** maxLineBytes: a harvested line keeps its first bytes only (see HarvestedLine). */
    private readonly cap: number,
  ) {
    this.pending = new HarvestedLine(cap);
    const Terminal = terminalClass();
    // Every slice of SLICE characters scrolls at most SLICE rows, and a repeat (`CSI n b`, one
    // sequence) at most SLICE + 1 between its own harvests (see repeat), and a harvest follows every
    // slice, so the scrollback of twice that never drops a row before it is harvested (a full
    // scrollback of 120 columns is ~6 MB of cells).
    this.term = new Terminal({ cols, rows, scrollback: 2 * SLICE, convertEol: true, allowProposedApi: true, logLevel: "off" });
    // The public write() parses later, on a timer; capture views are synchronous and the parser must
    // keep pace with the process (the process waits while we parse, which bounds memory).
    this.core = (this.term as unknown as { _core: Core })._core;
    if (
      typeof this.core?.writeSync !== "function" ||
      typeof this.core.buffers?.normal?.lines?.onTrim !== "function" ||
      typeof this.core._bufferService?.scroll !== "function" ||
      typeof this.core._inputHandler?._eraseAttrData !== "function" ||
      typeof this.core._inputHandler._restrictCursor !== "function" ||
      typeof this.core._inputHandler._eraseInBufferLine !== "function" ||
      typeof this.core._inputHandler._resetBufferLine !== "function" ||
      typeof this.core._inputHandler.repeatPrecedingCharacter !== "function" ||
      typeof this.core._inputHandler.print !== "function" ||
      typeof this.core._inputHandler._parser?.setPrintHandler !== "function" ||
      typeof this.core._inputHandler._parser.registerCsiHandler !== "function" ||
      typeof this.core._inputHandler._coreService?.decPrivateModes?.wraparound !== "boolean"
    ) {
      throw new Error(
        "@xterm/headless no longer offers a synchronous write, row trims, a newline's scroll and the handlers spool works around; pin the version spool was built with",
      );
    }
    printByCharacterWithoutAutowrap(this.core._inputHandler);
    // Registered first, so called last: spool's own handlers below see the counts as they came.
    clampCounts(this.core._inputHandler._parser, cols, rows);
    this.watchTrims();
    // A program's own scrollback erase (`ESC [ 3 J`) or full reset (`ESC c`) would drop rows that
    // scrolled off since the last harvest — rows a harvest between two reads would have kept, so the
    // view would depend on where the reads fell. They are harvested first, from inside the parser,
    // which then runs the sequence as usual (returning false hands it on).
    // (The erase then trims the rows it removes, which lowers `collected` by as many.)
    const beforeErase = (params: (number | number[])[], respectProtect: boolean): boolean => {
      if (params[0] === 3 && this.finishing) this.collect(this.finishing);
      const buffer = this.term.buffer.active;
      if (params[0] === 2 || ((params[0] ?? 0) === 0 && buffer.cursorX === 0 && buffer.cursorY === 0)) this.keepScreen();
      if (params[0] === 1) return eraseAbove(this.core._inputHandler, this.core._bufferService.buffer, cols, rows, respectProtect);
      return false;
    };
    this.term.parser.registerCsiHandler({ final: "J" }, (params) => beforeErase(params, false));
    this.term.parser.registerCsiHandler({ prefix: "?", final: "J" }, (params) => beforeErase(params, true));
    this.term.parser.registerCsiHandler({ final: "b" }, (params) => this.repeat(params));
    this.term.parser.registerCsiHandler({ final: "S" }, (params) => this.scrollUp(params));
    this.term.parser.registerEscHandler({ final: "c" }, () => {
      this.keepScreen();
      if (this.finishing) {
        this.collect(this.finishing);
        // The reset clears the screen too: the line the last harvested row began ends there.
        this.finishPending(this.finishing);
        this.collected = 0;
      }
      return false;
    });
  }

  /**
   * `CSI n S` on the normal screen with the scroll region at the top: n newlines' scrolls at the bottom
   * of the region (the cursor stays), so the rows go to the scrollback as xterm's do, at most the
   * region's height (xterm clamps there too: more scrolls only blank rows). Harvested at once, so a
   * run of them in one slice cannot scroll rows out of the scrollback before they are passed on.
   * Anything else (the alternate screen, a region below the top) is xterm.js's own: rows dropped.
   */
  private scrollUp(params: (number | number[])[]): boolean {
    const buffer = this.core._bufferService.buffer;
    if (this.term.buffer.active.type !== "normal" || buffer.scrollTop !== 0) return false;
    const asked = typeof params[0] === "number" && params[0] > 0 ? params[0] : 1;
    const n = Math.min(asked, buffer.scrollBottom - buffer.scrollTop + 1);
    const erase = this.core._inputHandler._eraseAttrData();
    for (let i = 0; i < n; i++) this.core._bufferService.scroll(erase);
    if (this.finishing) this.collect(this.finishing);
    return true;
  }

  /**
   * Before the normal screen is cleared: its rows down to the last one written go to the scrollback
   * (the cursor stays), and are harvested at once — a slice can hold hundreds of clears, each of up
   * to a screen of rows, more than the scrollback holds between harvests. Not under a scroll region
   * (the rows would not reach the scrollback) nor on the alternate screen, which keeps none.
   */
  private keepScreen(): void {
    const buffer = this.core._bufferService.buffer;
    if (this.term.buffer.active.type !== "normal" || buffer.scrollTop !== 0 || buffer.scrollBottom !== this.rows - 1) return;
    const normal = this.term.buffer.normal;
    let last = this.rows - 1;
    while (last >= 0 && (normal.getLine(normal.baseY + last)?.translateToString(true) ?? "") === "") last--;
    if (last < 0) return;
    const erase = this.core._inputHandler._eraseAttrData();
    for (let i = 0; i <= last; i++) this.core._bufferService.scroll(erase);
    if (this.finishing) this.collect(this.finishing);
  }

  /**
   * `CSI n b`, the character before the cursor n more times: printed in runs of at most SLICE rows,
   * each harvested before the next, so however large n is no row leaves the scrollback unharvested
   * (the emulator's own REP prints all n at once: `printf 'x\033[300000000b'` scrolled 2.5 million
   * rows in one go, lost all but the scrollback's last 4,096, and held the 1.2 GB array of them).
   * A character is at most two columns, so a run of SLICE × cols / 2 scrolls at most SLICE + 1 rows.
   */
  private repeat(params: (number | number[])[]): boolean {
    const first = params[0];
    let left = (Array.isArray(first) ? first[0] : first) || 1;
    const run = SLICE * Math.max(1, Math.floor(this.cols / 2));
    const handler = this.core._inputHandler;
    // What the slice scrolled before the repeat goes first: the runs then have the scrollback to themselves.
    if (this.finishing) this.collect(this.finishing);
    while (left > 0) {
      const n = Math.min(left, run);
      handler.repeatPrecedingCharacter({ params: [n], length: 1 });
      left -= n;
      if (this.finishing) this.collect(this.finishing);
      const period = left > 0 ? this.repeatPeriod() : undefined;
      if (period !== undefined && left >= period.chars) {
        const periods = Math.floor(left / period.chars);
        if (this.term.buffer.active.type === "normal") this.pending.addBytes(periods * period.bytes);
        left -= periods * period.chars;
      }
    }
    return true;
  }

  /**
   * Whether the rest of a repeat can be counted instead of printed, and how: the screen's rows above
   * the cursor's are full rows of the repeated character continuing the line, the cursor's row holds
   * it up to the cursor, so each further row's worth of characters scrolls one full row off and
   * leaves the screen as it was. On the normal screen only once the harvested line keeps no more
   * text (its rows add only bytes). Without it `CSI 2147483647 b` printed for about a minute, the
   * event loop (and a SIGTERM) waiting.
   */
  private repeatPeriod(): { chars: number; bytes: number } | undefined {
    const buffer = this.core._bufferService.buffer;
    const handler = this.core._inputHandler;
    const active = this.term.buffer.active;
    if (active.type === "normal" && !this.pending.full) return undefined;
    if (!handler._coreService.decPrivateModes.wraparound || handler._coreService.modes.insertMode) return undefined;
    if (this.rows < 2 || buffer.scrollTop !== 0 || buffer.scrollBottom !== this.rows - 1 || buffer.y !== this.rows - 1) return undefined;
    const bottom = active.getLine(active.baseY + this.rows - 1);
    const last = bottom?.getCell(buffer.x - 1);
    if (bottom === undefined || last === undefined) return undefined;
    // The last cell of a wide character is its second half: the character is one cell before.
    const cell = last.getWidth() === 0 ? bottom.getCell(buffer.x - 2) : last;
    const width = cell?.getWidth() ?? 0;
    if (cell === undefined || width === 0 || buffer.x % width !== 0) return undefined;
    const perRow = Math.floor(this.cols / width);
    if (buffer.x > perRow * width) return undefined;
    const ch = cell.getChars();
    const full = ch.repeat(perRow) + " ".repeat(this.cols - perRow * width);
    const upToCursor = ch.repeat(buffer.x / width) + " ".repeat(this.cols - buffer.x);
    for (let y = 0; y < this.rows; y++) {
      const line = active.getLine(active.baseY + y);
      if (!line?.isWrapped || line.translateToString(false) !== (y < this.rows - 1 ? full : upToCursor)) return undefined;
    }
    return { chars: perRow, bytes: utf8Length(active.getLine(active.baseY)!.translateToString(true)) };
  }

  /** Feeds decoded output; returns the lines that were finished by scrolling off the screen. */
  write(text: string, finished: Finished): void {
    this.finishing = finished;
    try {
      this.feed(text, finished);
    } finally {
      this.finishing = undefined;
    }
  }

  private feed(text: string, finished: Finished): void {
    if (this.held) {
      text = this.held + text;
      this.held = "";
    }
    const tail = openSequenceStart(text);
    if (tail >= 0) {
      this.held = text.slice(tail);
      text = text.slice(0, tail);
    }
    this.writeSlices(text, finished);
  }

  /** Writes in slices of at most SLICE characters, harvesting after each (see SLICE). */
  private writeSlices(text: string, finished: Finished): void {
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + SLICE);
      if (end < text.length) {
        const c = text.charCodeAt(end - 1);
        if (c >= 0xd800 && c <= 0xdbff) end--;
        // A slice does not end inside an escape sequence: each reaches the emulator in one write.
        const cut = openSequenceStart(text.slice(at, end));
        if (cut > 0) end = at + cut;
      }
      try {
        this.core.writeSync(text.slice(at, end));
        this.collect(finished);
      } catch {
        // A fault in the emulator (one is worked around: erase-above.ts) must not end the command's
        // capture, which runs in the pipe's data handler (a throw there ended `spool run`): the rest
        // of this slice is dropped and the emulator goes on with the next. The spill keeps the bytes.
        this.faults++;
      }
      at = end;
    }
  }

  /** End of output: an incomplete sequence is written as it is (the emulator decides what it means). */
  end(finished: Finished): void {
    if (!this.held) return;
    const rest = this.held;
    this.held = "";
    this.finishing = finished;
    try {
      // Sliced too: the sequence can hold HOLD_LIMIT characters, each a newline it executes.
      this.writeSlices(rest, finished);
    } finally {
      this.finishing = undefined;
    }
  }

  /**
   * Counts the rows the normal buffer drops from its top, which were passed on before they went. A
   * reset makes a new list, watched from the next harvest on: it cannot trim before then, as it starts
   * empty and one slice scrolls fewer rows than it holds.
   */
  private watchTrims(): void {
    const lines = this.core.buffers.normal.lines;
    if (lines === this.watched) return;
    this.watched = lines;
    lines.onTrim((rows) => {
      if (lines === this.watched) this.collected = Math.max(0, this.collected - rows);
    });
  }

  /**
   * Passes on the scrollback rows not passed on yet. A row's own wrap flag, final once it is in the
   * scrollback, says whether it continues the line before it; the screen's rows can still change
   * theirs (an erase clears it), so the last row harvested stays pending until the next one scrolls
   * off. (Deciding by the first screen row's flag at each harvest made the lines depend on where the
   * reads fell: a wrapped line whose continuation was erased after scrolling was one line or two.)
   */
  private collect(finished: Finished): void {
    this.watchTrims();
    const normal = this.term.buffer.normal;
    const base = normal.baseY;
    if (base <= this.collected) return;
    const pending = this.pending;
    for (let y = this.collected; y < base; y++) {
      const row = normal.getLine(y);
      if (!row?.isWrapped) this.finishPending(finished);
      pending.add(row ? row.translateToString(true) : "");
    }
    this.collected = base;
  }

  private finishPending(finished: Finished): void {
    const pending = this.pending;
    if (!pending.open) return;
    finished(pending.text, pending.bytes);
    pending.clear();
  }

  /** The screen as a person sees it now; nothing if the emulator faults (see writeSlices). */
  render(): ScreenText {
    try {
      return this.renderRows();
    } catch {
      this.faults++;
      return { text: "", cut: false };
    }
  }

  private renderRows(): ScreenText {
    const buf: IBuffer = this.term.buffer.active;
    const top = buf.baseY;
    let last = -1;
    for (let y = this.rows - 1; y >= 0; y--) {
      if ((buf.getLine(top + y)?.translateToString(true) ?? "") !== "") {
        last = y;
        break;
      }
    }
    const cursorY = buf.cursorY;
    // The cursor below the last row written means that row was finished with a newline.
    const lastRow = Math.max(last, buf.cursorX > 0 ? cursorY : cursorY - 1);
    const lines: string[] = [];
    let cut = false;
    // The pending line goes on in the screen's first row when that row continues it; else it is a
    // line of its own (the alternate screen's rows never continue it).
    let carried = this.pending.open;
    if (carried && !(buf.type === "normal" && lastRow >= 0 && buf.getLine(top)?.isWrapped)) {
      const own = capLine(this.pending.text, this.pending.bytes, this.cap);
      lines.push(own.line);
      cut = own.cut;
      carried = false;
    }
    let line = "";
    for (let y = 0; y <= lastRow; y++) {
      line += buf.getLine(top + y)?.translateToString(true) ?? "";
      if (!buf.getLine(top + y + 1)?.isWrapped || y === lastRow) {
        if (carried) {
          // Cut as it will be once it is finished.
          const whole = this.pending.with(line);
          const capped = capLine(whole.text, whole.bytes, this.cap);
          line = capped.line;
          cut = capped.cut;
          carried = false;
        }
        lines.push(line);
        line = "";
      }
    }
    if (lines.length === 0) return { text: "", cut };
    const closed = cursorY > lastRow;
    return { text: lines.join("\n") + (closed ? "\n" : ""), cut };
  }

  dispose(): void {
    this.term.dispose();
  }
}
