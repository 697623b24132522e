// Real pipes (not socketpairs) for a command on the pipe path, so it can reopen /dev/stdout,
// /dev/stderr and /dev/stdin through /proc (`echo x > /dev/stderr`, `tee /dev/stderr`, Python's
// `open('/dev/stdout', 'w')`). Node's stdio "pipe" is an AF_UNIX socketpair, and opening
// /proc/self/fd/N of a socket fails with ENXIO ("No such device or address").
//
// Node cannot call pipe(2); a FIFO is one: `mkfifo` makes a batch of them in a private directory
// (mkdtemp, 0700), each is opened at both ends and unlinked at once (the open ends keep working, and
// a reopen through /proc still reaches the same pipe), and the directory is removed. What is kept is
// a small pool of open descriptor pairs, so nothing of it is on disk between batches, and a SIGKILL
// can leave a directory behind only while a batch is made (a few milliseconds; one made early, below,
// until the command that takes it is spawned: 4 left by 40 `spool run`s killed 10-90 ms after they
// started, against 1 before); such a directory is removed by the next process that makes a batch,
// once it is a minute old. The pool is refilled in
// the background; only a process's first command (or one that finds the pool empty) waits for
// `mkfifo` (about 3 ms; 20-40 ms on a loaded machine, spawnSync waits for the scheduler), unless its
// caller made the first batch early (prepareRealPipes: `spool run` does, as it starts, and finds the
// batch made by the time it spawns the command). Where no FIFO can be made (not Linux, no `mkfifo`, no
// usable tmpdir) the caller silently keeps the socketpairs, for the rest of the process. Running out of
// descriptors (EMFILE, ENFILE) is no such case: that batch is given up and the next command tries again.
// It was taken as one, so after 60 bash calls at once under `ulimit -n 64` every later command of that
// `spool mcp` ran on socketpairs, and `echo x > /dev/stdout` failed with ENXIO for the rest of it.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, constants, lstatSync, mkdtempSync, openSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monotonicMs } from "./clock.js";
import { procStat } from "./proc-stat.js";

/** Both ends of one pipe, each its own blocking open file description, close-on-exec. */
export interface RealPipe {
  readonly read: number;
  readonly write: number;
}

const PREFIX = "spool-pipes-";
/** Pipes kept ready (two descriptors each), and the level at which a refill starts. */
const POOL_SIZE = 8;
const REFILL_BELOW = 4;
/** A batch directory is gone within milliseconds; one this old was left by a process that died. */
const STALE_MS = 60_000;

const pool: RealPipe[] = [];
/** Out of descriptors for now: not a reason to stop making real pipes. */
const outOfFiles = (e: unknown): boolean => ["EMFILE", "ENFILE"].includes((e as NodeJS.ErrnoException | undefined)?.code ?? "");
let usable = process.platform === "linux";
let refilling = false;
let swept = false;
/** Directories of batches in flight, removed if the process exits before they are done. */
const inFlight = new Set<string>();
/** The batch being made in the background: its last FIFO, its `mkfifo`, and what adopts them once made. */
let making: { readonly last: string; readonly pid: number | undefined; readonly finish: (ok: boolean) => void } | undefined;
/** Longest a command waits for the background batch before making one of its own. */
const WAIT_FOR_BATCH_MS = 1000;

/** A pipe from the pool, or undefined when real pipes cannot be made here (use socketpairs). */
export function realPipe(): RealPipe | undefined {
  if (!usable) return undefined;
  if (pool.length === 0 && !adoptIfMade()) makeBatch(POOL_SIZE, true);
  const pipe = pool.pop();
  if (pool.length < REFILL_BELOW) refill();
  return pipe;
}

/**
 * Starts making a batch in the background now, for a caller about to run its first command: that
 * command then takes its pipes from the batch (made while the caller did other work) instead of
 * waiting for `mkfifo`. Nothing happens where real pipes cannot be made, or a batch is ready or coming.
 */
export function prepareRealPipes(): void {
  if (pool.length === 0) refill();
}

/**
 * The background batch, taken as soon as `mkfifo` has made every FIFO of it (it makes them in order),
 * without waiting for the event loop to hear of its exit. While it still runs the caller waits for it
 * (as a spawnSync of a batch of its own would, after a fork): on a loaded machine the batch started
 * as `spool run` began was not always made by the spawn (6 runs in 20 at load 5).
 */
function adoptIfMade(): boolean {
  const batch = making;
  if (batch === undefined) return false;
  const until = monotonicMs() + WAIT_FOR_BATCH_MS;
  for (;;) {
    // Its state first: running then, and the FIFO not there after, it was not done.
    const state = batch.pid === undefined ? undefined : procStat(String(batch.pid))?.state;
    try {
      if (lstatSync(batch.last).isFIFO()) break;
    } catch {
      // Not made yet.
    }
    // Gone, or a zombie (its exit not yet seen by the event loop): it made what it could.
    if (state === undefined || state === "Z" || monotonicMs() > until) return false;
    Atomics.wait(pauser, 0, 0, 1);
  }
  batch.finish(true);
  return pool.length > 0;
}

const pauser = new Int32Array(new SharedArrayBuffer(4));

function refill(): void {
  if (!usable || refilling) return;
  refilling = true;
  makeBatch(POOL_SIZE - pool.length, false);
}

function makeBatch(count: number, now: boolean): void {
  let dir: string;
  try {
    // Housekeeping, after the command this batch is for has been spawned.
    if (!swept) setImmediate(sweepStale).unref();
    swept = true;
    dir = mkdtempSync(join(tmpdir(), PREFIX));
  } catch (e) {
    if (!outOfFiles(e)) usable = false;
    refilling = false;
    return;
  }
  const paths = Array.from({ length: count }, (_, i) => join(dir, String(i)));
  const args = ["-m", "600", ...paths];
  if (now) {
    const made = spawnSync("mkfifo", args, { stdio: "ignore" });
    adopt(dir, paths, made.error === undefined && made.status === 0, made.error);
    return;
  }
  inFlight.add(dir);
  if (inFlight.size === 1) process.on("exit", removeInFlight);
  let done = false;
  const finish = (ok: boolean, error?: unknown): void => {
    if (done) return;
    done = true;
    making = undefined;
    inFlight.delete(dir);
    if (inFlight.size === 0) process.off("exit", removeInFlight);
    refilling = false;
    adopt(dir, paths, ok, error);
  };
  try {
    const child = spawn("mkfifo", args, { stdio: "ignore" });
    making = { last: paths[paths.length - 1]!, pid: child.pid, finish };
    child.on("error", (e) => finish(false, e));
    child.on("exit", (code) => finish(code === 0));
    // Making pipes for later must never keep the caller's event loop alive.
    child.unref();
  } catch (e) {
    finish(false, e);
  }
}

/** Opens and unlinks every FIFO made, then removes the batch's directory. */
function adopt(dir: string, paths: readonly string[], made: boolean, error?: unknown): void {
  try {
    if (!made) throw error ?? new Error("mkfifo failed");
    for (const path of paths) pool.push(openBoth(path));
  } catch (e) {
    if (!outOfFiles(e)) usable = false;
    for (const pipe of pool.splice(0)) for (const fd of [pipe.read, pipe.write]) closeSync(fd);
  } finally {
    removeDir(dir);
  }
}

/**
 * Removes a batch's directory. rmSync opens it to list it, so out of descriptors it throws EMFILE: it
 * was thrown from the `mkfifo` exit handler and ended `spool mcp` ("Unknown error: Too many open files
 * '/tmp/spool-pipes-…'", 1 run in 3 of 4 bursts of 60 bash calls under ulimit -n 64). Tried again a
 * few times a second apart and at exit instead; one still there is swept as stale by a later process.
 */
function removeDir(dir: string, tries = 5): void {
  try {
    rmSync(dir, { recursive: true, force: true });
    if (inFlight.delete(dir) && inFlight.size === 0) process.off("exit", removeInFlight);
  } catch {
    // Until it is gone it is removed at exit too, as a batch in flight is.
    if (!inFlight.has(dir) && inFlight.add(dir).size === 1) process.on("exit", removeInFlight);
    if (tries > 0) setTimeout(() => removeDir(dir, tries - 1), 1000).unref();
  }
}

function openBoth(path: string): RealPipe {
  // A FIFO opened for reading alone waits for a writer, and for writing alone for a reader (or fails
  // with O_NONBLOCK). Held open for both first (Linux allows it on a FIFO), neither end waits, and
  // both are plain blocking descriptors, as the command expects of its stdio.
  const both = openSync(path, constants.O_RDWR);
  try {
    const read = openSync(path, constants.O_RDONLY);
    try {
      return { read, write: openSync(path, constants.O_WRONLY) };
    } catch (e) {
      closeSync(read);
      throw e;
    }
  } finally {
    closeSync(both);
    unlinkSync(path);
  }
}

function removeInFlight(): void {
  for (const dir of inFlight) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // at exit, out of descriptors: swept as stale by a later process
    }
  }
}

/** Once per process: batch directories a dead process left behind (a SIGKILL mid-batch). */
function sweepStale(): void {
  const root = tmpdir();
  const uid = process.getuid?.();
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    try {
      const path = join(root, name);
      const st = lstatSync(path);
      if (st.isDirectory() && st.uid === uid && Date.now() - st.mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Someone else's, or gone already.
    }
  }
}
