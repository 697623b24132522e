// One shape for the ways a command runs: on pipes (on Linux one real pipe for stdout and stderr, so
// they interleave in the true order of the writes, see pipeChild; stdin closed unless asked for),
// writing its stdout into its spill file with stderr on a pipe that spool appends there
// (file-child.ts), or under a pseudo-terminal (pty-child.ts; one stream; the program sees a
// terminal, so it colours, draws progress and line-buffers as it would for a person). Either way the
// command leads its own session and process group, so the group can be signalled whole, and the
// session's other groups (job control: `set -m`) found and signalled at its end (process-group.ts).
import { Buffer } from "node:buffer";
import type { ChildProcess } from "node:child_process";
import { closeSync } from "node:fs";
import { Socket } from "node:net";
import type { Writable } from "node:stream";
import { readDescriptor, readPipe } from "./pipe-reader.js";
import { BUSY_BYTES, growPipe } from "./pipe-size.js";
import { spawnInGroup } from "./process-group.js";
import { realPipe } from "./real-pipe.js";

export interface Child {
  /** Undefined when the spawn failed (the error arrives through onSpawnError). */
  readonly pid: number | undefined;
  /** The chunk is only valid during the call (pipes reuse one read buffer): copy what must outlive it. */
  onData(listener: (chunk: Buffer) => void): void;
  /** Every output stream has closed. */
  onOutputClosed(listener: () => void): void;
  onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  onSpawnError(listener: (error: Error) => void): void;
  pause(): void;
  resume(): void;
  /**
   * Ends the output. Pipes stop reading at once (a backgrounded grandchild may hold them open
   * forever); the terminal first reads what it holds now; a file the command writes is read to its
   * current end first, once what its stderr pipe holds now is copied into it. onOutputClosed follows
   * either way.
   */
  closeOutput(): void;
  /**
   * Pipes end by themselves when their writers close them, the terminal when its owner closes it
   * after the exit grace (exec.ts: spool holds its slave side, see pty-child.ts); a file never does,
   * so the owner calls closeOutput once the process group is gone.
   */
  readonly outputEndsWithGroup: boolean;
  /**
   * Only the terminal: spool holds it open, so it never ends by itself, and closeOutput reads all it
   * holds first. The exit grace closes it as soon as it can tell nothing is left to write, rather than
   * at its first look.
   */
  readonly heldOpen?: true;
  /** Only a file's reader can fall behind its writer: true when it has, false once it has caught up. */
  onBacklog?(listener: (behind: boolean) => void): void;
  /** Only a file can be cut under its reader (see file-tail.ts): what was cut is gone from it. */
  onTruncated?(listener: () => void): void;
  /**
   * Only the file path copies output itself (its stderr pipe into the file, append-pipe.ts): an
   * append failed (ENOSPC), and what it held is missing from the file.
   */
  onCopyFailed?(listener: (error: Error) => void): void;
  /**
   * Only a file: the size its reader has reached (once the output is closed, the file's size at
   * closeOutput). What the file holds past it was written after the group was gone (exec.ts).
   */
  readTo?(): number;
  /** False when the command has no open input. `end`: close the input after `data` (end of file). */
  write(data: string, end?: boolean): boolean;
}

/** The command's stdin as `Child.write` uses it: false once it is closed. */
export function inputWriter(input: Writable | null | undefined): (data: string, end?: boolean) => boolean {
  input?.on("error", () => {});
  return (data, end) => {
    if (!input || input.destroyed || !input.writable) return false;
    if (end) {
      input.end(data);
      return true;
    }
    input.write(data);
    // A pipe whose reader has closed it fails the write at once (EPIPE), and the stream stops being
    // writable before write() returns; checking only before would call the first write a success.
    return !input.destroyed && input.writable;
  };
}

/** spool's end (`fd`) of a real pipe that is the command's stdin, as a stream to write to. */
export function pipeInput(child: ChildProcess, fd: number): Writable {
  const input = new Socket({ fd, readable: false, writable: true });
  // A spawn that failed leaves nothing to write to.
  child.on("error", () => void (child.pid === undefined && input.destroy()));
  // Closed when the command exits, as Node closes a child's own stdin pipe: nothing writes to it then.
  child.on("exit", () => void input.destroy());
  return input;
}

/**
 * The bytes of one read: stdout and stderr are read into one buffer of this size, reused for every
 * read (see pipe-reader.ts). Reads rarely fill it: a pipe holds 64 KiB (1 MiB once busy, see
 * pipe-size.ts), a socketpair ~208 KiB; on
 * socketpairs the average read on 1 GiB of output measured ~48 KiB with a 64 KiB buffer, ~120 KiB
 * with 256 KiB.
 */
export const READ_BUFFER_BYTES = 256 * 1024;

/**
 * On Linux the command gets real pipes (real-pipe.ts): one for stdout and stderr both, so they
 * interleave in the true order of its writes, and one for stdin when asked for. Elsewhere, or when
 * no real pipe can be made, Node's stdio pipes: socketpairs, stdout and stderr each its own, read in
 * arrival order, and a reopen of /dev/stdout, /dev/stderr or /dev/stdin fails (ENXIO).
 */
/** `stdin`: true for a pipe from spool (Child.write), a descriptor the command reads itself, or false for none. */
export function pipeChild(shell: string, command: string, cwd: string, env: NodeJS.ProcessEnv, stdin: boolean | number): Child {
  const output = realPipe();
  const inputPipe = stdin === true && output ? realPipe() : undefined;
  let child: ReturnType<typeof spawnInGroup>;
  try {
    child = spawnInGroup(shell, command, cwd, env, inputPipe?.read ?? stdin, output?.write);
  } catch (e) {
    closeAll(output?.read, inputPipe?.write);
    throw e;
  } finally {
    // The command's ends are its own now: spool keeping one would hold the output open (or the input
    // readable) after the command has let go of it.
    closeAll(output?.write, inputPipe?.read);
  }
  const input = inputPipe ? pipeInput(child, inputPipe.write) : child.stdin;
  const dataListeners: ((chunk: Buffer) => void)[] = [];
  const closed: (() => void)[] = [];
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  // Bytes the real pipe has carried, until it is grown (pipe-size.ts).
  let carried = output ? 0 : BUSY_BYTES;
  const deliver = (chunk: Buffer): void => {
    if (carried < BUSY_BYTES && (carried += chunk.length) >= BUSY_BYTES) growPipe(output!.read);
    for (const l of dataListeners) l(chunk);
  };
  const pipes = output ? [readDescriptor(output.read, buffer, deliver)] : ([1, 2] as const).map((fd) => readPipe(child, fd, buffer, deliver));
  let open = pipes.length;
  for (const pipe of pipes) {
    pipe.onClose(() => {
      if (--open === 0) for (const l of closed) l();
    });
  }
  return {
    pid: child.pid,
    onData: (l) => void dataListeners.push(l),
    onOutputClosed: (l) => void closed.push(l),
    onExit: (l) => void child.on("exit", l),
    onSpawnError: (l) => void child.on("error", l),
    pause: () => {
      for (const pipe of pipes) pipe.pause();
    },
    resume: () => {
      for (const pipe of pipes) pipe.resume();
    },
    closeOutput: () => {
      for (const pipe of pipes) pipe.destroy();
      input?.destroy();
    },
    outputEndsWithGroup: false,
    write: inputWriter(input),
  };
}

/** Closes the descriptors given, skipping the undefined ones. */
export function closeAll(...fds: (number | undefined)[]): void {
  for (const fd of fds) if (fd !== undefined) closeSync(fd);
}
