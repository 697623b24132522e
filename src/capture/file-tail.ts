// Follows a file that a command appends to — its stdout, and its stderr as spool copies it in, when
// it writes the spill file itself (file-child.ts). Each read starts where the last one stopped and
// lands in one reused buffer; the reader is woken by inotify (fs.watch) when the file changes, with a
// slow timer as a safety net, and never polls in a loop. A file has no end of file while its writers
// live: the owner says when the writing is over (`finish`), and the tail reads up to the size the
// file has at that moment.
//
// Output that trickles in is read in gathered steps (gather.ts): a read that did not fill the buffer
// has caught up with the writer, so no read follows it to confirm the end (a change event wakes the
// reader when there is more: one written during a read sets `again`), and the next read waits until
// GATHER_MS after it.
import { close, fstatSync, read, watch, type FSWatcher } from "node:fs";
import { monotonicMs } from "./clock.js";
import { GATHER_MS } from "./gather.js";

/** Wakes the reader should a change event never come (the file renamed away, a watch that failed). */
const SAFETY_POLL_MS = 250;
/** Without inotify (no watch could be set up) the timer is the only wake-up. */
const POLL_WITHOUT_WATCH_MS = 20;
/**
 * The reader is this far behind the writer: the owner holds the writer back (exec.ts stops the
 * process group) until the reader is within a quarter of it. A command writing to a file never waits
 * for spool, so without a bound `yes` (1.2 GB/s to the page cache here) would leave gigabytes to read
 * after a timeout. The bound is what the reader gets through in LAG_MS at its measured pace, within
 * [LAG_MIN, LAG_MAX]: 64 MiB on plain lines (~1 GB/s), 4 MiB through the terminal model (~7 MB/s).
 */
const LAG_MS = 250;
const LAG_MIN = 4 * 1024 * 1024;
const LAG_MAX = 64 * 1024 * 1024;

export interface TailEvents {
  /** A view of the tail's buffer, valid only during the call. */
  onChunk(chunk: Buffer): void;
  /** true when the reader falls LAG_HIGH behind, false once it is within LAG_LOW again (or the tail ends). */
  onBacklog(behind: boolean): void;
  /**
   * The file was cut below what had been read: the command reopened its output for writing
   * (`echo x > /dev/stdout` opens /proc/self/fd/1 with O_TRUNC, which on a file empties it). Reading
   * starts again at 0; what was cut is gone from the file. A cut that the writers outgrew before the
   * reader looked goes unseen.
   */
  onTruncated(): void;
}

export class FileTail {
  private offset = 0;
  private reading = false;
  /** A wake-up came while a read was in flight: read once more before waiting. */
  private again = false;
  private paused = false;
  private behind = false;
  /** Bytes per millisecond while reads follow one another (each one filled the buffer), 0 until known. */
  private pace = 0;
  private lastReadAt = 0;
  private lastFull = false;
  /** Output trickles in: no read before this (monotonic ms); `gather` is the timer that will read then. */
  private nextReadAt = 0;
  private gather: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private released = false;
  /** The size to read up to, once the writers are done. */
  private end: number | undefined;
  private readonly watcher: FSWatcher | undefined;
  private timer: ReturnType<typeof setInterval>;
  private readonly ended: Promise<void>;
  private settleEnded!: () => void;

  /** `fd` is open for reading and is closed by the tail; every read lands in `buffer`. */
  constructor(
    path: string,
    private readonly fd: number,
    private readonly buffer: Buffer,
    private readonly events: TailEvents,
  ) {
    this.ended = new Promise((resolve) => (this.settleEnded = resolve));
    let watcher: FSWatcher | undefined;
    try {
      // Not persistent: the command's own handle keeps the process alive while it runs.
      watcher = watch(path, { persistent: false }, () => this.pump());
      watcher.on("error", () => this.pollFaster());
    } catch {
      watcher = undefined;
    }
    this.watcher = watcher;
    this.timer = setInterval(() => this.pump(), watcher ? SAFETY_POLL_MS : POLL_WITHOUT_WATCH_MS);
    this.timer.unref();
    this.pump();
  }

  /** Where the next read starts: once the tail has ended, the size it read the file up to. */
  get readTo(): number {
    return this.offset;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.pump();
  }

  /** The writers are done: reads up to the file's size now, then closes. */
  finish(): Promise<void> {
    if (!this.closed && this.end === undefined) {
      this.end = this.sizeNow();
      this.paused = false;
      this.pump();
    }
    return this.ended;
  }

  private pollFaster(): void {
    if (this.closed) return;
    clearInterval(this.timer);
    this.timer = setInterval(() => this.pump(), POLL_WITHOUT_WATCH_MS);
    this.timer.unref();
  }

  private pump(): void {
    if (this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.paused) return;
    if (this.end !== undefined && this.end < this.offset) return this.restart();
    if (this.end === undefined) {
      if (this.gather !== undefined) return;
      const wait = this.nextReadAt - monotonicMs();
      if (wait > 0) {
        this.gather = setTimeout(() => {
          this.gather = undefined;
          this.pump();
        }, Math.ceil(wait));
        // Like the watch: the command's own handle keeps the process alive while it runs.
        this.gather.unref();
        return;
      }
    } else this.cancelGather();
    const want = this.end === undefined ? this.buffer.length : Math.min(this.buffer.length, this.end - this.offset);
    if (want <= 0) return this.stop();
    this.reading = true;
    this.again = false;
    read(this.fd, this.buffer, 0, want, this.offset, (error, got) => {
      this.reading = false;
      if (this.closed) return this.release();
      // A read error ends the output as an end of file does.
      if (error !== null) return this.stop();
      // A read under way when finish() set the end can return what a writer still appending (a
      // process outside the group) added after it: past the end it is not delivered. Delivered, it
      // put the offset past the end, which read as a cut (restart: a SpillError on a kept spill,
      // about one run in four of a `while :; do echo; done` loop writing the file after the exit).
      const n = this.end === undefined ? got : Math.min(got, Math.max(0, this.end - this.offset));
      if (n > 0) {
        this.offset += n;
        this.events.onChunk(this.buffer.subarray(0, n));
        this.measurePace(n);
        if (n === this.buffer.length || this.behind) this.checkLag();
        // A short read caught up with the writer: a change event says when there is more.
        if (n < this.buffer.length) this.nextReadAt = monotonicMs() + GATHER_MS;
        if (n === this.buffer.length || this.end !== undefined || this.again) this.pump();
        return;
      }
      const size = this.sizeNow();
      if (size < this.offset) return this.restart();
      // This read may have begun before the end was set.
      if (this.end !== undefined) return size > this.offset && this.offset < this.end ? this.pump() : this.stop();
      if (this.behind) this.checkLag();
      if (this.again) this.pump();
    });
  }

  private restart(): void {
    this.offset = 0;
    if (this.end !== undefined) this.end = this.sizeNow();
    this.events.onTruncated();
    this.pump();
  }

  private sizeNow(): number {
    try {
      return fstatSync(this.fd).size;
    } catch {
      return this.offset;
    }
  }

  private measurePace(n: number): void {
    const now = monotonicMs();
    if (this.lastFull) {
      const pace = n / Math.max(now - this.lastReadAt, 0.01);
      this.pace = this.pace === 0 ? pace : this.pace * 0.8 + pace * 0.2;
    }
    this.lastReadAt = now;
    this.lastFull = n === this.buffer.length;
  }

  private checkLag(): void {
    const lag = this.sizeNow() - this.offset;
    // Until the pace is known (two reads in a row) the bound is the small one.
    const high = Math.min(LAG_MAX, Math.max(LAG_MIN, this.pace * LAG_MS));
    if (!this.behind && lag > high) {
      this.behind = true;
      this.events.onBacklog(true);
    } else if (this.behind && lag < high / 4) {
      this.behind = false;
      this.events.onBacklog(false);
    }
  }

  private cancelGather(): void {
    clearTimeout(this.gather);
    this.gather = undefined;
  }

  private stop(): void {
    if (this.closed) return;
    this.closed = true;
    this.watcher?.close();
    clearInterval(this.timer);
    this.cancelGather();
    // A read in flight still uses the descriptor: it is closed when that read returns.
    if (!this.reading) this.release();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    if (this.behind) {
      this.behind = false;
      this.events.onBacklog(false);
    }
    close(this.fd, () => this.settleEnded());
  }
}
