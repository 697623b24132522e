// The WebAssembly kernel of the byte path, held to the JavaScript it replaced: the same kept bytes,
// held tail and verdict as the former CRLF rewrite + CSI strip on any bytes, cut at every length;
// newline counts and the long-line flag against a byte-by-byte reference; and whole captures through
// the kernel equal to captures on the string path alone, with the read split at every byte.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { KERNEL_SOURCE_SHA256 } from "../../src/capture/kernel-wasm.js";
import { ByteKernel, SCAN_SLICE, byteKernel } from "../../src/capture/kernel.js";
import { OutputCapture, resolveLimits, type CaptureLimits, type CaptureView } from "../../src/capture/index.js";

// The same capture with no kernel: every read takes the string path.
vi.resetModules();
vi.doMock("../../src/capture/kernel.js", async (original) => ({ ...(await original<object>()), byteKernel: () => undefined }));
const { OutputCapture: StringPathCapture } = await import("../../src/capture/output-capture.js");
vi.doUnmock("../../src/capture/kernel.js");

const HOLD_LIMIT = 4096;
const CURSOR_FINAL = new Set("ABCDEFGHJLMPSTXbdfrsu@");

/** The former JavaScript byte path: `\r\n` → `\n` (any other `\r` fails), then the CSI strip; a backspace or a NUL fails. */
function reference(buf: Buffer): { bytes: Buffer; held: number } | undefined {
  const parts: number[] = [];
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0x0d) {
      if (buf[i + 1] !== 0x0a) return undefined;
      continue;
    }
    parts.push(buf[i]!);
  }
  // (a NUL is shown as U+2400: the string path's work)
  if (parts.includes(0x08) || parts.includes(0x00)) return undefined;
  const b = Buffer.from(parts);
  const out: number[] = [];
  const len = b.length;
  let held = 0;
  for (let i = 0; i < len; ) {
    if (b[i] !== 0x1b) {
      out.push(b[i++]!);
      continue;
    }
    if (i + 1 < len && b[i + 1] !== 0x5b) return undefined;
    let j = i + 2;
    let c = 0;
    while (j < len && (c = b[j]!) >= 0x30 && c <= 0x3f) j++;
    while (j < len && (c = b[j]!) >= 0x20 && c <= 0x2f) j++;
    if (j >= len) {
      if (len - i > HOLD_LIMIT) return undefined;
      held = len - i;
      break;
    }
    if (c < 0x40 || c > 0x7e) return undefined;
    if (CURSOR_FINAL.has(String.fromCharCode(c)) || ((c === 0x68 || c === 0x6c) && b[i + 2] === 0x3f)) return undefined;
    i = j + 1;
  }
  return { bytes: Buffer.from(out), held };
}

/** Lengths of the lines between two newlines of `buf`. */
function innerLines(buf: Buffer): number[] {
  const lengths: number[] = [];
  let last = buf.indexOf(0x0a);
  for (let nl = buf.indexOf(0x0a, last + 1); last !== -1 && nl !== -1; nl = buf.indexOf(0x0a, nl + 1)) {
    lengths.push(nl - last - 1);
    last = nl;
  }
  return lengths;
}

const enc = (s: string) => Buffer.from(s, "utf8");
/** What the byte path takes: text, line ends, colour (and other harmless CSI), lines over the cap. */
const plainPiece = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[a-z0-9 .:é😀€→]{0,40}$/u).map(enc) },
  { weight: 3, arbitrary: fc.constantFrom("\n", "\r\n", "\t", "\n\n").map(enc) },
  {
    weight: 4,
    arbitrary: fc.constantFrom("\x1b[31m", "\x1b[0m", "\x1b[m", "\x1b[1;38;5;208m", "\x1b[K", "\x1b[2K", "\x1b[1 q", "\x1b[>4;2m").map(enc),
  },
  { weight: 3, arbitrary: fc.integer({ min: 40, max: 250 }).map((n) => enc("x".repeat(n))) },
);
const piece = fc.oneof(
  { weight: 14, arbitrary: plainPiece },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom("\x1b[2A", "\x1b[H", "\x1b[?25l", "\x1b[?1049h", "\x1b[?7h", "\x1b]8;;u\x07", "\x1b7", "\x1b", "\r", "\b", "\x1b[ !1m", "\x1b[1\n", "\0")
      .map(enc),
  },
  // Every final byte (the cursor-moving ones among them), parameters past one vector, and sequences
  // that are never finished.
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom("", "1", "?", "2;3"), fc.integer({ min: 0x40, max: 0x7e })).map(([p, f]) => enc(`\x1b[${p}${String.fromCharCode(f)}`)),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((n) => enc(`\x1b[${"1;".repeat(n)}m`)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 6 }).map((a) => Buffer.from(a)) },
);
const bytes = fc.oneof(fc.array(piece, { maxLength: 40 }), fc.array(plainPiece, { maxLength: 40 })).map((parts) => Buffer.concat(parts));

describe("the byte kernel", () => {
  it("is built from the committed source (run `npm run build` after changing src/capture/wasm)", () => {
    const source = readFileSync(new URL("../../src/capture/wasm/kernel.ts", import.meta.url));
    expect(createHash("sha256").update(source).digest("hex")).toBe(KERNEL_SOURCE_SHA256);
  });

  it("loads on this runtime (else the byte path would be untested)", () => {
    expect(byteKernel()).toBeInstanceOf(ByteKernel);
  });

  it("keeps, holds and refuses exactly what the JavaScript strip did, for every prefix of any bytes", () => {
    const kernel = byteKernel()!;
    fc.assert(
      fc.property(bytes, fc.integer({ min: 1, max: 300 }), (all, cap) => {
        for (let n = 0; n <= all.length * 2; n++) {
          // Both modes, the same answers.
          const sparse = n > all.length;
          const input = all.subarray(0, sparse ? n - all.length - 1 : n);
          const want = reference(input);
          const got = kernel.scan(input, cap, HOLD_LIMIT, sparse);
          if (want === undefined) {
            expect(got).toBeUndefined();
            continue;
          }
          expect(got).toBeDefined();
          expect(Buffer.from(got!.out)).toEqual(want.bytes);
          expect(got!.held).toBe(want.held);
          expect(got!.lines).toBe(want.bytes.filter((b) => b === 0x0a).length);
          expect(got!.specials).toBe(input.filter((b) => b === 0x1b || b === 0x0d || b === 0x08 || b === 0x00).length);
          // The flag: never missed for a cap of 64 or more, and only ever raised by a long raw line.
          if (cap >= 64 && innerLines(want.bytes).some((l) => l > cap)) expect(got!.mayBeLong).toBe(true);
          if (got!.mayBeLong) expect(innerLines(input).some((l) => l > cap)).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("holds a sequence cut at the end up to the hold limit, and no longer", () => {
    const kernel = byteKernel()!;
    const open = enc(`ab\x1b[${"1".repeat(HOLD_LIMIT - 2)}`);
    for (const sparse of [false, true]) {
      expect(kernel.scan(open, 4096, HOLD_LIMIT, sparse)?.held).toBe(HOLD_LIMIT);
      expect(kernel.scan(Buffer.concat([open, enc("2")]), 4096, HOLD_LIMIT, sparse)).toBeUndefined();
      expect(kernel.scan(Buffer.alloc(SCAN_SLICE + 1, 0x61), 4096, HOLD_LIMIT, sparse)).toBeUndefined();
    }
  });
});

function capture(Capture: typeof OutputCapture, reads: Buffer[], limits: Partial<CaptureLimits>): CaptureView {
  const c = new Capture(resolveLimits(limits));
  for (const r of reads) c.push(r);
  c.end();
  return c.view();
}

describe("captures through the kernel", () => {
  const limits = fc.record({
    maxBytes: fc.integer({ min: 8, max: 400 }),
    maxLines: fc.integer({ min: 1, max: 12 }),
    retain: fc.constantFrom("head" as const, "tail" as const),
    maxLineBytes: fc.oneof(fc.integer({ min: 4, max: 63 }), fc.integer({ min: 64, max: 120 })),
  });

  it("equal the string path's, with the read split at every byte", () => {
    fc.assert(
      fc.property(bytes, limits, (all, lim) => {
        const want = capture(StringPathCapture, [all], lim);
        expect(capture(OutputCapture, [all], lim)).toEqual(want);
        for (let k = 0; k <= all.length; k++) {
          expect(capture(OutputCapture, [all.subarray(0, k), all.subarray(k)], lim)).toEqual(want);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("a sequence held across reads that itself ends in another sequence's start", () => {
    // `ESC` + `[[ESC`: `ESC [ [` is complete (final `[`) and the last ESC is held in turn, to be glued
    // to `[31m` — not left behind it as text.
    const all = enc("\x1b[[\x1b[31m");
    const lim = { maxLineBytes: 4 };
    for (let k = 0; k <= all.length; k++) {
      expect(capture(OutputCapture, [all.subarray(0, k), all.subarray(k)], lim)).toEqual(capture(StringPathCapture, [all], lim));
    }
  });

  it("an ESC interrupted by a cursor move is the terminal model's, wherever the read boundary falls", () => {
    const all = enc(`${"x".repeat(90)}\x1b\x1b[2A`);
    const lim = { maxLineBytes: 87 };
    const want = capture(StringPathCapture, [all], lim);
    expect(want.truncation.totalBytes).toBe(87 + Buffer.byteLength(" [… 3 bytes cut from this line]"));
    for (let k = 0; k <= all.length; k++) {
      expect(capture(OutputCapture, [all.subarray(0, k), all.subarray(k)], lim)).toEqual(want);
      expect(capture(StringPathCapture, [all.subarray(0, k), all.subarray(k)], lim)).toEqual(want);
    }
  });

  it("count an over-long last line without a newline as cut, as the string path does, in one slice or several", () => {
    for (const size of [5000, SCAN_SLICE + 5000]) {
      const all = enc(`first\x1b[31m\n${"é".repeat(size)}`);
      for (const lim of [{ retain: "tail" as const }, { retain: "head" as const }]) {
        const want = capture(StringPathCapture, [all], lim);
        expect(want.truncation).toMatchObject({ truncatedBy: "line-length", cutLines: 1 });
        expect(capture(StringPathCapture, [all, enc("\n")], lim).truncation.cutLines).toBe(1);
        for (const k of [0, 7, 9, 4000, 4103, all.length - 1]) {
          expect(capture(OutputCapture, [all.subarray(0, k), all.subarray(k)], lim)).toEqual(want);
          expect(capture(OutputCapture, [all.subarray(0, k), all.subarray(k), enc("\n")], lim).truncation.cutLines).toBe(1);
        }
      }
    }
  });

  it("equal the string path's on coloured lines longer than one scan (sliced) and over the line cap", () => {
    const line = (i: number) => `${i} \x1b[3${i % 7}mcompile\x1b[0m src/${"é".repeat(i % 5)}x.ts ${"-".repeat(i % 97 === 0 ? 5000 : i % 40)}\r\n`;
    const all = enc(Array.from({ length: 9000 }, (_, i) => line(i)).join(""));
    expect(all.length).toBeGreaterThan(2 * SCAN_SLICE);
    for (const lim of [{ retain: "tail" as const }, { retain: "head" as const, maxLines: 100 }, { maxLineBytes: 64, maxBytes: 5000 }]) {
      const want = capture(StringPathCapture, [all], lim);
      expect(capture(OutputCapture, [all], lim)).toEqual(want);
      expect(capture(OutputCapture, [all.subarray(0, 100_001), all.subarray(100_001)], lim)).toEqual(want);
    }
  });
});
