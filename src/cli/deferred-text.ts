// Text held back until what goes before it is known (`spool inspect` prints its header, which folds
// every call's record, above the calls it learns it from). Up to MEMORY_CHARS stays in memory; past
// that it goes to a temporary file that is unlinked as soon as it is opened, so nothing is left behind
// however the process ends, and memory stays one chunk however much text there is.
import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PacedOutput } from "./paced-output.js";

/** Text gathers as a string up to this, then is encoded: what is held in memory is bytes outside the JavaScript heap. */
export const CHUNK_CHARS = 16 * 1024;
/** Kept in memory below this. */
export const MEMORY_BYTES = 1 << 20;
/** Read back from the file this much at a time. */
export const READ_BYTES = 64 * 1024;

export class DeferredText {
  readonly #dir: string;
  /** The latest text, as a string until CHUNK_CHARS. */
  #text = "";
  /** Earlier text, encoded (outside the JavaScript heap), until MEMORY_BYTES. */
  readonly #held: Buffer[] = [];
  #heldBytes = 0;
  #fd: number | undefined;
  #fileBytes = 0;

  /** `dir`: where the file goes once the text outgrows memory (the system's temporary directory by default). */
  constructor(dir: string = tmpdir()) {
    this.#dir = dir;
  }

  append(text: string): void {
    this.#text += text;
    if (this.#text.length >= CHUNK_CHARS) this.#encode();
  }

  /** Whether the text went to a file (it outgrew memory). */
  get spilled(): boolean {
    return this.#fd !== undefined;
  }

  #encode(): void {
    const bytes = Buffer.from(this.#text);
    this.#text = "";
    this.#held.push(bytes);
    this.#heldBytes += bytes.length;
    if (this.#heldBytes < MEMORY_BYTES) return;
    if (this.#fd === undefined) {
      const path = join(this.#dir, `spool-${process.pid}-${randomUUID()}.tmp`);
      this.#fd = openSync(path, "wx+", 0o600);
      unlinkSync(path);
    }
    for (const b of this.#held) for (let off = 0; off < b.length; ) off += writeSync(this.#fd, b, off);
    this.#fileBytes += this.#heldBytes;
    this.#held.length = 0;
    this.#heldBytes = 0;
  }

  /** Writes all the text to `out`, in order, at `out`'s pace. */
  async writeTo(out: PacedOutput): Promise<void> {
    for (let pos = 0; pos < this.#fileBytes; ) {
      // A fresh buffer each time: a stream may still hold the previous one when it has taken it.
      const buf = Buffer.allocUnsafe(Math.min(READ_BYTES, this.#fileBytes - pos));
      const n = readSync(this.#fd!, buf, 0, buf.length, pos);
      if (n === 0) throw new Error(`the temporary file of held-back output ended at ${pos} of ${this.#fileBytes} bytes`);
      await out.write(n === buf.length ? buf : buf.subarray(0, n));
      pos += n;
    }
    for (const b of this.#held) await out.write(b);
    await out.write(this.#text);
  }

  /** Releases the file, if there is one. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}
