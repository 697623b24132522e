// Backspace in the cleaned view (lines.ts, row.ts): held to a small reference model of one terminal
// line, itself held to a real emulator (@xterm/headless) where the two are meant to agree (no `\r`,
// which spool treats as the start of a new frame rather than a move to column 0). The emulator keeps a
// space that was written (only never-written cells are trimmed), as the model does. And the whole
// cleaned view against the emulator for text with `\r` and `\n` too, where spool's frame rule is
// given to the emulator as an erase of the line at the first write after a `\r`.
import { createRequire } from "node:module";
import type { Terminal as XTerminal } from "@xterm/headless";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputCapture, resolveLimits } from "../../src/capture/index.js";
import { Row } from "../../src/capture/row.js";

/** Code points the cursor does not advance over (lines.ts's rule, restated). */
const ZERO_WIDTH = /^[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb\p{M}\u200b-\u200d\u2060]$/u;
/** What the view removes (window.ts). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]+/g;
/** The wide characters the tests write (xterm.js's Unicode 6 table has them two columns wide). */
const WIDE = /^[\u3000-\u9fff\uac00-\ud7a3\uff01-\uff60]$/u;

/**
 * One terminal line per line of output: columns (a code point with the zero-width ones written after
 * it; a wide character and the half it covers; blanks), a cursor, zero-width code points before the
 * first column, and spool's `\r` rule (the next write starts a new frame; the old one stays shown until
 * then). Until a line's first backspace spool keeps its tabs as they are (the view shows `\t`).
 */
const HALF = "";
function model(text: string): string {
  const lines: string[] = [];
  let cells: (string | undefined)[] = [];
  let lead = "";
  let cursor = 0;
  let cr = false;
  let raw = "";
  let moved = false;
  const show = (): string => {
    if (!moved) return raw;
    let s = lead;
    for (let i = 0; i < cells.length; i++) {
      const c = cells[i];
      if (c !== undefined && c !== HALF && WIDE.test([...c][0]!)) {
        s += c;
        i++;
      } else s += c === undefined || c === HALF ? " " : c;
    }
    return s;
  };
  const reset = (): void => {
    cells = [];
    lead = "";
    cursor = 0;
    cr = false;
    raw = "";
    moved = false;
  };
  const isWideAt = (i: number): boolean => i >= 0 && cells[i] !== undefined && cells[i] !== HALF && WIDE.test([...cells[i]!][0]!) && cells[i + 1] === HALF;
  for (const c of text) {
    if (c === "\n") {
      lines.push(show());
      reset();
    } else if (c === "\r") {
      cr = true;
    } else if (c === "\b") {
      if (!cr && cursor > 0) {
        moved = true;
        cursor--;
      }
    } else {
      if (cr) reset();
      if (!moved) raw += c;
      if (c === "\t") cursor = (Math.floor(cursor / 8) + 1) * 8;
      else if (ZERO_WIDTH.test(c)) {
        let x = cursor - 1;
        if (x < 0) lead += c;
        else {
          if (cells[x] === HALF && isWideAt(x - 1)) x--;
          cells[x] = (cells[x] === undefined || cells[x] === HALF ? " " : cells[x]) + c;
        }
      } else {
        const w = WIDE.test(c) ? 2 : 1;
        if (cells[cursor] === HALF && isWideAt(cursor - 1)) cells[cursor - 1] = undefined;
        cells[cursor] = c;
        if (w === 2) cells[cursor + 1] = HALF;
        cursor += w;
      }
    }
  }
  return (lines.map((l) => `${l}\n`).join("") + show()).replace(CONTROL, "");
}

/** A view line as a terminal shows it: tabs (kept until a backspace) to the next multiple of 8, trailing blanks trimmed. */
const asShown = (line: string): string => {
  let out = "";
  let col = 0;
  for (const c of line) {
    if (c === "\t") {
      const to = (Math.floor(col / 8) + 1) * 8;
      out += " ".repeat(to - col);
      col = to;
    } else {
      out += c;
      col += WIDE.test(c) ? 2 : ZERO_WIDTH.test(c) ? 0 : 1;
    }
  }
  return out.trimEnd();
};

function capture(reads: (string | Buffer)[]): string {
  const c = new OutputCapture(resolveLimits({}));
  for (const r of reads) c.push(typeof r === "string" ? Buffer.from(r, "utf8") : r);
  c.end();
  return c.view().text;
}

/** The UTF-8 bytes of `text` cut at the given offsets. */
function splitAt(text: string, cuts: number[]): Buffer[] {
  const all = Buffer.from(text, "utf8");
  const points = [...new Set(cuts.map((k) => k % (all.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, all.length]) {
    if (p > prev) out.push(all.subarray(prev, p));
    prev = p;
  }
  return out;
}

describe("backspace", () => {
  it("overwrites as a terminal and col -b do: the rest of the line stays", () => {
    expect(capture(["abc\b\bX\n"])).toBe("aXc\n");
    expect(capture(["ab\b\b\b\bZ\n"])).toBe("Zb\n");
    expect(capture(["abc\b\b", "X", "\n"])).toBe("aXc\n");
    expect(capture(["abc\b\b"])).toBe("abc");
  });

  it("man-page overstrike (underline `_\\bX`, bold `X\\bX`, both) comes out plain", () => {
    expect(capture(["_\bu_\bs_\be B\bBo\bol\bld\bd _\bX\bX\n"])).toBe("use Bold X\n");
    expect(capture(["_\bé_\b😀 ü\bü\n"])).toBe("é😀 ü\n");
  });

  it("does nothing at column 0, nor right after a `\\r`, whose frame stays until something is written", () => {
    expect(capture(["\b\bok\n"])).toBe("ok\n");
    expect(capture(["abc\r\b\n"])).toBe("abc\n");
    expect(capture(["abc\r\bX\n"])).toBe("X\n");
    expect(capture(["abc\b\b\rQ\n"])).toBe("Q\n");
  });

  it("steps over combining marks and controls, which take no cell", () => {
    expect(capture(["e\u0301x\b\bY\n"])).toBe("Yx\n");
    expect(capture(["abc\x07\bX\n"])).toBe("abX\n");
    expect(capture(["ab\b\u0301\n"])).toBe("a\u0301b\n");
  });

  it("moves over wide characters and tabs by columns, as a terminal does", () => {
    // A wide character is two columns: one backspace lands on its second half, and writing there
    // blanks its first (xterm, VTE). The code-point cells before gave `日X`, `abX`, `aX`.
    expect(capture(["日本\bX\n"])).toBe("日 X\n");
    expect(capture(["日本\b\bX\n"])).toBe("日X \n");
    expect(capture(["abc\b\b日\n"])).toBe("a日\n");
    expect(capture(["日本語\b\b\b日\n"])).toBe("日 日 \n");
    // A tab moves to the next multiple of 8 without writing; the columns it skipped stay blank.
    expect(capture(["ab\t\bX\n"])).toBe("ab     X\n");
    expect(capture(["a\tb\b\b\bX\n"])).toBe("a     X b\n");
    expect(capture(["abcdefghij\b\b\b\b\b\b\b\b\b\tX\n"])).toBe("abcdefghXj\n");
    // Without a backspace the line is as it came, its tabs too.
    expect(capture(["a\tb日\n"])).toBe("a\tb日\n");
  });

  it("a row's byte count is its text's, whatever is written over what", () => {
    const piece = fc.constantFrom("a", "xyz", " ", "é", "😀", "中", "日本", "\t", "\u0301", "\x07", "\b", "\b\b", "\b\b\b");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 50 }), (parts) => {
        const row = new Row();
        for (const p of parts) {
          if (p.startsWith("\b")) for (let i = 0; i < p.length; i++) row.backspace();
          else row.write(p);
          expect(row.bytes).toBe(Buffer.byteLength(row.render()));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("an overwrite that takes the line over the cap cuts it, with the marker, once", () => {
    const c = new OutputCapture(resolveLimits({ maxLineBytes: 8 }));
    c.push(Buffer.from("abcdefgh\b\b\b€€€\n"));
    c.end();
    const v = c.view();
    expect(v.text).toBe("abcde€ [… 6 bytes cut from this line]\n");
    expect(v.truncation.cutLines).toBe(1);
  });

  it("a backspace that makes a tabbed line a row over the cap cuts it there, and counts the row's bytes", () => {
    // As a string `ab\tc` is 4 bytes; as a row the tab is spaces to column 8, 9 bytes.
    for (const reads of [["ab\tc\b"], ["ab\t", "c", "\b"], ["ab\tc\b\n"]]) {
      const c = new OutputCapture(resolveLimits({ maxLineBytes: 4 }));
      for (const r of reads) c.push(Buffer.from(r));
      c.end();
      const v = c.view();
      expect(v.text.replace(/\n$/, "")).toBe("ab   [… 5 bytes cut from this line]");
      expect(v.truncation.cutLines).toBe(1);
      expect(v.truncation.totalBytes).toBeGreaterThanOrEqual(v.truncation.outputBytes);
    }
  });

  it("matches the reference line model, for any split of the output into reads", () => {
    const piece = fc.constantFrom(
      "a",
      "b",
      "xyz",
      " ",
      "é",
      "😀",
      "中",
      "日本",
      "\t",
      "\b",
      "\b",
      "\b\b",
      "\r",
      "\n",
      "\r\n",
      "\x07",
      "\u0301",
      "\x1b[31m",
      "_\b",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 }), (parts, cuts) => {
        const text = parts.join("");
        const want = model(text.replace(/\x1b\[31m/g, ""));
        expect(capture([text])).toBe(want);
        // Reads split anywhere (UTF-8 byte splits are the other properties' concern): the byte path
        // must not append plain text where the cursor was moved back.
        expect(capture(splitAt(text, cuts))).toBe(want);
      }),
      { numRuns: 1000 },
    );
  });

  it("the reference model is a terminal's line, where there is no `\\r`", async () => {
    const { Terminal } = createRequire(import.meta.url)("@xterm/headless") as { Terminal: new (o: object) => XTerminal };
    const term = new Terminal({ cols: 200, rows: 5, allowProposedApi: true, logLevel: "off" });
    const shown = async (text: string): Promise<string> => {
      await new Promise<void>((done) => term.write(`\x1bc${text}`, done));
      return term.buffer.active.getLine(0)!.translateToString(true);
    };
    // A combining mark with nothing before it is dropped by the emulator and kept by spool: marks come after a letter here.
    const piece = fc.constantFrom("a", "b", "xyz", " ", "é", "😀", "中", "日本", "語\u0301", "\t", "\b", "\b", "\b\b", "\x07", "o\u0301", "_\b");
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 40 }), async (parts) => {
        const text = parts.join("");
        expect(asShown(model(text))).toBe((await shown(text)).trimEnd());
      }),
      { numRuns: 300 },
    );
    term.dispose();
  });

  it("the cleaned lines are the terminal's lines, trimmed, for text of ASCII, wide characters, combining marks, tabs, `\\b`, `\\r` and `\\n`", async () => {
    const { Terminal } = createRequire(import.meta.url)("@xterm/headless") as { Terminal: new (o: object) => XTerminal };
    const term = new Terminal({ cols: 1000, rows: 100, allowProposedApi: true, logLevel: "off" });
    const shown = async (text: string): Promise<string[]> => {
      // spool's `\r` rule on the terminal: the first write after it erases the old frame (`\r\n` keeps it).
      const framed = text.replace(/\r(\x08*)(?=[^\r\n\x08])/g, "\r$1\x1b[K").replace(/\n/g, "\r\n");
      await new Promise<void>((done) => term.write(`\x1bc${framed}`, done));
      const b = term.buffer.active;
      const rows: string[] = [];
      for (let i = 0; i <= b.baseY + b.cursorY; i++) rows.push(b.getLine(i)!.translateToString(true).trimEnd());
      return rows;
    };
    // Marks come after a letter: after a control the emulator keeps one as a cell of its own (an xterm.js quirk).
    const piece = fc.constantFrom("a", "b", "xyz", " ", "é", "e\u0301", "中", "日本", "語\u0301", "\t", "\b", "\b", "\b\b", "\r", "\n", "\r\n");
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 60 }), async (parts) => {
        const text = parts.join("");
        expect(capture([text]).split("\n").map(asShown)).toEqual(await shown(text));
      }),
      { numRuns: 500 },
    );
    term.dispose();
  });
});
