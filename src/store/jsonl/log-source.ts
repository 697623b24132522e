// Reading byte ranges of a main log that is only ever appended to, for the reads the session index
// sends to the file instead of holding the log in memory. The writer keeps one read descriptor open
// until it closes. A reader (snapshot, follower) has no close, so it opens the file per read and
// checks it is still the file it indexed (same inode, long enough): a log replaced or cut under it
// (a repair, a delete and a new session of the same name) fails the read with SessionChangedError
// instead of answering from someone else's bytes.
import { Buffer } from "node:buffer";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { SessionChangedError } from "../errors.js";

/** Fills `buf` from `position` (fewer bytes only at the end of the file); returns the bytes read. */
export function readAt(fd: number, buf: Uint8Array, position: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/** The largest buffer a source keeps for reuse: a segment (256 KiB) and then some; longer reads get their own. */
const REUSED_MAX = 1024 * 1024;

export class LogSource {
  readonly path: string;
  ino: number;
  #fd: number;
  readonly #reader: boolean;
  #reused = Buffer.alloc(0);

  private constructor(path: string, fd: number, ino: number) {
    this.path = path;
    this.#fd = fd;
    this.ino = ino;
    this.#reader = fd < 0;
  }

  /** The writer's source: one descriptor, held until close(). */
  static forWriter(path: string): LogSource {
    const fd = openSync(path, "r");
    try {
      return new LogSource(path, fd, fstatSync(fd).ino);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  /** A reader's source: the file is opened per read and must keep inode `ino`. */
  static forReader(path: string, ino: number): LogSource {
    return new LogSource(path, -1, ino);
  }

  /** Exactly `length` bytes at `position`; SessionChangedError when the file no longer has them. */
  read(position: number, length: number): Buffer {
    const buf = this.readUpTo(position, length);
    if (buf.length < length) throw new SessionChangedError(this.path);
    return buf;
  }

  /**
   * `read` into a buffer this source keeps and reuses (up to REUSED_MAX): the bytes are valid until
   * the next `readReused`, so only for a read that is done with them before it reads again. A fresh
   * 256 KiB buffer per transcript page let tens of MB of freed buffers wait for a collection.
   */
  readReused(position: number, length: number): Buffer {
    if (length > REUSED_MAX) return this.read(position, length);
    if (this.#reused.length < length) this.#reused = Buffer.allocUnsafe(Math.max(length, 64 * 1024));
    return this.readInto(this.#reused.subarray(0, length), position);
  }

  /** Fills `buf` with the bytes at `position`; SessionChangedError when the file no longer has them. */
  readInto(buf: Buffer, position: number): Buffer {
    if (this.#readUpTo(buf, position) < buf.length) throw new SessionChangedError(this.path);
    return buf;
  }

  /** A reader's source: the writer may have rewritten what it indexed (a repair), so a mismatch is a change, not damage. */
  get reader(): boolean {
    return this.#reader;
  }

  /** Up to `length` bytes at `position` (fewer at the end of the file). */
  readUpTo(position: number, length: number): Buffer {
    const buf = Buffer.allocUnsafe(length);
    const got = this.#readUpTo(buf, position);
    return got === length ? buf : buf.subarray(0, got);
  }

  #readUpTo(buf: Buffer, position: number): number {
    const fd = this.#fd >= 0 ? this.#fd : openSync(this.path, "r");
    try {
      if (this.#fd < 0 && fstatSync(fd).ino !== this.ino) throw new SessionChangedError(this.path);
      return readAt(fd, buf, position);
    } finally {
      if (this.#fd < 0) closeSync(fd);
    }
  }

  /**
   * The writer's source moved to the file now at `path` (the log published again after it was
   * deleted under the writer): reads go to the new file, whose bytes are the old one's.
   */
  reopen(): void {
    const fd = openSync(this.path, "r");
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = fd;
    this.ino = fstatSync(fd).ino;
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }
}
