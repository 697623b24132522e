// Reads a child process's output pipe into one fixed, reused buffer instead of a fresh Buffer per read.
//
// Node's own stream allocates a new 64 KiB buffer for every read and frees it when the GC collects
// the chunk. Over a 1 GiB capture glibc's arenas kept those freed blocks: peak RSS grew from 83 MB
// (100 MiB) to 117 MB (1 GiB) although the V8 heap stayed ~17 MB. A bare reader measured 102–126 MB
// that way and a flat 49–55 MB with a reused buffer, at half the CPU (bench:capture).
//
// net.Socket's documented `onread: { buffer, callback }` does this, but child_process builds its
// sockets itself. The pipe's handle is adopted instead: a new net.Socket over the same handle (the
// `handle` option child_process itself uses to build that socket) becomes its owner, synchronously
// right after spawn, before any read can have happened. The old socket is taken out of `child.stdio`,
// so child_process's exit handling never restarts reads behind our back (it resumes every stdio
// stream nobody listens to). Where the handle is not there to adopt (another runtime, a future Node),
// the stream's own 'data' events are used: the chunks are then fresh, which the caller never relies on.
// A real pipe spool opened itself (real-pipe.ts) is read the same way through its descriptor.
import type { ChildProcess } from "node:child_process";
import { Socket } from "node:net";
import type { Readable } from "node:stream";

/** What the caller needs of a pipe: the same shape whether adopted or not. */
export interface PipeReader {
  pause(): void;
  resume(): void;
  destroy(): void;
  onClose(listener: () => void): void;
}

interface AdoptableHandle {
  readStart(): number;
  useUserBuffer(buffer: Uint8Array): void;
}

function adoptable(stream: Readable): AdoptableHandle | undefined {
  const handle = (stream as unknown as { _handle?: Partial<AdoptableHandle> | null })._handle;
  return handle && typeof handle.readStart === "function" && typeof handle.useUserBuffer === "function" ? (handle as AdoptableHandle) : undefined;
}

/**
 * Reads `child.stdio[index]` to its end. `onChunk` gets a view of `buffer` that is valid only during
 * the call (the next read overwrites it): copy what must outlive it. Several pipes may share one
 * buffer, as each read is delivered before the next one is made.
 */
export function readPipe(child: ChildProcess, index: 1 | 2, buffer: Buffer, onChunk: (chunk: Buffer) => void): PipeReader {
  const stream = child.stdio?.[index] as Readable | null | undefined;
  // A spawn that failed for lack of descriptors (EMFILE) sets up no pipes; its error is reported.
  if (!stream) return { pause: () => {}, resume: () => {}, destroy: () => {}, onClose: () => {} };
  const handle = adoptable(stream);
  let reader: Readable;
  if (handle) {
    const onread = userBuffer(buffer, onChunk);
    // `handle` is typed for bound sockets only; child_process passes its pipes the same way.
    reader = new Socket({ handle, readable: true, writable: false, onread } as unknown as ConstructorParameters<typeof Socket>[0]);
    (child.stdio as unknown as (Readable | null)[])[index] = null;
    // Flowing, so the end of the pipe is reported ('end', then 'close') with no 'data' listener.
    reader.resume();
  } else {
    reader = stream;
    reader.on("data", onChunk);
  }
  return wrap(reader);
}

/** Reads the descriptor `fd` (a pipe's read end, now the reader's to close) like readPipe does. */
export function readDescriptor(fd: number, buffer: Buffer, onChunk: (chunk: Buffer) => void): PipeReader {
  const reader = new Socket({ fd, readable: true, writable: false, onread: userBuffer(buffer, onChunk) });
  reader.resume();
  return wrap(reader);
}

function userBuffer(buffer: Buffer, onChunk: (chunk: Buffer) => void): { buffer: Buffer; callback: (n: number) => boolean } {
  return {
    buffer,
    callback: (n) => {
      onChunk(buffer.subarray(0, n));
      return true;
    },
  };
}

function wrap(reader: Readable): PipeReader {
  // A read error (EIO, ECONNRESET on a socketpair) ends the output like an end of file does.
  reader.on("error", () => {});
  return {
    pause: () => void reader.pause(),
    resume: () => void reader.resume(),
    destroy: () => void reader.destroy(),
    onClose: (l) => void reader.on("close", l),
  };
}
