// Reading a log with torn-tail detection, and appending to one without ever leaving a partial line
// in front of the next append.
import { Buffer } from "node:buffer";
import { closeSync, fdatasync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { promisify } from "node:util";
import { CorruptSessionError, fullDiskAs, StoreFailedError } from "../errors.js";
import { DAMAGED_LAST_LINE, openLine } from "./line.js";

const fdatasyncAsync = promisify(fdatasync);

export interface LogLine {
  readonly line: number;
  readonly record: Record<string, unknown>;
}

export interface ReadLog {
  readonly lines: readonly LogLine[];
  /** Bytes that hold complete, valid lines; anything after is a torn tail. */
  readonly goodLength: number;
  readonly fileLength: number;
  /** With `untilDamage`: the first line that failed to verify (everything from it on is past goodLength). */
  readonly damagedLine?: number;
}

/** Searches only the line: searching from `start` to the end of the buffer made a read quadratic in the lines. */
export function hasNul(buf: Buffer, start: number, end: number): boolean {
  return buf.subarray(start, end).indexOf(0) >= 0;
}

/**
 * The final segment without a newline is torn (a write cut short) and is cut away quietly. A final
 * newline-terminated line holding NUL bytes is torn too: a sealed line never contains a raw NUL, so
 * NULs mean blocks the filesystem had not persisted when the machine stopped. Any other line that
 * does not verify — the last one included — is corruption, reported with its file and line; with
 * `untilDamage` the read stops there instead (`damagedLine`), which is what `spool repair` cuts at.
 */
export function readLog(path: string, options: { readonly untilDamage?: boolean } = {}): ReadLog {
  const buf = readFileSync(path);
  const lastNl = buf.lastIndexOf(10);
  let complete = lastNl + 1;
  const starts: number[] = [];
  for (let pos = 0; pos < complete; ) {
    starts.push(pos);
    pos = buf.indexOf(10, pos) + 1;
  }
  const lines: LogLine[] = [];
  let damagedLine: number | undefined;
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!;
    const end = (i + 1 < starts.length ? starts[i + 1]! : complete) - 1;
    const isLast = i === starts.length - 1;
    const nul = end > start && hasNul(buf, start, end);
    const record = nul ? undefined : openLine(buf.toString("utf8", start, end));
    if (record === undefined) {
      if (isLast && nul) {
        complete = start;
        break;
      }
      if (options.untilDamage) {
        damagedLine = i + 1;
        complete = start;
        break;
      }
      throw new CorruptSessionError(path, i + 1, end === start ? "empty line" : isLast ? DAMAGED_LAST_LINE : "the line is damaged (bad checksum or not JSON)", {
        repairable: true,
      });
    }
    lines.push({ line: i + 1, record });
  }
  return { lines, goodLength: complete, fileLength: buf.length, ...(damagedLine !== undefined ? { damagedLine } : {}) };
}

/** An append-only file descriptor that restores its length when a write fails half-way. */
export class AppendFile {
  readonly path: string;
  #fd: number;
  #size: number;
  dirty = false;

  /** `fd`: a descriptor already open for appending to `path` (a file just published whole); else `path` is opened. */
  constructor(path: string, expectedSize?: number, fd?: number) {
    this.path = path;
    this.#fd = fd ?? openSync(path, "a");
    this.#size = fstatSync(this.#fd).size;
    if (expectedSize !== undefined && expectedSize < this.#size) {
      ftruncateSync(this.#fd, expectedSize);
      this.#size = expectedSize;
    }
  }

  get size(): number {
    return this.#size;
  }

  /** Returns the bytes written. */
  append(text: string): number {
    const bytes = Buffer.from(text, "utf8");
    let off = 0;
    try {
      while (off < bytes.length) off += writeSync(this.#fd, bytes, off, bytes.length - off);
    } catch (e) {
      try {
        if (off > 0) ftruncateSync(this.#fd, this.#size);
      } catch (e2) {
        throw new StoreFailedError(this.path, e2);
      }
      throw fullDiskAs(e, this.path);
    }
    this.#size += bytes.length;
    this.dirty = true;
    return bytes.length;
  }

  /** True when the file was deleted (no name links to it any more): what is appended now reaches nobody. */
  unlinked(): boolean {
    return fstatSync(this.#fd).nlink === 0;
  }

  async sync(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    await fdatasyncAsync(this.#fd);
  }

  /** fdatasync now, dirty or not (before a checkpoint claims what the log holds). */
  syncNow(): void {
    fdatasyncSync(this.#fd);
    this.dirty = false;
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }
}
