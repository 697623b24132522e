// A command under a pseudo-terminal (`pty: true`): one stream for stdout and stderr, and a program
// that sees a terminal, so it colours, draws progress and line-buffers as it would for a person. The
// shell leads a new session whose controlling terminal is the pty (node-pty: setsid), so its pid is
// also its process group.
import { Buffer } from "node:buffer";
import { closeSync, constants as fsConstants, openSync } from "node:fs";
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

/**
 * The pty child starts a new session (setsid) with the terminal as its controlling tty, so its pid
 * is also its process group.
 *
 * We hold the terminal's slave side open ourselves until the child has exited. Without that, a
 * command that prints and exits at once lost the end of its output in 15 of 40 runs here
 * (`seq 1 3000`): once the last slave descriptor closes, a non-blocking read of the master can
 * report end-of-file while output is still in the kernel's buffer. Held open, the binding reads on
 * until its exit timeout (200 ms after the exit), which is the latency a pty command pays.
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
    term = loadPty().spawn(shell, ["-c", command], { name: clean["TERM"] ?? "xterm-256color", cols, rows, cwd, env: clean, encoding: null });
  } catch (e) {
    spawnError = e instanceof Error ? e : new Error(String(e));
  }
  let slave: number | undefined;
  if (term) {
    try {
      slave = openSync((term as unknown as { ptsName: string }).ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
    } catch {
      slave = undefined;
    }
  }
  let exited = false;
  let outputOpen = true;
  // Nothing is typed on the terminal's current line (its line discipline holds no partial line).
  let lineStart = true;
  term?.onData((d) => {
    if (!outputOpen) return;
    const chunk = typeof d === "string" ? Buffer.from(d, "utf8") : (d as unknown as Buffer);
    for (const l of dataListeners) l(chunk);
  });
  term?.onExit(({ exitCode, signal }) => {
    if (exited) return;
    exited = true;
    outputOpen = false;
    if (slave !== undefined) closeSync(slave);
    for (const l of closedListeners) l();
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
    pause: () => term?.pause(),
    resume: () => term?.resume(),
    closeOutput: () => {
      outputOpen = false;
    },
    outputEndsWithGroup: false,
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
