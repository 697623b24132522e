// Copies a pipe into a file, appending: on the file path the command's stderr is a real pipe
// (file-child.ts), and what it writes there is appended to the spill file, where the file's reader
// (file-tail.ts) sees it like the command's own writes to stdout. So the capture, the spill limits,
// the backlog and the byte-identical spill all come from the one file.
//
// One chunk at a time: the pipe is not read while an append is in flight, so a slow disk holds the
// command back on its full pipe (64 KiB) rather than spool buffering without bound. The appends are
// asynchronous, so a slow disk never stalls spool's event loop; synchronous ones were not clearly
// faster (100 MiB on stderr: 0.5–0.7 s either way on two shared cores, against 0.4 s when stderr was
// the file itself).
// An append that fails (ENOSPC) is reported, and the pipe is then read into nothing, so the command
// never blocks on it while it is being killed.
import { close, write } from "node:fs";
import { readDescriptor } from "./pipe-reader.js";

/** A pipe holds 64 KiB unless its writer grows it; a read takes at most this. */
const READ_BYTES = 64 * 1024;
/**
 * At the end, what the pipe holds is read and no more: a process that left the group (`setsid`) may
 * keep writing to it for ever. A pipe holds 1 MiB at most unless its writer is privileged.
 */
const FINAL_BYTES = 1024 * 1024;

export interface AppendedPipe {
  /**
   * The writers are gone (or should be): reads what the pipe holds now — to its end, or until it is
   * found empty — appends it, closes both descriptors and resolves.
   */
  finish(): Promise<void>;
}

/** `readFd` (a pipe's read end) and `fileFd` (open with O_APPEND) are the copier's to close. */
export function appendPipe(readFd: number, fileFd: number, onError: (error: Error) => void): AppendedPipe {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  let failed = false;
  let appending = false;
  let eof = false;
  let finishing = false;
  let finalBytes = 0;
  /** Bumped by every chunk and every look for an empty pipe: a look that sees it changed is stale. */
  let turn = 0;
  let done = false;
  let settle!: () => void;
  const finished = new Promise<void>((resolve) => (settle = resolve));

  const reader = readDescriptor(readFd, buffer, (chunk) => {
    turn++;
    // Read into nothing once an append has failed: the run is being failed and the group killed.
    if (failed) return;
    if (finishing) finalBytes += chunk.length;
    // The chunk is a view of the reader's buffer: no read may overwrite it before the append is done.
    reader.pause();
    appending = true;
    append(chunk, 0);
  });
  reader.onClose(() => {
    eof = true;
    if (finishing && !appending) end();
  });

  function append(chunk: Buffer, from: number): void {
    write(fileFd, chunk, from, chunk.length - from, null, (error, n) => {
      if (error) {
        failed = true;
        onError(error);
      } else if (from + n < chunk.length) {
        return append(chunk, from + n);
      }
      appending = false;
      reader.resume();
      if (finishing) settleWhenDone();
    });
  }

  function settleWhenDone(): void {
    if (eof || failed || finalBytes >= FINAL_BYTES) return end();
    // Readable data reaches the reader in the event loop's poll phase: two turns of the loop (two
    // setImmediate) with no chunk mean the pipe had none when it was last polled.
    const look = ++turn;
    setImmediate(() =>
      setImmediate(() => {
        if (look === turn && !appending) end();
      }),
    );
  }

  function end(): void {
    if (done) return;
    done = true;
    reader.destroy();
    close(fileFd, () => settle());
  }

  return {
    finish: () => {
      if (!finishing) {
        finishing = true;
        if (!appending) settleWhenDone();
      }
      return finished;
    },
  };
}
