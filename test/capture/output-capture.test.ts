import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputCapture, describeTruncation, resolveLimits, type CaptureLimits, type CaptureView } from "../../src/capture/index.js";
import { countOf } from "../../src/errors/index.js";

const enc = (s: string) => Buffer.from(s, "utf8");
function run(chunks: (string | Buffer)[], limits: Partial<CaptureLimits> = {}): CaptureView {
  const c = new OutputCapture(resolveLimits(limits));
  for (const ch of chunks) c.push(typeof ch === "string" ? enc(ch) : ch);
  c.end();
  return c.view();
}
const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const wellFormed = (s: string) => !LONE_SURROGATE.test(s);

/** Naive reference windows over plain text (no control characters, no over-long lines). */
function naiveLines(text: string): string[] {
  const parts = text.split("\n");
  const lines = parts.slice(0, -1).map((l) => l + "\n");
  if (parts[parts.length - 1] !== "") lines.push(parts[parts.length - 1]!);
  return lines;
}
function naiveTail(text: string, maxLines: number, maxBytes: number): string {
  let lines = naiveLines(text).slice(-maxLines);
  while (lines.length > 1 && bytes(lines.join("")) > maxBytes) lines = lines.slice(1);
  return lines.join("");
}
function naiveHead(text: string, maxLines: number, maxBytes: number): string {
  let lines = naiveLines(text).slice(0, maxLines);
  while (lines.length > 1 && bytes(lines.join("")) > maxBytes) lines = lines.slice(0, -1);
  return lines.join("");
}

describe("cleaning", () => {
  it("carriage-return progress frames collapse to the last frame of the line", () => {
    expect(run(["a\rb\rc\n"]).text).toBe("c\n");
    expect(run(["10%\r", "50%\r", "100%\r\n", "done\n"]).text).toBe("100%\ndone\n");
  });

  it("CRLF is a line ending, not a frame reset", () => {
    expect(run(["one\r\ntwo\r\n"]).text).toBe("one\ntwo\n");
    expect(run(["one\r", "\ntwo\n"]).text).toBe("one\ntwo\n");
  });

  it("a trailing carriage return at end of output keeps the last frame", () => {
    const v = run(["loading\r"]);
    expect(v.text).toBe("loading");
    expect(v.truncation.totalLines).toBe(1);
  });

  it("backspaces move the cursor one cell left, a surrogate pair being one cell; at column 0 they do nothing", () => {
    expect(run(["abc\b\bX\n"]).text).toBe("aXc\n");
    expect(run(["x😀\by\n"]).text).toBe("xy\n");
    expect(run(["x😀z\b\bé\n"]).text).toBe("xéz\n");
    expect(run(["\b\bok\n"]).text).toBe("ok\n");
  });

  it("ANSI colour and OSC hyperlink sequences are stripped", () => {
    expect(run(["\x1b[1;31mred\x1b[0m \x1b]8;;http://e.x\x07link\x1b]8;;\x1b\\\n"]).text).toBe("red link\n");
  });

  it("an escape sequence split across two reads is still stripped", () => {
    expect(run(["\x1b[3", "1mred\x1b[0m\n"]).text).toBe("red\n");
    expect(run(["a\x1b", "[0mb\n"]).text).toBe("ab\n");
    expect(run(["\x1b]8;;http://e", ".x\x1b", "\\link\n"]).text).toBe("link\n");
  });

  it("other control characters are dropped but tab and newline stay", () => {
    expect(run(["a\x01b\x07c\td\x0be\x1f\x7ff\u0085g\n"]).text).toBe("abc\tdefg\n");
  });

  it("an incomplete escape at end of output is dropped, not shown", () => {
    expect(run(["text\x1b[3"]).text).toBe("text[3");
    expect(run(["text\x1b[3"]).text).not.toContain("\x1b");
  });

  it("a UTF-8 character split across reads stays intact", () => {
    const euro = enc("€");
    expect(run([Buffer.from([0x41, euro[0]!]), euro.subarray(1, 2), Buffer.concat([euro.subarray(2), enc("\n")])]).text).toBe("A€\n");
    const face = enc("😀");
    expect(run([face.subarray(0, 1), face.subarray(1, 3), face.subarray(3)]).text).toBe("😀");
  });

  it("non-ASCII text split at every byte offset, with invalid bytes, gives the same view", () => {
    const text = Buffer.concat([enc("déjà vu → λ 😀 µs\nline two €\n"), Buffer.from([0xe2, 0x82, 0x0a, 0xf0, 0x9f]), enc("x😀\n")]);
    const whole = run([text]);
    for (let i = 0; i <= text.length; i++) {
      for (const j of [i, Math.min(text.length, i + 1), Math.min(text.length, i + 2)]) {
        expect(run([text.subarray(0, i), text.subarray(i, j), text.subarray(j)])).toEqual(whole);
      }
    }
    expect(whole.text).toBe("déjà vu → λ 😀 µs\nline two €\n\ufffd\n\ufffdx😀\n");
  });

  it("coloured lines (CSI removed on the bytes) split at every offset give the same view as the string path", () => {
    const text = Buffer.concat([
      enc("\x1b[1;31mFAIL\x1b[0m test/a.ts → \x1b[2mλ\x1b[22m\n\x1b[32m✓\x1b[39m ok déjà\n"),
      enc("\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[0m\n"), // OSC: the string path's job
      Buffer.from([0xe2, 0x1b, 0x5b, 0x6d, 0x82, 0x0a]), // invalid UTF-8 around an escape
      enc("\x1b[33mtail\x1b[0"),
    ]);
    const whole = run([text]);
    expect(whole.text).toBe("FAIL test/a.ts → λ\n✓ ok déjà\nlink \n\ufffd\ufffd\ntail[0");
    for (let i = 0; i <= text.length; i++) {
      expect(run([text.subarray(0, i), text.subarray(i)])).toEqual(whole);
    }
  });

  it("a 2 MB single line is cut to maxLineBytes with a marker saying how much was cut", () => {
    const long = "x".repeat(2 * 1024 * 1024);
    const chunks: string[] = ["before\n"];
    for (let i = 0; i < long.length; i += 65536) chunks.push(long.slice(i, i + 65536));
    chunks.push("\nafter\n");
    const v = run(chunks);
    const lines = v.text.split("\n");
    expect(lines[0]).toBe("before");
    expect(lines[1]).toBe("x".repeat(4096) + ` [… ${2 * 1024 * 1024 - 4096} bytes cut from this line]`);
    expect(lines[2]).toBe("after");
    expect(v.truncation.cutLines).toBe(1);
    expect(v.truncation.truncated).toBe(true);
    expect(v.truncation.truncatedBy).toBe("line-length");
    expect(v.truncation.totalBytes).toBe(bytes(v.text));
  });

  it("a line one byte over the cap says '1 byte cut' (it read '1 bytes'), on every path, and is not cut again by the terminal model", () => {
    const marked = `${"x".repeat(16)} [… 1 byte cut from this line]`;
    // the byte path, the string path (a \r frame), and a line still open
    expect(run(["x".repeat(17) + "\n"], { maxLineBytes: 16 }).text).toBe(`${marked}\n`);
    expect(run(["zz\r" + "x".repeat(17) + "\n"], { maxLineBytes: 16 }).text).toBe(`${marked}\n`);
    expect(run(["x".repeat(17)], { maxLineBytes: 16 }).text).toBe(marked);
    expect(run(["x".repeat(18) + "\n"], { maxLineBytes: 16 }).text).toBe(`${"x".repeat(16)} [… 2 bytes cut from this line]\n`);
    // A cursor move takes the cut line back under the terminal model; when it scrolls off again its
    // marker is known, so it is not cut a second time ("32 bytes cut", two cut lines).
    const v = run(["x".repeat(17) + "\nnext\n", "\x1b[A" + "l\n".repeat(50)], { maxLineBytes: 16 });
    expect(v.text.split("\n")[0]).toBe(marked);
    expect(v.truncation.cutLines).toBe(1);
  });

  it("an over-long last line without a newline is cut and counted as one with it, once", () => {
    for (const retain of ["tail", "head"] as const) {
      for (const long of ["a".repeat(300_000), "€".repeat(5000), "x".repeat(4097)]) {
        const closed = run(["first\n", long, "\n"], { retain });
        const open = run(["first\n", long], { retain });
        const kept = long.slice(0, long[0] === "€" ? 1365 : 4096);
        expect(open.text).toBe(`first\n${kept} [… ${countOf(bytes(long) - bytes(kept), "byte")} cut from this line]`);
        expect(closed.text).toBe(`${open.text}\n`);
        for (const v of [open, closed]) {
          expect(v.truncation).toMatchObject({ truncated: true, truncatedBy: "line-length", cutLines: 1, totalLines: 2, lastLinePartial: false });
          expect(v.truncation.totalBytes).toBe(bytes(v.text));
        }
        expect(describeTruncation(open, retain)).toBe("[Showing all 2 lines; 1 over-long line was cut. The full output was not kept.]");
      }
    }
  });

  it("the cut of the line still open counts while it is being written and when its newline comes", () => {
    const c = new OutputCapture(resolveLimits({ maxLineBytes: 16 }));
    c.push(enc("x".repeat(10)));
    expect(c.truncatedBy).toBeNull();
    c.push(enc("x".repeat(10)));
    expect(c.truncatedBy).toBe("line-length");
    expect(c.view().truncation.cutLines).toBe(1);
    c.push(enc("x".repeat(10)));
    expect(c.view().truncation.cutLines).toBe(1);
    c.push(enc("\nshort\n" + "y".repeat(20)));
    expect(c.view().truncation.cutLines).toBe(2);
    c.push(enc("\n"));
    c.end();
    expect(c.view().truncation).toMatchObject({ cutLines: 2, totalLines: 3, truncatedBy: "line-length" });
    // A carriage return starts a new frame: the cut frame is gone from the line, and so is its cut.
    expect(run(["z".repeat(20) + "\rshort"], { maxLineBytes: 16 }).truncation).toMatchObject({ truncated: false, cutLines: 0 });
    expect(run(["z".repeat(20) + "\rshort\n"], { maxLineBytes: 16 }).truncation).toMatchObject({ truncated: false, cutLines: 0 });
  });

  it("a cut line taken under the terminal model keeps its marker and is counted once, open or completed", () => {
    const long = "x".repeat(5000);
    const marker = " [… 904 bytes cut from this line]";
    for (const first of [long, `${long}\n`]) {
      // A cursor move hands the lines still on screen to the terminal model; enough newlines scroll them off.
      for (const rest of [["\x1b[1B"], ["\x1b[1B", "\n".repeat(60)]]) {
        const v = run([first, ...rest]);
        expect(v.text).toContain(`${"x".repeat(4096)}${marker}`);
        expect(v.truncation).toMatchObject({ truncatedBy: "line-length", cutLines: 1 });
      }
    }
  });

  it("binary output (two NUL bytes in a row) stops text rendering and reports binary with the raw size", () => {
    const v = run(["hello\n", Buffer.from([1, 2, 0, 0, 3]), "more text\n"]);
    expect(v.binary).toBe(true);
    expect(v.text).toBe("");
    expect(v.truncation.truncatedBy).toBe("binary");
    expect(v.truncation.totalBytes).toBe(6 + 5 + 10);
    expect(v.rawBytes).toBe(21);
  });

  it("two NULs in a row are binary even split across two reads", () => {
    expect(run(["hello\0", "\0world\n"]).binary).toBe(true);
    expect(run(["hello\0", "world\0", "\n"]).binary).toBe(false);
  });

  it("a lone NUL in text is shown as U+2400 and the lines after it are all there, on either side of the sniff window", () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join("");
    for (const chunks of [["a\0b\n", lines], [`a\0b\n${lines}`], [lines, "a\0b\n"]]) {
      const v = run(chunks, { maxLines: 2000, maxBytes: 100_000 });
      expect(v.binary).toBe(false);
      expect(v.text).toContain("a\u2400b\n");
      expect(v.text).toContain("\n1000\n");
      expect(v.truncation.truncatedBy).toBe(null);
      // the symbol is counted as it is shown (3 bytes), so the limits bound the view
      expect(v.truncation.totalBytes).toBe(Buffer.byteLength(lines) + 6);
    }
  });

  it("NUL-separated output (find -print0, env -0, /proc/*/cmdline) is text with its separators visible", () => {
    const names = Array.from({ length: 300 }, (_, i) => `./src/dir${i % 7}/file-${i}.ts`);
    // (past the 4 KiB sniff window: one line, under a cap that keeps it whole)
    const v = run([names.join("\0") + "\0"], { maxLineBytes: 100_000, maxBytes: 100_000 });
    expect(v.binary).toBe(false);
    expect(v.text).toBe(names.join("\u2400") + "\u2400");
    expect(run(["node\0/srv/app.js\0--port\0" + "8080\0"]).text).toBe("node\u2400/srv/app.js\u2400--port\u24008080\u2400");
  });

  it("UTF-16 text (every other byte NUL) and mostly-NUL data stay binary", () => {
    expect(run([Buffer.from("hello world, this is UTF-16 text\n".repeat(4), "utf16le")]).binary).toBe(true);
    const sparse = Buffer.alloc(200, 0x61);
    for (let i = 0; i < sparse.length; i += 3) sparse[i] = 0;
    expect(run([sparse]).binary).toBe(true);
  });

  it("mostly-invalid UTF-8 is binary, a few Latin-1 bytes are not", () => {
    const junk = Buffer.alloc(5000);
    for (let i = 0; i < junk.length; i++) junk[i] = 0x80 + (i % 0x7f) + 1;
    expect(run([junk]).binary).toBe(true);
    const latin1 = Buffer.from("caf\xe9 cr\xe8me br\xfbl\xe9e, a perfectly ordinary line of text\n".repeat(3), "latin1");
    const v = run([latin1]);
    expect(v.binary).toBe(false);
    expect(v.text).toContain("caf\ufffd");
  });

  it("a UTF-8 character cut by the 4 KiB sniff boundary does not make text binary", () => {
    const text = "é".repeat(3000);
    expect(run([enc(text)]).binary).toBe(false);
  });
});

describe("bounded view", () => {
  it("tail keeps the last lines and counts every line written", () => {
    const text = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join("");
    const v = run([text], { maxLines: 100 });
    expect(v.text).toBe(naiveTail(text, 100, 50 * 1024));
    expect(v.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 5000, outputLines: 100 });
  });

  it("head keeps the first lines and stops", () => {
    const text = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`).join("");
    const v = run([text], { maxLines: 100, retain: "head" });
    expect(v.text).toBe(naiveHead(text, 100, 50 * 1024));
    expect(v.text.startsWith("line 0\n")).toBe(true);
    expect(v.truncation).toMatchObject({ truncated: true, totalLines: 5000, outputLines: 100 });
  });

  it("the byte limit keeps whole lines", () => {
    const text = Array.from({ length: 300 }, (_, i) => `${i}:${"ü".repeat(i % 17)}\n`).join("");
    const tail = run([text], { maxBytes: 1000 });
    expect(tail.text).toBe(naiveTail(text, 2000, 1000));
    expect(tail.truncation.truncatedBy).toBe("bytes");
    expect(tail.truncation.outputBytes).toBeLessThanOrEqual(1000);
    const head = run([text], { maxBytes: 1000, retain: "head" });
    expect(head.text).toBe(naiveHead(text, 2000, 1000));
  });

  it("the final unterminated line counts", () => {
    const v = run(["a\nb\nc"]);
    expect(v.truncation.totalLines).toBe(3);
    expect(v.text).toBe("a\nb\nc");
  });

  it("lastLineBytes is exact for a line longer than the whole buffer", () => {
    const huge = "é".repeat(300_000); // 600 000 bytes, far past 4 × maxBytes units
    const chunks: string[] = ["head line\n"];
    for (let i = 0; i < huge.length; i += 10_000) chunks.push(huge.slice(i, i + 10_000));
    const v = run(chunks, { maxBytes: 1000, maxLineBytes: 1024 * 1024 });
    expect(v.truncation.lastLinePartial).toBe(true);
    expect(v.truncation.lastLineBytes).toBe(600_000);
    expect(v.truncation.outputBytes).toBe(1000);
    expect(v.text).toBe("é".repeat(500));
    const head = run(chunks.slice(1), { maxBytes: 1001, maxLineBytes: 1024 * 1024, retain: "head" });
    expect(head.text).toBe("é".repeat(500));
    expect(head.truncation.lastLineBytes).toBe(600_000);
  });

  it("no cut splits a surrogate pair", () => {
    const v = run(["😀".repeat(1000)], { maxBytes: 4001 - 2, maxLineBytes: 1024 * 1024 });
    expect(v.text).toBe("😀".repeat(999));
    expect(wellFormed(v.text)).toBe(true);
  });
});

describe("properties", () => {
  const piece = fc.oneof(
    fc.constantFrom("\n", "\r", "\r\n", "\b", "\t", "\x1b[", "31m", "\x1b]8;;u\x07", "\x1b\\", "\x00", "é", "😀", "€"),
    // Cursor movement, erasing and the alternate screen: from the first of these on, the terminal model.
    fc.constantFrom("\x1b[2A", "\x1b[1B", "\x1b[2K", "\x1b[H", "\x1b[2J", "\x1b[?1049h", "\x1b[?1049l", "\x1b7", "\x1b8"),
    fc.string({ maxLength: 30 }),
    fc.uint8Array({ maxLength: 12 }).map((a) => Buffer.from(a).toString("latin1")),
  );
  const stream = fc.array(
    fc.oneof(
      piece.map((s) => enc(s)),
      fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)),
    ),
    {
      maxLength: 60,
    },
  );
  const limits = fc.record({
    maxBytes: fc.integer({ min: 8, max: 200 }),
    maxLines: fc.integer({ min: 1, max: 8 }),
    retain: fc.constantFrom("head" as const, "tail" as const),
    maxLineBytes: fc.integer({ min: 4, max: 120 }),
  });

  it("the view does not depend on how the bytes were split into reads", () => {
    fc.assert(
      fc.property(stream, limits, fc.array(fc.nat(), { maxLength: 20 }), (chunks, lim, cuts) => {
        const all = Buffer.concat(chunks);
        const points = [...new Set(cuts.map((c) => c % (all.length + 1)))].sort((a, b) => a - b);
        const split: Buffer[] = [];
        let prev = 0;
        for (const p of [...points, all.length]) {
          split.push(all.subarray(prev, p));
          prev = p;
        }
        expect(run(split, lim)).toEqual(run([all], lim));
      }),
      { numRuns: 400 },
    );
  });

  it("any bytes give a clean, bounded, well-formed view", () => {
    fc.assert(
      fc.property(stream, limits, (chunks, lim) => {
        const v = run(chunks, lim);
        expect(v.text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
        expect(wellFormed(v.text)).toBe(true);
        const t = v.truncation;
        expect(t.outputBytes).toBe(bytes(v.text));
        expect(t.outputBytes).toBeLessThanOrEqual(lim.maxBytes);
        expect(t.outputLines).toBeLessThanOrEqual(lim.maxLines);
        expect(t.totalBytes).toBeGreaterThanOrEqual(t.outputBytes);
        expect(t.totalLines).toBeGreaterThanOrEqual(t.outputLines);
        expect(t.truncated).toBe(t.truncatedBy !== null);
        if (!t.truncated) expect(t.outputLines).toBeLessThanOrEqual(t.totalLines);
        // Every cut line the view shows is counted, the last one too.
        expect(t.cutLines).toBeGreaterThanOrEqual(v.text.match(/ \[… \d+ bytes? cut from this line\]/g)?.length ?? 0);
        if (t.cutLines > 0) expect(t.truncated).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("lines over the cap are counted as cut whether or not the last one has its newline, and once", () => {
    // No escapes but colour and no backspace: a line's text is its last non-empty carriage-return frame.
    const part = fc.oneof(
      fc.constantFrom("\n", "\r", "\r\n", "\t", "é", "😀", "€", "\x1b[31m", "\x1b[0m"),
      fc.stringMatching(/^[a-z ]{0,30}$/),
      fc.integer({ min: 1, max: 250 }).map((n) => "x".repeat(n)),
      fc.integer({ min: 1, max: 90 }).map((n) => "€".repeat(n)),
    );
    const naiveCut = (text: string, cap: number) =>
      text
        .replace(/\x1b\[\d*m/g, "")
        .replace(/\r\n/g, "\n")
        .split("\n")
        .filter(
          (line) =>
            bytes(
              line
                .split("\r")
                .filter((f) => f !== "")
                .pop() ?? "",
            ) > cap,
        ).length;
    fc.assert(
      fc.property(fc.array(part, { maxLength: 30 }), limits, fc.nat(), fc.boolean(), (parts, lim, at, newline) => {
        // Counted while the output is still coming, too (what the spill decision and updates see).
        const first = parts.slice(0, at % (parts.length + 1)).join("");
        const text = parts.join("") + (newline ? "\n" : "");
        const c = new OutputCapture(resolveLimits(lim));
        c.push(enc(first));
        expect(c.view().truncation.cutLines).toBe(naiveCut(first, lim.maxLineBytes));
        c.push(enc(text.slice(first.length)));
        c.end();
        const t = c.view().truncation;
        const want = naiveCut(text, lim.maxLineBytes);
        expect(t.cutLines).toBe(want);
        if (want > 0) expect(t.truncated).toBe(true);
        if (t.totalLines <= lim.maxLines && t.totalBytes <= lim.maxBytes) expect(t.truncatedBy).toBe(want > 0 ? "line-length" : null);
      }),
      { numRuns: 500 },
    );
  });

  it("plain text windows match a naive reference", () => {
    const line = fc.stringMatching(/^[a-zé😀 ]{0,12}$/u).map((s) => s + "\n");
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 40 }),
        fc.string({ maxLength: 5 }).filter((s) => !/[\x00-\x1f\x7f-\x9f]/.test(s)),
        limits,
        (lines, last, lim) => {
          const text = lines.join("") + last;
          const l = { ...lim, maxLineBytes: 1000 };
          const v = run([text], l);
          const expected = lim.retain === "tail" ? naiveTail(text, lim.maxLines, lim.maxBytes) : naiveHead(text, lim.maxLines, lim.maxBytes);
          if (bytes(expected) <= lim.maxBytes) expect(v.text).toBe(expected);
          else expect(v.truncation.lastLinePartial).toBe(true);
          expect(v.truncation.totalLines).toBe(naiveLines(text).length);
          expect(v.truncation.totalBytes).toBe(bytes(text));
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("footer", () => {
  const meta = (over: Partial<CaptureView["truncation"]>, extra: Partial<CaptureView> = {}): CaptureView => ({
    text: "",
    binary: false,
    rawBytes: 0,
    ...extra,
    truncation: {
      truncated: true,
      truncatedBy: "lines",
      totalLines: 15000,
      totalBytes: 1_258_291,
      outputLines: 2000,
      outputBytes: 50_074,
      maxLines: 2000,
      maxBytes: 51200,
      cutLines: 0,
      lastLinePartial: false,
      ...over,
    },
  });

  it("says which end was kept, how much of how much, and where the full output is", () => {
    expect(describeTruncation(meta({}, { spillPath: "/s/spill/c1.log" }), "tail")).toBe(
      "[Showing the last 2000 of 15000 lines (48.9 KB of 1.2 MB). Full output: /s/spill/c1.log]",
    );
    expect(describeTruncation(meta({}), "head")).toBe("[Showing the first 2000 of 15000 lines (48.9 KB of 1.2 MB). The full output was not kept.]");
  });

  it("names a partial line, cut lines and binary output, and says nothing when all is shown", () => {
    expect(describeTruncation(meta({ lastLinePartial: true, outputBytes: 51200, lastLineBytes: 600_000, totalLines: 3 }), "tail")).toBe(
      "[Showing the last 50.0 KB of line 3 (the line is 585.9 KB). The full output was not kept.]",
    );
    expect(describeTruncation(meta({ truncatedBy: "line-length", cutLines: 2, totalLines: 40 }))).toBe(
      "[Showing all 40 lines; 2 over-long lines were cut. The full output was not kept.]",
    );
    expect(describeTruncation(meta({ truncatedBy: "binary" }, { binary: true, rawBytes: 2048, spillPath: "p" }))).toBe(
      "[Binary output (2.0 KB) not shown. Full output: p]",
    );
    expect(describeTruncation(meta({ truncated: false, truncatedBy: null }))).toBeUndefined();
  });
});
