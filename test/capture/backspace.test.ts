// Backspace in the cleaned view (lines.ts): held to a small reference model of one terminal line,
// itself held to a real emulator (@xterm/headless) where the two are meant to agree (no `\r`, which
// spool treats as the start of a new frame rather than a move to column 0). The emulator keeps a
// space that was written (only never-written cells are trimmed), as the model does.
import { createRequire } from "node:module";
import type { Terminal as XTerminal } from "@xterm/headless";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputCapture, resolveLimits } from "../../src/capture/index.js";

/** Code points the cursor does not advance over (lines.ts's rule, restated). */
const ZERO_WIDTH = /^[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb\p{M}\u200b-\u200d\u2060]$/u;
/** What the view removes (window.ts). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]+/g;

/**
 * One terminal line per line of output: cells (a code point with the zero-width ones written after
 * it), a cursor, zero-width code points before the first cell, and spool's `\r` rule (the next write
 * starts a new frame; the old one stays shown until then).
 */
function model(text: string): string {
  const lines: string[] = [];
  let cells: string[] = [];
  let lead = "";
  let cursor = 0;
  let cr = false;
  for (const c of text) {
    if (c === "\n") {
      lines.push(lead + cells.join(""));
      cells = [];
      lead = "";
      cursor = 0;
      cr = false;
    } else if (c === "\r") {
      cr = true;
    } else if (c === "\b") {
      if (!cr && cursor > 0) cursor--;
    } else {
      if (cr) {
        cells = [];
        lead = "";
        cursor = 0;
        cr = false;
      }
      if (ZERO_WIDTH.test(c)) {
        if (cursor === 0) lead += c;
        else cells[cursor - 1] += c;
      } else cells[cursor++] = c;
    }
  }
  const open = lead + cells.join("");
  return (lines.map((l) => `${l}\n`).join("") + open).replace(CONTROL, "");
}

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

  it("an overwrite that takes the line over the cap cuts it, with the marker, once", () => {
    const c = new OutputCapture(resolveLimits({ maxLineBytes: 8 }));
    c.push(Buffer.from("abcdefgh\b\b\b€€€\n"));
    c.end();
    const v = c.view();
    expect(v.text).toBe("abcde€ [… 6 bytes cut from this line]\n");
    expect(v.truncation.cutLines).toBe(1);
  });

  it("matches the reference line model, for any split of the output into reads", () => {
    const piece = fc.constantFrom("a", "b", "xyz", " ", "é", "😀", "中", "\t", "\b", "\b", "\b\b", "\r", "\n", "\r\n", "\x07", "\u0301", "\x1b[31m", "_\b");
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
    const piece = fc.constantFrom("a", "b", "xyz", " ", "é", "😀", "\b", "\b", "\b\b", "\x07", "o\u0301", "_\b");
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 40 }), async (parts) => {
        const text = parts.join("");
        expect(model(text)).toBe(await shown(text));
      }),
      { numRuns: 300 },
    );
    term.dispose();
  });
});
