// Whether the reader of spool's stdout has gone, learnt without writing to it. `spool run -- yes
// 2>/dev/null | true`: the result is printed only at the end, so nothing failed with EPIPE and the
// command ran on into the disk's free-space floor (GBs of spill). On Linux a pipe's write end polls
// EPOLLERR once no reader is left; Node has no poll on an arbitrary descriptor, but its WASI does:
// uvwasi's poll_oneoff is a uv_poll (epoll) on its own loop, called here on a second write-only
// descriptor of the same pipe every POLL_MS.
//
// What did not work (Node 24, Linux 6.18): a net.Socket on fd 1 with readStart (libuv refuses to read
// a write-only descriptor: ENOTCONN), opening /proc/self/fd/1 with O_NONBLOCK (ENXIO without a reader
// only for a named FIFO, not a shell's pipe), fs.watch on it (no event). One probe costs ~60 µs (a loop,
// an epoll instance and one epoll_pwait that returns at once: the pipe is writable, or writable and in
// error); it never blocks longer than 1 ms (a full pipe). Not a pipe, no /proc or no WebAssembly: no watch.
import { closeSync, constants, fstatSync, openSync } from "node:fs";

const POLL_MS = 250;

/** A WebAssembly module with nothing but an exported page of memory, for WASI to read and write. */
const MEMORY_ONLY = "0061736d01000000" + "0503010001" + "070a01066d656d6f72790200";

/** WASI preview1 layout: a subscription is 48 bytes, an event 32. */
const SUBS = 0;
const EVENTS = 128;
const NEVENTS = 256;
const EVENTTYPE_CLOCK = 0;
const EVENTTYPE_FD_WRITE = 2;
const CLOCK_MONOTONIC = 1;

/**
 * Calls `onGone` once when stdout is a pipe or FIFO and its last reader has closed it. Returns the
 * function that stops watching. The first look is after POLL_MS: node:wasi and the module cost ~7 ms
 * at startup (`spool run -- seq 3 | cat` 62 → 69 ms), which a short command does not pay. (main.ts
 * hides node:wasi's experimental warning.)
 */
export function watchStdoutReader(onGone: () => void): () => void {
  try {
    if (!fstatSync(1).isFIFO()) return () => {};
  } catch {
    return () => {};
  }
  let stopped = false;
  let fd: number | undefined;
  let probe: (() => boolean) | undefined;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    clearTimeout(timer);
    if (fd !== undefined) closeSync(fd);
  };
  const gone = (): void => {
    stop();
    onGone();
  };
  const look = async (): Promise<void> => {
    if (probe === undefined) {
      try {
        // A descriptor of its own: polling sets O_NONBLOCK on it, and stdout's stays as Node left it.
        fd = openSync("/proc/self/fd/1", constants.O_WRONLY | constants.O_NONBLOCK);
      } catch (err) {
        // A named FIFO refuses a new writer when it has no reader; anything else: no watch.
        if ((err as NodeJS.ErrnoException).code === "ENXIO") gone();
        else stop();
        return;
      }
      try {
        probe = await readerGoneProbe(fd);
      } catch {
        stop();
        return;
      }
      if (stopped) return;
    }
    if (probe()) gone();
    else timer = setTimeout(tick, POLL_MS).unref();
  };
  const tick = (): void => void look();
  let timer = setTimeout(tick, POLL_MS).unref();
  return stop;
}

async function readerGoneProbe(fd: number): Promise<() => boolean> {
  const { WASI } = await import("node:wasi");
  const wasi = new WASI({ version: "preview1", stdin: fd, stdout: fd, stderr: fd, returnOnExit: true });
  const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(MEMORY_ONLY, "hex")), {});
  wasi.initialize(instance);
  const memory = instance.exports.memory as WebAssembly.Memory;
  const view = new DataView(memory.buffer);
  const pollOneoff = wasi.wasiImport.poll_oneoff as (subs: number, events: number, n: number, nevents: number) => number;
  // Subscription 1: the pipe writable (WASI's fd 1 is `fd`); 2: a 1 ms clock, for a pipe that is full.
  view.setBigUint64(SUBS, 1n, true);
  view.setUint8(SUBS + 8, EVENTTYPE_FD_WRITE);
  view.setUint32(SUBS + 16, 1, true);
  view.setBigUint64(SUBS + 48, 2n, true);
  view.setUint8(SUBS + 56, EVENTTYPE_CLOCK);
  view.setUint32(SUBS + 64, CLOCK_MONOTONIC, true);
  view.setBigUint64(SUBS + 72, 1_000_000n, true);
  return () => {
    if (pollOneoff(SUBS, EVENTS, 2, NEVENTS) !== 0) return false;
    const n = view.getUint32(NEVENTS, true);
    for (let i = 0; i < n; i++) {
      const at = EVENTS + 32 * i;
      // An error on the pipe's event is EPOLLERR: no reader (uvwasi reports it as EIO).
      if (view.getBigUint64(at, true) === 1n && view.getUint16(at + 8, true) !== 0) return true;
    }
    return false;
  };
}
