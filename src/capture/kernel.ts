// The byte path's kernel, in WebAssembly with SIMD (source: wasm/kernel.ts, AssemblyScript): over a
// read it removes complete CSI colour sequences and the `\r` of `\r\n`, counts newlines and flags
// possibly over-long lines, or says the read needs the string path. UTF-8 is still checked natively
// (Node's isUtf8, ~0.14 ms/MiB here: a 128-bit validator in WebAssembly would not beat it).
//
// It replaced three JavaScript passes (a CRLF rewrite, the CSI strip, a newline count four bytes at a
// time). OutputCapture.push alone on the bench's generator output, pipe-sized reads, A/B in one
// process (min of 9): coloured 1.95 → 0.73 ms/MiB, plain lines 0.66 → 0.41, `seq`-like short lines
// 0.55 → 0.27; the scan itself ~0.5 ms/MiB coloured (one CSI sequence every ~49 bytes), ~0.16–0.25
// plain. The JavaScript strip also ran the first ~8 MiB of coloured output at ~9 ms/MiB before V8 had
// optimised it; the kernel is fast from the first read (Liftoff, then TurboFan in the background).
//
// One instance serves every capture of the thread: a scan is synchronous and what it leaves in the
// module's memory is consumed (copied by the window, decoded) before the next. Without WebAssembly
// (node --jitless) there is no kernel and every read takes the string path: the same view, slower.
import { Buffer } from "node:buffer";
import { KERNEL_WASM } from "./kernel-wasm.js";

/** The most bytes one scan takes: the caller slices longer reads (any split gives the same view). */
export const SCAN_SLICE = 256 * 1024;

export interface Scan {
  /** The kept bytes: a view of the kernel's memory, valid until the next scan. */
  out: Buffer;
  /** Bytes at the end of the input that begin a CSI sequence the input does not complete. */
  held: number;
  /** Newlines in `out`. */
  lines: number;
  /**
   * False when no line between two newlines of `out` is longer than the cap given to the scan. The
   * kernel checks 64 bytes at a time: a line up to 62 bytes shorter than the cap may set it too, and
   * caps under 64 are left to the caller.
   */
  mayBeLong: boolean;
  /** ESC, CR, backspace and NUL bytes in the input (for the caller's choice of `sparse`). */
  specials: number;
}

/** The kernel reads and writes up to 64 bytes past the end of its input and output. */
const SLACK = 128;

interface Exports {
  memory: WebAssembly.Memory;
  heapBase(): number;
  scan(input: number, output: number, n: number, maxLineBytes: number, holdLimit: number, sparse: boolean, list: number, res: number): number;
}

export class ByteKernel {
  private readonly exports: Exports;
  private readonly res: number;
  private readonly input: number;
  private readonly output: number;
  private readonly list: number;
  private readonly bytesIn: Buffer;
  private readonly bytesOut: Buffer;
  private readonly results: Int32Array;
  private readonly result: Scan = { out: Buffer.alloc(0), held: 0, lines: 0, mayBeLong: false, specials: 0 };

  constructor() {
    const module = new WebAssembly.Module(Buffer.from(KERNEL_WASM, "base64"));
    this.exports = new WebAssembly.Instance(module, {}).exports as unknown as Exports;
    this.res = this.exports.heapBase();
    this.input = this.res + 64;
    this.output = this.input + SCAN_SLICE + SLACK;
    this.list = this.output + SCAN_SLICE + SLACK;
    const buffer = this.exports.memory.buffer;
    if (buffer.byteLength < this.list + 4 * (SCAN_SLICE + SLACK)) throw new Error("the kernel's memory is too small");
    this.bytesIn = Buffer.from(buffer, this.input, SCAN_SLICE);
    this.bytesOut = Buffer.from(buffer, this.output, SCAN_SLICE);
    this.results = new Int32Array(buffer, this.res, 5);
  }

  /**
   * Scans a read of at most SCAN_SLICE bytes (copied into the kernel; `chunk` is not touched).
   * Undefined: the read is not for the byte path. UTF-8 is not checked here. `sparse`: special bytes
   * are expected to be rare (plain lines) rather than common (colour, CRLF); the result is the same.
   */
  scan(chunk: Buffer, maxLineBytes: number, holdLimit: number, sparse: boolean): Scan | undefined {
    if (chunk.length > SCAN_SLICE) return undefined;
    this.bytesIn.set(chunk);
    if (this.exports.scan(this.input, this.output, chunk.length, maxLineBytes, holdLimit, sparse, this.list, this.res) !== 0) return undefined;
    const r = this.result;
    const results = this.results;
    r.out = this.bytesOut.subarray(0, results[0]);
    r.held = results[1]!;
    r.lines = results[2]!;
    r.mayBeLong = results[3] !== 0;
    r.specials = results[4]!;
    return r;
  }
}

let kernel: ByteKernel | null | undefined;

/** The thread's kernel, made on first use; undefined where WebAssembly (with SIMD) is not available. */
export function byteKernel(): ByteKernel | undefined {
  if (kernel === undefined) {
    try {
      kernel = new ByteKernel();
    } catch {
      kernel = null;
    }
  }
  return kernel ?? undefined;
}
