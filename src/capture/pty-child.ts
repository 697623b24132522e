// A command under a pseudo-terminal (`pty: true`): one stream for stdout and stderr, and a program
// that sees a terminal, so it colours, draws progress and line-buffers as it would for a person. The
// shell leads a new session whose controlling terminal is the pty (node-pty: setsid), so its pid is
// also its process group.
import { Buffer } from "node:buffer";
import { closeSync, constants as fsConstants, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import type { IPty } from "@lydell/node-pty";
import type { Child } from "./child.js";

type PtyModule = typeof import("@lydell/node-pty");
let ptyModule: PtyModule | undefined;
function loadPty(): PtyModule {
  // Loaded on first use: the native module costs nothing to commands that do not ask for a terminal.
  ptyModule ??= createRequire(import.meta.url)("@lydell/node-pty") as PtyModule;
  return ptyModule;
}

const signalName = (n: number): NodeJS.Signals | null =>
  n > 0 ? ((Object.entries(constants.signals).find(([, v]) => v === n)?.[0] as NodeJS.Signals | undefined) ?? null) : null;

/** Typed last, these leave the terminal's line empty: Enter (\n, or \r as a terminal sends it), Ctrl-C, Ctrl-D, Ctrl-U. */
const LINE_START_AFTER = /[\n\r\x03\x04\x15]$/;

/** node-pty's UnixTerminal beyond its typed interface (@lydell/node-pty 1.1.0, unixTerminal.js). */
interface UnixTerminal {
  readonly ptsName: string;
  /** The master side, non-blocking. */
  readonly fd: number;
  /** True: the exit is reported when the child exits (see ptyChild). */
  _emittedClose: boolean;
  /** The master as node-pty reads it (a tty.ReadStream). */
  readonly _socket: { destroy(): void; readonly destroyed: boolean; readonly readableLength: number };
}

/**
 * The shell runs with SIGHUP ignored: /bin/sh ignores it and execs the shell, whose pid, argv, environment
 * and exit status are the command's as before (`trap -p` in it shows the ignored HUP). ~0.5 ms more per
 * command (spawn to exit of `true`: median 2.7 -> 3.2 ms over 60 runs). A shell that cannot be run is
 * now reported by that sh (`exec: …: not found`, 127) instead of node-pty's child (`execvp(3) failed`, 1).
 *
 * Why. The shell leads the terminal's session, and when a session leader exits the kernel sends SIGHUP
 * to the terminal's foreground process group — the group that also holds the command's `&` jobs, as
 * `sh -c` has no job control. They died at once and silently: `(sleep 0.5; echo late) &` never printed
 * "late", and nothing said a `sleep 30 &` had been ended, where on pipes both get spool's exit grace
 * (exec.ts: output captured for 500 ms, then SIGTERM, SIGKILL and `endedLeftovers`). A pseudo-terminal,
 * unlike a serial line, is not hung up by that exit (Linux: the leader's exit only signals the group),
 * so a job that ignores the SIGHUP writes on to it while spool holds both sides open: "late" arrives
 * 500 ms after the exit. (macOS revokes the terminal at that exit, by its kernel's source; not measured
 * here: the jobs would live and be ended with the note, their late output lost.)
 *
 * Alternatives weighed. Keeping the terminal open alone changes nothing: the jobs are dead before
 * anything reads it (measured: no "late"). A session leader other than the shell, waiting for the
 * group, would have to tell spool the shell's exit status and signal while it stays alive itself, which
 * node-pty has no channel for: a native helper of our own. The cost of this one: a command cannot `trap`
 * SIGHUP (ignored on entry, POSIX), and a program in it that sets no handler of its own ignores
 * `kill -HUP`. Ctrl-C, Ctrl-D, prompts and exit statuses are untouched (SIGINT, the line discipline).
 * When spool dies the terminal's hangup no longer ends the command; the orphan guard (process-group.ts)
 * SIGKILLs its group then, as on pipes.
 */
const IGNORING_HUP = `trap '' HUP; exec "$0" -c "$1"`;

/** The most a close reads of what the terminal still holds (its buffers take ~64 KiB). */
const DRAIN_BYTES = 1024 * 1024;

/**
 * The pty child starts a new session (setsid) with the terminal as its controlling tty, so its pid
 * is also its process group.
 *
 * The exit is reported when the shell exits, and the terminal is read on until the owner closes it
 * (closeOutput: exec.ts does so once the group is gone and the output has been quiet for 100 ms, as on
 * pipes; at once when the group is gone at the exit and nothing came in the 100 ms before it), so what
 * the command left running writes through its grace. node-pty by itself reported the
 * exit only when the master reported end of file or 200 ms later, and closed the master then.
 *
 * We hold the terminal's slave side open ourselves until the output is closed. Without that, a
 * command that prints and exits at once lost the end of its output in 15 of 40 runs here
 * (`seq 1 3000`): once the last slave descriptor closes, a non-blocking read of the master can
 * report end-of-file while output is still in the kernel's buffer.
 */
export function ptyChild(shell: string, command: string, cwd: string, env: NodeJS.ProcessEnv, cols: number, rows: number): Child {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  const dataListeners: ((chunk: Buffer) => void)[] = [];
  const closedListeners: (() => void)[] = [];
  const exitListeners: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
  const errorListeners: ((e: Error) => void)[] = [];
  let term: IPty | undefined;
  let spawnError: Error | undefined;
  try {
    // encoding null: the raw bytes, so the spill is byte-identical and decoding stays ours.
    term = loadPty().spawn("/bin/sh", ["-c", IGNORING_HUP, shell, command], {
      name: clean["TERM"] ?? "xterm-256color",
      cols,
      rows,
      cwd,
      env: clean,
      encoding: null,
    });
  } catch (e) {
    spawnError = e instanceof Error ? e : new Error(String(e));
  }
  // Only where node-pty is the version these internals were read from (package.json pins it): any
  // other keeps node-pty's own close — the exit 200 ms late, the terminal closed then, and what the
  // command left running ended by the hangup — rather than failing every pty command.
  const held = term as unknown as Partial<UnixTerminal> | undefined;
  const unix =
    held !== undefined && typeof held._emittedClose === "boolean" && typeof held.fd === "number" && typeof held._socket?.destroy === "function"
      ? (held as UnixTerminal)
      : undefined;
  let slave: number | undefined;
  // node-pty waits for the master's end of file (never, while the slave is held) or 200 ms before it
  // reports the exit, and then destroys the master; this flag, which it sets once the master has
  // closed, makes it report the exit at once and leave the master to closeOutput.
  if (unix) unix._emittedClose = true;
  if (term) {
    try {
      slave = openSync((term as unknown as UnixTerminal).ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
    } catch {
      slave = undefined;
    }
  }
  const closeSlave = (): void => {
    if (slave !== undefined) closeSync(slave);
    slave = undefined;
  };
  let exited = false;
  let outputOpen = true;
  let paused = false;
  // Nothing is typed on the terminal's current line (its line discipline holds no partial line).
  let lineStart = true;
  const deliver = (chunk: Buffer): void => {
    if (!outputOpen) return;
    for (const l of dataListeners) l(chunk);
  };
  term?.onData((d) => deliver(typeof d === "string" ? Buffer.from(d, "utf8") : (d as unknown as Buffer)));
  term?.onExit(({ exitCode, signal }) => {
    if (exited) return;
    exited = true;
    if (!unix) {
      // node-pty's own close (see `unix`): the output ends with the exit.
      outputOpen = false;
      closeSlave();
      for (const l of closedListeners) l();
    }
    const sig = signalName(signal ?? 0);
    for (const l of exitListeners) l(sig ? null : exitCode, sig);
  });
  if (spawnError) queueMicrotask(() => errorListeners.forEach((l) => l(spawnError!)));
  return {
    pid: term?.pid,
    onData: (l) => void dataListeners.push(l),
    onOutputClosed: (l) => void closedListeners.push(l),
    onExit: (l) => void exitListeners.push(l),
    onSpawnError: (l) => void errorListeners.push(l),
    pause: () => {
      paused = true;
      term?.pause();
    },
    resume: () => {
      paused = false;
      term?.resume();
    },
    closeOutput: () => {
      if (!outputOpen || !unix) return;
      // Only in order: not past what the stream still holds for a paused reader (dropped, as on pipes);
      // and never from a descriptor the stream has closed (its number may be another file's by now).
      if (!paused && unix._socket.readableLength === 0 && !unix._socket.destroyed) drain(unix.fd, deliver);
      outputOpen = false;
      unix._socket.destroy();
      closeSlave();
      for (const l of closedListeners) l();
    },
    outputEndsWithGroup: false,
    // Only with the slave held and closeOutput draining (unix); node-pty's own close ends it at the exit.
    ...(unix ? { heldOpen: true as const } : {}),
    write: (data, end) => {
      if (!term || exited) return false;
      if (data !== "") lineStart = LINE_START_AFTER.test(data);
      // A terminal's end of input is Ctrl-D at the start of a line: after text without its newline,
      // the first one hands that text to the reader and the second ends the input. Where the line
      // starts is judged over every write: "abc" then an empty end needs both, and a line ended with
      // Enter as "\r" needs one (a second is an end of input for the next program that reads).
      term.write(end ? `${data}${lineStart ? "\x04" : "\x04\x04"}` : data);
      if (end) lineStart = true;
      return true;
    },
  };
}

/**
 * Reads what the terminal holds now, before it is closed: what the event loop has not read yet. The
 * exit can be reported before the last reads, and after a busy spell of the loop its timers run
 * before its reads. Closed right at the exit, `seq 1 3000` lost its end in 49 of 100 runs without
 * this and in none with it; with a timer blocking the loop for 150 ms every 100 ms (`seq 1 20000`),
 * 59 of 60 runs lost it without this (and with node-pty's own close 200 ms after the exit), none
 * with it. The master is non-blocking: a read says EAGAIN once nothing the slave wrote is left.
 */
function drain(fd: number, deliver: (chunk: Buffer) => void): void {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  for (let total = 0; total < DRAIN_BYTES; ) {
    let n: number;
    try {
      n = readSync(fd, buffer, 0, buffer.length, null);
    } catch {
      return;
    }
    if (n <= 0) return;
    total += n;
    deliver(buffer.subarray(0, n));
  }
}
