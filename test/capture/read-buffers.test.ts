// The read path without per-read allocation: newline counting four bytes at a time, a capture fed
// through one reused read buffer, the pipes adopted onto that buffer, and the spill's staging buffers.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { countOf } from "../../src/errors/index.js";
import { countNewlines } from "../../src/capture/newlines.js";
import { readPipe } from "../../src/capture/pipe-reader.js";
import { SpillWriter } from "../../src/capture/spill.js";
import { OutputCapture, resolveLimits, type CaptureLimits, type CaptureView } from "../../src/capture/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const work = tempDir("spool-read-buffers-");
afterAll(removeTempDirs);

const naiveCount = (b: Buffer, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) if (b[i] === 0x0a) n++;
  return n;
};

describe("countNewlines", () => {
  // Bytes next to a newline in value (0x0b, 0x8a, 0x09, 0x0a | 0x80…) are where a word-wise test
  // with a carry between bytes would miscount.
  const byte = fc.oneof(fc.constantFrom(0x0a, 0x0b, 0x09, 0x8a, 0x0a0, 0x00, 0xff, 0x7f, 0x80, 0x2a), fc.integer({ min: 0, max: 255 }));
  it("equals a byte-by-byte count for any bytes, offsets and alignment", () => {
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 200 }), fc.nat(7), fc.nat(), fc.nat(), (bytes, shift, a, b) => {
        // A view at every alignment of the underlying memory.
        const backing = Buffer.alloc(bytes.length + 8);
        const buf = backing.subarray(shift, shift + bytes.length);
        buf.set(bytes.map((x) => x & 0xff));
        const from = bytes.length === 0 ? 0 : a % (bytes.length + 1);
        const to = from + (b % (bytes.length - from + 1));
        expect(countNewlines(buf, from, to)).toBe(naiveCount(buf, from, to));
        expect(countNewlines(buf)).toBe(naiveCount(buf, 0, buf.length));
      }),
      { numRuns: 2000 },
    );
  });
});

function runFresh(chunks: Buffer[], limits: Partial<CaptureLimits>): CaptureView {
  const c = new OutputCapture(resolveLimits(limits));
  for (const ch of chunks) c.push(Buffer.from(ch));
  c.end();
  return c.view();
}

/** As a pipe delivers: every read lands in the same buffer, which is scribbled over after the push. */
function runReused(chunks: Buffer[], limits: Partial<CaptureLimits>): CaptureView {
  const c = new OutputCapture(resolveLimits(limits));
  const buffer = Buffer.alloc(Math.max(1, ...chunks.map((ch) => ch.length)));
  for (const ch of chunks) {
    ch.copy(buffer);
    c.push(buffer.subarray(0, ch.length));
    buffer.fill(0xff);
  }
  c.end();
  return c.view();
}

describe("a capture fed through one reused read buffer", () => {
  const piece = fc.oneof(
    fc.constantFrom("\n", "\r\n", "\r", "\b", "\x1b[31m", "\x1b[0m", "\x1b[", "1;3", "2m", "\x1b]8;;u\x07", "é", "😀", "\x1b[2A", "\x1b[2K"),
    fc.stringMatching(/^[a-z ]{0,40}$/),
    fc.uint8Array({ maxLength: 6 }).map((a) => Buffer.from(a).toString("latin1")),
  );
  const limits = fc.record({
    maxBytes: fc.integer({ min: 8, max: 300 }),
    maxLines: fc.integer({ min: 1, max: 10 }),
    retain: fc.constantFrom("head" as const, "tail" as const),
    maxLineBytes: fc.integer({ min: 4, max: 120 }),
  });

  it("gives the view of fresh buffers: nothing downstream keeps a read", () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 120, size: "max" }), limits, fc.array(fc.nat(), { maxLength: 12 }), (pieces, lim, cuts) => {
        const all = Buffer.from(pieces.join(""), "latin1");
        const points = [...new Set(cuts.map((c) => c % (all.length + 1)))].sort((x, y) => x - y);
        const chunks: Buffer[] = [];
        let prev = 0;
        for (const p of [...points, all.length]) {
          chunks.push(all.subarray(prev, p));
          prev = p;
        }
        expect(runReused(chunks, lim)).toEqual(runFresh(chunks, lim));
      }),
      { numRuns: 500 },
    );
  });

  it("over-long lines among short ones are cut and counted as a line-by-line reference does", () => {
    const line = fc.oneof(fc.nat(12), fc.integer({ min: 20, max: 400 })).chain((n) => fc.constantFrom("a", "é", "€", "😀").map((c) => c.repeat(n)));
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 60 }), fc.integer({ min: 4, max: 300 }), (lines, cap) => {
        const text = lines.map((l) => l + "\n").join("");
        const v = runReused([Buffer.from(text)], { maxBytes: 1 << 20, maxLines: 1000, maxLineBytes: cap, retain: "tail" });
        const cleaned = lines.map((l) => {
          const b = Buffer.byteLength(l);
          if (b <= cap) return l;
          let kept = l;
          while (Buffer.byteLength(kept) > cap) kept = Array.from(kept).slice(0, -1).join("");
          return `${kept} [… ${countOf(b - Buffer.byteLength(kept), "byte")} cut from this line]`;
        });
        expect(v.text).toBe(cleaned.map((l) => l + "\n").join(""));
        expect(v.truncation.totalLines).toBe(lines.length);
        expect(v.truncation.cutLines).toBe(cleaned.filter((l, i) => l !== lines[i]).length);
      }),
      { numRuns: 300 },
    );
  });
});

describe("readPipe", () => {
  it("adopts a child's pipes: every chunk is a view of the one buffer, and every byte arrives in order", async () => {
    const child = spawn("/bin/sh", ["-c", "seq 1 200000; seq 1 1000 >&2"], { stdio: ["ignore", "pipe", "pipe"] });
    const buffer = Buffer.allocUnsafe(16 * 1024);
    const got: Buffer[][] = [[], []];
    let views = 0;
    let reads = 0;
    const closed = ([1, 2] as const).map(
      (fd) =>
        new Promise<void>((resolve) =>
          readPipe(child, fd, buffer, (chunk) => {
            reads++;
            if (chunk.buffer === buffer.buffer) views++;
            got[fd - 1]!.push(Buffer.from(chunk));
          }).onClose(resolve),
        ),
    );
    await Promise.all(closed);
    const seq = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");
    expect(Buffer.concat(got[0]!).toString()).toBe(seq(200000));
    expect(Buffer.concat(got[1]!).toString()).toBe(seq(1000));
    expect(views).toBe(reads);
    // Taken out of child.stdio, so child_process never resumes reads behind the reader's back.
    expect(child.stdio[1]).toBeNull();
  });

  it("falls back to the stream's own chunks where there is no handle to adopt", async () => {
    const stream = Readable.from([Buffer.from("one\n"), Buffer.from("two\n")]);
    const fake = { stdio: [null, stream, null] } as unknown as Parameters<typeof readPipe>[0];
    const got: string[] = [];
    await new Promise<void>((resolve) => readPipe(fake, 1, Buffer.alloc(8), (c) => got.push(c.toString())).onClose(resolve));
    expect(got.join("")).toBe("one\ntwo\n");
  });
});

describe("SpillWriter", () => {
  it("copies each chunk before returning (the caller reuses it), asks for a pause past the mark, and drains", async () => {
    let failure: unknown;
    const w = SpillWriter.create({ dir: work, id: "staging", highWaterMark: 4096 }, (e) => (failure = e));
    const chunk = Buffer.alloc(1500);
    const expected: Buffer[] = [];
    let refused = 0;
    let drains = 0;
    w.onDrain(() => drains++);
    for (let i = 0; i < 2000; i++) {
      chunk.fill(i % 251, 0, 1500 - (i % 7));
      const part = chunk.subarray(0, 1500 - (i % 7));
      expected.push(Buffer.from(part));
      if (!w.write(part)) refused++;
      chunk.fill(0xee);
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await w.close();
    expect(failure).toBeUndefined();
    expect(refused).toBeGreaterThan(0);
    expect(drains).toBeGreaterThan(0);
    expect(readFileSync(w.path).equals(Buffer.concat(expected))).toBe(true);
  });
});
