// The spill file: raw bytes, byte-identical to the command's output, appended in order; the name is
// taken exclusively (O_EXCL) so an earlier spill is never overwritten. Usually the command writes it
// itself (file-child.ts): created before the spawn, its path published once the limits are crossed,
// removed at the end if they never were. On pipes (no direct spill) it is created synchronously at the
// moment the limits are crossed, so its path can be published at once, and written by SpillWriter:
//
// The pipes hand over chunks that are only valid during the call (one reused read buffer), so they are
// copied into a few fixed staging buffers, reused from write to write: memory stays flat however long
// the output (a fresh buffer per chunk is what grew the C heap), and one write goes to disk per staging
// buffer rather than one per read. At most one write is in flight; whatever arrives meanwhile is
// batched into the next one. A partly filled buffer that follows one (output trickling in) waits
// until GATHER_MS after it (gather.ts); a full one, everything at close, and what a view handed to a
// reader shows (flush: the reader may open the file next) go at once.
import { Buffer } from "node:buffer";
import { close as closeFd, mkdirSync, openSync, rmdirSync, unlinkSync, write as writeFd } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { monotonicMs } from "./clock.js";
import { InvalidOptionsError, SpillError } from "./errors.js";
import { GATHER_MS } from "./gather.js";
import type { SpillOptions } from "./types.js";

/**
 * Enough for a fast producer to rarely wait on the page cache; small, so memory stays flat: 8 MiB of
 * queued chunks cost ~20 MB of peak RSS on a 1 GiB capture and no throughput (measured, bench:capture).
 */
const HIGH_WATER_MARK = 1024 * 1024;
/** One staging buffer, the most one write takes (less when the high-water mark is lower). */
const STAGE_BYTES = 256 * 1024;
const SAFE_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/**
 * node:crypto through require, on the first spill: imported as an ES module it costs ~10 ms of CPU
 * (Node builds its module facade by reading every export, and crypto's lazy getters load webcrypto,
 * keys, argon2…), against ~0.4 ms required — a tenth of the whole capture of 100 MiB.
 */
let randomBytes: ((size: number) => Buffer) | undefined;
const randomHex = (bytes: number): string => {
  randomBytes ??= (createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto")).randomBytes;
  return randomBytes(bytes).toString("hex");
};

export function validateSpill(spill: SpillOptions): void {
  if (typeof spill.dir !== "string" || spill.dir === "") throw new InvalidOptionsError("spill.dir must be a non-empty path");
  const hwm = spill.highWaterMark;
  if (hwm !== undefined && (!Number.isInteger(hwm) || hwm <= 0)) {
    throw new InvalidOptionsError(`spill.highWaterMark must be a positive integer, got ${JSON.stringify(hwm)}`);
  }
  for (const [name, v, min] of [
    ["maxBytes", spill.maxBytes, 1],
    ["minFreeBytes", spill.minFreeBytes, 0],
  ] as const) {
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= min)) {
      throw new InvalidOptionsError(`spill.${name} must be a whole number of bytes${min === 0 ? "" : " above 0"}, got ${JSON.stringify(v)}`);
    }
  }
  if (spill.direct !== undefined && typeof spill.direct !== "boolean") {
    throw new InvalidOptionsError(`spill.direct must be a boolean, got ${JSON.stringify(spill.direct)}`);
  }
  if (spill.subdir !== undefined && spill.subdir !== "" && !SAFE_ID.test(spill.subdir)) {
    throw new InvalidOptionsError(`spill.subdir ${JSON.stringify(spill.subdir)} must be one plain folder name`);
  }
  if (spill.id !== undefined && !SAFE_ID.test(spill.id)) {
    throw new InvalidOptionsError(`spill.id ${JSON.stringify(spill.id)} must be 1–128 characters of letters, digits, "_", "-" and "." (not first)`);
  }
}

/** A spill file just created: opened for appending, and the first directory its creation made, if any. */
export interface SpillFile {
  readonly path: string;
  readonly fd: number;
  readonly createdDir: string | undefined;
}

/**
 * `<dir>/<subdir>/<id>.log`, created exclusively (0600, O_APPEND): a taken name gets `-2`, `-3`, …
 * Throws SpillError when the directory or the file cannot be created.
 */
export function createSpillFile(spill: SpillOptions): SpillFile {
  const dir = join(spill.dir, spill.subdir ?? "spill");
  const stem = spill.id ?? `${Date.now().toString(36)}-${randomHex(4)}`;
  let path = join(dir, `${stem}.log`);
  try {
    let createdDir = mkdirSync(dir, { recursive: true });
    for (let n = 2, retries = 0; ; ) {
      try {
        return { path, fd: openSync(path, "ax", 0o600), createdDir };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Another capture discarded its file and the directory it had made, between our mkdir and open.
        if (code === "ENOENT" && retries++ < 3) {
          createdDir = mkdirSync(dir, { recursive: true }) ?? createdDir;
          continue;
        }
        if (code !== "EEXIST" || n > 1000) throw error;
        path = join(dir, `${stem}-${n++}.log`);
      }
    }
  } catch (cause) {
    throw new SpillError(path, cause);
  }
}

/**
 * Removes a spill file that was never published, and the directories its creation made if they are
 * empty now (another capture's file in them keeps them).
 */
export function discardSpillFile(file: SpillFile): void {
  try {
    unlinkSync(file.path);
  } catch {
    // Already gone: nothing to discard.
  }
  if (file.createdDir === undefined) return;
  for (let d = dirname(file.path); ; d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
    if (d === file.createdDir || d === dirname(d)) return;
  }
}

export class SpillWriter {
  /** Staging buffers that are full (or sealed) and wait for the disk; the first one is being written. */
  private readonly queue: { buf: Buffer; used: number }[] = [];
  private readonly spare: Buffer[] = [];
  private readonly drainListeners: (() => void)[] = [];
  private readonly stageBytes: number;
  private current: Buffer | undefined;
  private used = 0;
  /** Bytes accepted and not yet on disk. */
  private buffered = 0;
  private writing = false;
  private needDrain = false;
  private ending = false;
  private fdClosed = false;
  /** Output trickles in: a partly filled buffer waits until then (monotonic ms), `gather` the timer. */
  private nextPartialAt = 0;
  private gather: ReturnType<typeof setTimeout> | undefined;
  /** flush() asked for what is held now to go without a gathering step. */
  private urgent = false;
  private failure: SpillError | undefined;
  private readonly closed: Promise<void>;
  private settleClosed!: () => void;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly highWaterMark: number,
    private readonly onError: (error: SpillError) => void,
  ) {
    this.stageBytes = Math.min(STAGE_BYTES, highWaterMark);
    this.closed = new Promise((resolve) => (this.settleClosed = resolve));
  }

  /** Throws SpillError when the directory or file cannot be created. */
  static create(spill: SpillOptions, onError: (error: SpillError) => void): SpillWriter {
    const file = createSpillFile(spill);
    return new SpillWriter(file.path, file.fd, spill.highWaterMark ?? HIGH_WATER_MARK, onError);
  }

  get failed(): boolean {
    return this.failure !== undefined;
  }

  /**
   * Copies the chunk (the caller may reuse it at once) and queues it for the disk. false: the caller
   * should stop feeding until `drain` — what it still feeds is accepted all the same.
   */
  write(chunk: Buffer): boolean {
    if (this.failure !== undefined || this.ending) return true;
    for (let at = 0; at < chunk.length; ) {
      this.current ??= this.spare.pop() ?? Buffer.allocUnsafe(this.stageBytes);
      const n = chunk.copy(this.current, this.used, at);
      this.used += n;
      at += n;
      if (this.used === this.current.length) this.seal();
    }
    this.buffered += chunk.length;
    this.pump();
    if (this.buffered < this.highWaterMark) return true;
    this.needDrain = true;
    return false;
  }

  /**
   * Writes what it holds without waiting for a gathering step (after a write in flight, if any): a
   * reader is about to be told of the file (a view naming it), and it must hold what that view shows.
   */
  flush(): void {
    if (this.ending || this.failure !== undefined) return;
    this.urgent = true;
    this.pump();
  }

  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  /** Flushes everything and closes; rejects with SpillError if any write failed. */
  close(): Promise<void> {
    if (!this.ending) {
      this.ending = true;
      this.pump();
    }
    return this.closed.then(() => {
      if (this.failure !== undefined) throw this.failure;
    });
  }

  /** Stops writing; what is not on disk yet is dropped. */
  destroy(): void {
    this.ending = true;
    this.queue.length = 0;
    this.current = undefined;
    this.used = 0;
    if (!this.writing) this.closeFd();
  }

  private seal(): void {
    if (this.current === undefined || this.used === 0) return;
    this.queue.push({ buf: this.current, used: this.used });
    this.current = undefined;
    this.used = 0;
  }

  /** Starts the next write unless one is in flight; the disk is idle, so a partly filled stage goes too. */
  private pump(): void {
    if (this.writing || this.fdClosed) return;
    if (this.queue.length === 0) {
      if (this.used === 0) this.urgent = false;
      else if (!this.ending && !this.urgent) {
        const wait = this.nextPartialAt - monotonicMs();
        if (wait > 0) {
          this.gather ??= setTimeout(() => {
            this.gather = undefined;
            this.pump();
          }, Math.ceil(wait));
          return;
        }
      }
      this.seal();
      this.urgent = false;
    }
    this.cancelGather();
    const next = this.queue[0];
    if (next === undefined) {
      if (this.ending) this.closeFd();
      return;
    }
    this.writing = true;
    this.writeFrom(next.buf, 0, next.used);
  }

  private writeFrom(buf: Buffer, from: number, to: number): void {
    writeFd(this.fd, buf, from, to - from, null, (error, written) => {
      if (error) return this.fail(error);
      if (from + written < to) return this.writeFrom(buf, from + written, to);
      this.writing = false;
      this.buffered -= to;
      this.queue.shift();
      if (to < this.stageBytes) this.nextPartialAt = monotonicMs() + GATHER_MS;
      // Kept for reuse up to what the high-water mark can hold: buffers dropped and reallocated
      // instead measured 129 × 256 KiB of garbage and ~25 MB more peak RSS on 1 GiB.
      if (this.spare.length * this.stageBytes < this.highWaterMark + this.stageBytes) this.spare.push(buf);
      if (this.needDrain && this.buffered <= this.highWaterMark / 2) {
        this.needDrain = false;
        for (const l of this.drainListeners) l();
      }
      this.pump();
    });
  }

  private fail(cause: unknown): void {
    this.writing = false;
    this.failure ??= new SpillError(this.path, cause);
    this.queue.length = 0;
    this.current = undefined;
    this.used = 0;
    this.closeFd();
    this.onError(this.failure);
  }

  private cancelGather(): void {
    clearTimeout(this.gather);
    this.gather = undefined;
  }

  private closeFd(): void {
    this.cancelGather();
    if (this.fdClosed) return;
    this.fdClosed = true;
    closeFd(this.fd, () => this.settleClosed());
  }
}
