// The terminal model: output that moves the cursor (progress displays that redraw several lines,
// full-screen programs) is run through a headless terminal emulator (@xterm/headless), so the view
// holds what a person would see — the final frame, not every frame glued together.
//
// Memory stays bounded: rows that scroll off the top of the normal screen can never change again,
// so after every slice they are harvested as finished lines (wrapped rows joined back into one
// line) and the emulator's scrollback is emptied. The screen itself is rendered only when a view is
// built. The alternate screen keeps no scrollback, so a full-screen program leaves nothing behind.
import { createRequire } from "node:module";
import type { IBuffer, Terminal as XTerminal } from "@xterm/headless";
import { openSequenceStart } from "./open-sequence.js";

/** Text fed to the emulator per synchronous write; bounds how many rows one write can scroll. */
const SLICE = 2048;
/** Leaving the alternate screen (DECRST 1049, 1047 or 47, alone or among other private modes). */
const LEAVE_ALTERNATE = /(?:\x1b\[|\u009b)\?(?:\d+;)*(?:1049|1047|47)(?:;\d+)*l/g;
/** `ESC [ 3 J` erases the scrollback only (the screen is untouched). */
const ERASE_SCROLLBACK = "\x1b[3J";

interface WritableCore {
  writeSync(data: string): void;
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
}

export class TerminalScreen {
  private readonly term: XTerminal;
  private readonly core: WritableCore;
  /** Text of a line whose first rows scrolled off while the rest is still on screen. */
  private pending = "";
  /** An escape sequence split across writes, held until it is complete. */
  private held = "";
  /** The current write's receiver of finished lines (for the parser hooks below). */
  private finishing: ((line: string) => void) | undefined;
  /** Our own scrollback erase is being written: the hook below must not harvest again. */
  private erasing = false;
  /**
   * Scrollback rows already passed on but not erased yet: the erase is an escape sequence, which
   * reaches the active buffer only, so while the alternate screen is up the normal one keeps them.
   */
  private collected = 0;

  constructor(
    readonly cols: number,
    readonly rows: number,
  ) {
    const Terminal = terminalClass();
    // Every slice of SLICE characters can scroll at most SLICE rows, so the scrollback never trims
    // a row before it is harvested — twice that, for rows collected before the alternate screen came
    // up and erased only after it is gone (see `collected`).
    this.term = new Terminal({ cols, rows, scrollback: 2 * SLICE + rows, convertEol: true, allowProposedApi: true, logLevel: "off" });
    // The public write() parses later, on a timer; capture views are synchronous and the parser must
    // keep pace with the process (the process waits while we parse, which bounds memory).
    this.core = (this.term as unknown as { _core: WritableCore })._core;
    if (typeof this.core?.writeSync !== "function") {
      throw new Error("@xterm/headless no longer offers a synchronous write; pin the version spool was built with");
    }
    // A program's own scrollback erase (`ESC [ 3 J`) or full reset (`ESC c`) would drop rows that
    // scrolled off since the last harvest — rows a harvest between two reads would have kept, so the
    // view would depend on where the reads fell. They are harvested first, from inside the parser,
    // which then runs the sequence as usual (returning false hands it on).
    const beforeErase = (params: (number | number[])[]): boolean => {
      if (params[0] === 3 && !this.erasing && this.finishing) {
        this.collect(this.finishing);
        // It erases the active buffer's scrollback: the normal one's only when that is the active one.
        if (this.term.buffer.active.type === "normal") this.collected = 0;
      }
      return false;
    };
    this.term.parser.registerCsiHandler({ final: "J" }, beforeErase);
    this.term.parser.registerCsiHandler({ prefix: "?", final: "J" }, beforeErase);
    this.term.parser.registerEscHandler({ final: "c" }, () => {
      if (this.finishing) {
        this.collect(this.finishing);
        // The reset clears the screen too: the start of a line whose rest was on it is a line of its own.
        if (this.pending !== "") this.finishing(this.pending);
        this.pending = "";
        this.collected = 0;
      }
      return false;
    });
  }

  /** Feeds decoded output; returns the lines that were finished by scrolling off the screen. */
  write(text: string, finished: (line: string) => void): void {
    this.finishing = finished;
    try {
      this.feed(text, finished);
    } finally {
      this.finishing = undefined;
    }
  }

  private feed(text: string, finished: (line: string) => void): void {
    if (this.held) {
      text = this.held + text;
      this.held = "";
    }
    const tail = openSequenceStart(text);
    if (tail >= 0) {
      this.held = text.slice(tail);
      text = text.slice(0, tail);
    }
    // Where the next leaving of the alternate screen ends (searched once per match, not per slice).
    let leaveEnd = -2;
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + SLICE);
      if (end < text.length) {
        const c = text.charCodeAt(end - 1);
        if (c >= 0xd800 && c <= 0xdbff) end--;
        // Never end a slice inside an escape sequence: the scrollback erase below must reach the
        // parser in its ground state.
        const cut = openSequenceStart(text.slice(at, end));
        if (cut > 0) end = at + cut;
      }
      // A slice ends right after the alternate screen is left, so the harvest below erases what the
      // normal screen collected while it was up (see `collected`): otherwise a program that goes back
      // into it within the same read would keep those rows, and rows would pile up episode by episode
      // until the scrollback dropped some unharvested.
      if (leaveEnd !== -1 && leaveEnd <= at) {
        LEAVE_ALTERNATE.lastIndex = at;
        const leave = LEAVE_ALTERNATE.exec(text);
        leaveEnd = leave === null ? -1 : leave.index + leave[0].length;
      }
      if (leaveEnd > at && leaveEnd < end) end = leaveEnd;
      this.core.writeSync(text.slice(at, end));
      this.harvest(finished);
      at = end;
    }
  }

  /** End of output: an incomplete sequence is written as it is (the emulator decides what it means). */
  end(finished: (line: string) => void): void {
    if (!this.held) return;
    const rest = this.held;
    this.held = "";
    this.finishing = finished;
    try {
      this.core.writeSync(rest);
      this.harvest(finished);
    } finally {
      this.finishing = undefined;
    }
  }

  private harvest(finished: (line: string) => void): void {
    this.collect(finished);
    // The erase reaches the active buffer only: with the alternate screen up it waits.
    if (this.collected === 0 || this.term.buffer.active.type !== "normal") return;
    this.erasing = true;
    try {
      this.core.writeSync(ERASE_SCROLLBACK);
    } finally {
      this.erasing = false;
    }
    this.collected = 0;
  }

  /** Passes on the scrollback rows not passed on yet as finished lines. */
  private collect(finished: (line: string) => void): void {
    const normal = this.term.buffer.normal;
    const base = normal.baseY;
    if (base <= this.collected) return;
    let line = this.pending;
    for (let y = this.collected; y < base; y++) {
      const row = normal.getLine(y);
      line += row ? row.translateToString(true) : "";
      const next = normal.getLine(y + 1);
      if (!next?.isWrapped) {
        finished(line);
        line = "";
      }
    }
    this.pending = line;
    this.collected = base;
  }

  /** The screen as a person sees it now. */
  render(): ScreenText {
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
    let line = buf.type === "normal" ? this.pending : "";
    for (let y = 0; y <= lastRow; y++) {
      line += buf.getLine(top + y)?.translateToString(true) ?? "";
      if (!buf.getLine(top + y + 1)?.isWrapped || y === lastRow) {
        lines.push(line);
        line = "";
      }
    }
    if (lines.length === 0) return { text: line };
    const closed = cursorY > lastRow;
    return { text: lines.join("\n") + (closed ? "\n" : "") };
  }

  dispose(): void {
    this.term.dispose();
  }
}
