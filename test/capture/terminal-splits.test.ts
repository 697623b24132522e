// The terminal model's view does not depend on how the output was split into reads: the same bytes
// whole, split at every offset and at random ones give one view. Also the emulator's faults spool
// works around (erase above from the last column) and a repeat (`CSI n b`) of any size.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { exec, OutputCapture, resolveLimits, utf8Prefix } from "../../src/capture/index.js";
import type { CaptureLimits } from "../../src/capture/index.js";
import type { TerminalSize } from "../../src/capture/output-capture.js";
import { splitAt } from "../support/split-at.js";

const LONG = Boolean(process.env.SPOOL_LONG);
const dir = mkdtempSync(join(tmpdir(), "spool-terminal-splits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SMALL: TerminalSize = { cols: 10, rows: 4 };
const ROOMY = resolveLimits({ maxBytes: 1 << 20, maxLines: 100_000 });

/** The view of a capture pushed `reads`, one push each; the emulator must not have faulted. */
function viewOf(reads: readonly Buffer[], limits: CaptureLimits = ROOMY, size: TerminalSize = SMALL) {
  const c = new OutputCapture(limits, size);
  for (const r of reads) c.push(r);
  c.end();
  const view = c.view();
  expect(c.emulatorFaults, "faults of the emulator").toBe(0);
  return view;
}

/** The view of `bytes` whole, checked against every split in two and every read of one byte. */
function sameForEverySplit(bytes: Buffer, limits: CaptureLimits = ROOMY, size: TerminalSize = SMALL) {
  const whole = viewOf([bytes], limits, size);
  for (let p = 0; p <= bytes.length; p++) expect(viewOf([bytes.subarray(0, p), bytes.subarray(p)], limits, size), `split at ${p}`).toEqual(whole);
  const bytewise = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
  expect(viewOf(bytewise, limits, size), "a read a byte").toEqual(whole);
  return whole;
}

describe("terminal model: one view for any split into reads", () => {
  it("a wrapped line whose continuation is erased after its first row scrolled off ends where the terminal says, however the reads fell", () => {
    // 15 `a`s on 10 columns: a row of 10 and a wrapped row of 5. Three newlines scroll the first row
    // off; then the cursor goes up to the second and erases it (which unwraps it) and writes `b`.
    // The line's end used to be decided at the harvest after each read: a read ending before the
    // erase joined `b` to the `a`s.
    const bytes = Buffer.from(`\x1b[H${"a".repeat(15)}\n\n\n\x1b[3A\x1b[2Kb\n\n\n\nend\n`);
    const whole = sameForEverySplit(bytes);
    expect(whole.text).toBe(`${"a".repeat(10)}\nb\n\n\n\nend\n`);
  });

  it("a line wrapped over rows that scroll off one read at a time is one line", () => {
    const long = "0123456789".repeat(7);
    const bytes = Buffer.from(`\x1b[H${long}\nafter\n${long}`);
    const whole = sameForEverySplit(bytes);
    expect(whole.text).toBe(`${long}\nafter\n${long}`);
  });

  it("a line wrapped over more rows than the line cap holds is cut once, at its first maxLineBytes, with the rest counted", () => {
    const limits = resolveLimits({ maxBytes: 1 << 20, maxLines: 100_000, maxLineBytes: 25 });
    const long = "x".repeat(97);
    const bytes = Buffer.from(`\x1b[H${long}\nend\n`);
    const whole = sameForEverySplit(bytes, limits);
    expect(whole.text).toBe(`${"x".repeat(25)} [… 72 bytes cut from this line]\nend\n`);
    expect(whole.truncation.cutLines).toBe(1);
  });

  it("a line still open on screen, joined to rows that scrolled off, is shown cut as it will be committed", () => {
    const limits = resolveLimits({ maxBytes: 1 << 20, maxLines: 100_000, maxLineBytes: 25 });
    const whole = sameForEverySplit(Buffer.from(`\x1b[H${"y".repeat(63)}`), limits);
    expect(whole.text).toBe(`${"y".repeat(25)} [… 38 bytes cut from this line]`);
    expect(whole.truncation).toMatchObject({ truncatedBy: "line-length", cutLines: 1 });
  });

  it("a program ending on the alternate screen keeps the last line harvested from the normal one", () => {
    // `3` is the last row harvested; the alternate screen keeps the cursor's row (the fourth).
    const bytes = Buffer.from("\x1b[H1\n2\n3\n4\n5\n6\n\x1b[?1049hfull\n");
    const whole = sameForEverySplit(bytes);
    expect(whole.text).toBe("1\n2\n3\n\n\nfull\n");
  });
});

describe("terminal model: a repeat (CSI n b)", () => {
  it("takes the terminal model on the plain path too: a repeat is the characters it repeats, not removed", () => {
    // The plain path removed the sequence (`x`), the terminal model printed it (`xxxxxx`).
    for (const size of [SMALL, { cols: 120, rows: 40 }]) {
      expect(viewOf([Buffer.from("x\x1b[5b\n")], ROOMY, size).text).toBe("xxxxxx\n");
      expect(viewOf([Buffer.from("ab\x1b[3bc\nnext\n")], ROOMY, size).text).toBe("abbbbc\nnext\n");
    }
    sameForEverySplit(Buffer.from("one\nx\x1b[25b\ntwo\x1b[3b\n"));
  });

  it("of more rows than the scrollback holds loses none of them: the line is cut at the cap and every byte counted", () => {
    // 100,001 characters on 10 columns: 10,001 rows, more than twice the scrollback's 4,096. Printed
    // at once, the rows the scrollback dropped before the harvest were lost from the count.
    const limits = resolveLimits({ maxBytes: 1 << 20, maxLines: 100_000, maxLineBytes: 1000 });
    const bytes = Buffer.from("before\nx\x1b[100000b\nafter\n");
    const whole = viewOf([bytes], limits);
    expect(whole.text).toBe(`before\n${"x".repeat(1000)} [… 99001 bytes cut from this line]\nafter\n`);
    expect(whole.truncation).toMatchObject({ totalLines: 3, cutLines: 1 });
    for (const p of [1, 7, 8, 9, 10, 13, bytes.length - 3]) expect(viewOf([bytes.subarray(0, p), bytes.subarray(p)], limits), `split at ${p}`).toEqual(whole);
  });

  it("of a wide character counts its bytes across the runs it is printed in", () => {
    const limits = resolveLimits({ maxBytes: 1 << 20, maxLines: 100_000, maxLineBytes: 30 });
    const whole = viewOf([Buffer.from("\x1b[H日\x1b[50000b\n")], limits);
    expect(whole.text).toBe(`${"日".repeat(10)} [… ${3 * 50_001 - 30} bytes cut from this line]\n`);
  });
});

describe("terminal model: the largest repeat", () => {
  const most = 2_147_483_647;
  const limits = resolveLimits({ maxBytes: 1 << 20, maxLines: 100_000, maxLineBytes: 1000 });

  it("is counted to the byte once the screen repeats itself, not printed (a minute before)", () => {
    expect(viewOf([Buffer.from(`\x1b[Hx\x1b[${most}b`)], limits).text).toBe(`${"x".repeat(1000)} [… ${most + 1 - 1000} bytes cut from this line]`);
    // 5 wide characters a row of 10 columns, 3 bytes each; then the line goes on and ends.
    expect(viewOf([Buffer.from(`before\n\x1b[A\x1b[B日\x1b[${most}bc\nend\n`)], limits).text).toBe(
      `before\n${"日".repeat(333)} [… ${3 * (most + 1) + 1 - 999} bytes cut from this line]\nend\n`,
    );
    // The alternate screen keeps nothing of it.
    expect(viewOf([Buffer.from(`\x1b[?1049h\x1b[Hy\x1b[${most}b\x1b[?1049lafter\n`)], limits).text).toBe("after\n");
  });

  it("counted or printed, gives the same view", () => {
    // Counting starts after a few runs of 10,240 characters; a repeat this size is printed and counted in part.
    for (const n of [9_999, 10_239, 10_240, 10_241, 40_000, 123_457]) {
      for (const [ch, size] of [
        ["x", 1],
        ["日", 3],
        ["e\u0301", 3],
      ] as const) {
        const view = viewOf([Buffer.from(`\x1b[H${ch}\x1b[${n}bz\n`)], limits);
        const total = size * (n + 1) + 1;
        const kept = utf8Prefix(ch.repeat(1000), 1000);
        expect(view.text, `${n} ${ch}`).toBe(`${kept} [… ${total - Buffer.byteLength(kept)} bytes cut from this line]\n`);
      }
    }
  });
});

describe("terminal model: erase above (CSI 1 J) from the last column", () => {
  it("with the cursor on the last row does not throw (@xterm/headless 6.0.0 did: 'setting isWrapped')", () => {
    const whole = viewOf([Buffer.from("one\ntwo\n\x1b[40;120H\x1b[1J")], ROOMY, { cols: 120, rows: 40 });
    // All erased, the cursor on the last row: forty empty rows.
    expect(whole.text).toBe("\n".repeat(39));
    expect(viewOf([Buffer.from("one\ntwo\n\x1b[4;10H\x1b[?1Jz")]).text).toBe("\n\n\n         z");
    sameForEverySplit(Buffer.from("one\ntwo\n\x1b[4;10H\x1b[1Jthree\n"));
  });

  it("unwraps the row after the cursor's, not a scrollback row of the same index", () => {
    // Lines 1–6 scroll 1–3 off (in the emulator: printed before the first cursor move, they would
    // come back to it as screen rows only); 15 `a`s wrap from the first screen row into the second; erasing above
    // from the first row's last column leaves the second row a line of its own (the emulator cleared
    // the flag of the scrollback's second row instead, `2`, joining nothing there and `aaaaa` to the
    // blank row above it).
    const bytes = Buffer.from(`\x1b[H1\n2\n3\n4\n5\n6\n\x1b[H${"a".repeat(15)}\x1b[1;10H\x1b[1J\x1b[4H\n\n\n\n`);
    const whole = sameForEverySplit(bytes);
    expect(whole.text).toBe(`1\n2\n3\n\n${"a".repeat(5)}\n6\n\n\n\n\n`);
  });

  it("spool's capture of a real command that does it, on a pipe and on a pty, ends normally", async () => {
    for (const printf of [
      "one\\ntwo\\n\\033[40;120H\\033[1J",
      "\\033[40;120Hx\\033[1J",
      "one\\n\\033[40;200H\\033[?1J",
      "\\033[?1049h\\033[40;120H\\033[1Jdone\\n",
    ]) {
      for (const pty of [false, true]) {
        const r = await exec(`printf '${printf}'`, { pty, cols: 120, rows: 40, cwd: dir });
        expect(r.exitCode, `${printf} pty=${pty}`).toBe(0);
      }
    }
  });
});

describe("terminal model: counts the emulator steps through", () => {
  it("the largest count of a scroll, a line insert or delete, or a tab ends at once, as the screen's height or width does", () => {
    // 2,147,483,647 steps took the emulator most of an hour (12 s for ten million of `CSI T`).
    const most = 2_147_483_647;
    const frame = (seq: string) => `\x1b[H1\n2\n3\n4\x1b[2;1H${seq}x\x1b[?1049h\x1b[2;3ra\nb\nc\x1b[2;1H${seq}y\x1b[?1049l\n`;
    for (const [final, enough] of [
      ["T", 4],
      ["L", 4],
      ["M", 4],
      ["S", 4],
      ["I", 10],
      ["Z", 10],
    ] as const) {
      const huge = viewOf([Buffer.from(frame(`\x1b[${most}${final}`))]);
      const enoughView = viewOf([Buffer.from(frame(`\x1b[${enough}${final}`))]);
      expect([huge.text, huge.truncation], final).toEqual([enoughView.text, enoughView.truncation]);
    }
  });
});

describe("terminal model: autowrap off", () => {
  it("a character written over half of a wide character at the right edge gives one row however the reads fell", () => {
    // Autowrap off, `日` on the last two columns, then `a` (which lands on the last column): the
    // emulator mended the wide character only where a write ended, so one read showed `日` and two `  a`.
    const whole = sameForEverySplit(Buffer.from("\x1b[H\x1b[?7labcdefgh日a日éa\n\x1b[?7hnext\n"));
    expect(whole.text).toBe("abcdefgh a\nnext\n");
  });
});

describe("terminal model: random sequences", () => {
  const finals = "@ABCDEFGHIJKLMPSTXZ`abcdefghilmnpqrstux";
  const csi = fc
    .tuple(
      fc.constantFrom("", "?", ">", "!"),
      fc.array(fc.oneof(fc.nat(12), fc.nat(200), fc.constant(99_999)), { maxLength: 3 }),
      fc.constantFrom("", "", "", " ", "'", "$", '"'),
      fc.constantFrom(...finals),
    )
    .map(([prefix, params, intermediate, final]) => `\x1b[${prefix}${params.join(";")}${intermediate}${final}`);
  const piece = fc.oneof(
    csi,
    fc.constantFrom(
      "\n",
      "\r",
      "\b",
      "\t",
      "\x1b7",
      "\x1b8",
      "\x1bD",
      "\x1bE",
      "\x1bM",
      "\x1bc",
      "\x1b[?1049h",
      "\x1b[?1049l",
      "\x1b[?6h",
      "\x1b[?7l",
      "\x1b[?7h",
      "\x1b[4h",
      "\x1b[2;3r",
      "\x1b#8",
      "\x1bH",
      "\x1b[3g",
      "\x1b[?47h",
      "\x1b[?47l",
      "\x1b[?1047h",
      "\x1b[?1047l",
      "\x7f",
      "\u0085",
      "\u009b2A",
      "\x1b[?7l日日日日日",
    ),
    fc.string({ unit: fc.constantFrom("a", "b", " ", "日", "é", "\u0301", "😀"), maxLength: 25 }),
  );

  it("never throw, and give one view for any split into reads", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 4 }), (pieces, cuts) => {
        const bytes = Buffer.from(`\x1b[H${pieces.join("")}`);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const limits = resolveLimits({ maxBytes: 1 << 20, maxLines: 100_000, maxLineBytes: 64 });
        expect(viewOf(splitAt(bytes, points), limits)).toEqual(viewOf([bytes], limits));
      }),
      { numRuns: LONG ? 20_000 : 300 },
    );
  }, 120_000);
});
