// Whether a command on a pseudo-terminal is waiting for input: some process of the terminal's session
// (node-pty makes the shell a session leader, so its pid is the session id) is asleep waiting to read
// its terminal. A prompt (`[y/N]`, a password, a REPL) then waits for ever, as nothing types into it unless
// someone is told. Linux only (/proc/PID/syscall, readable for one's own children); elsewhere, never.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Syscalls that wait on one descriptor whose number /proc/PID/syscall shows: read(2) (its first
 * argument is the fd) and select/pselect6 with nfds 1 (only fd 0 is watched: readline, as Python's
 * REPL and `bash -i` use it). x86-64 numbers them 0, 23, 270; the generic table (arm64) 63 and 72.
 * A wait in poll or epoll (Node's REPL) names no descriptor here and is not recognised.
 */
const SYSCALLS = process.arch === "x64" ? { read: [0], select: [23, 270] } : process.arch === "arm64" ? { read: [63], select: [72] } : undefined;

/** The `session` field of /proc/PID/stat and its state, or undefined when it is gone. */
function sessionOf(pid: string): { state: string; session: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // after the command name in parentheses: state ppid pgrp session …
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0]!, session: Number(fields[3]) };
}

function readingTerminal(pid: string, calls: { read: number[]; select: number[] }): boolean {
  try {
    const [nr, arg0] = readFileSync(`/proc/${pid}/syscall`, "latin1")
      .split(" ")
      .map((f) => Number.parseInt(f, f.startsWith("0x") ? 16 : 10));
    const fd = calls.read.includes(nr!) ? arg0! : calls.select.includes(nr!) && arg0 === 1 ? 0 : -1;
    if (fd < 0) return false;
    // its terminal as stdin, or opened again as /dev/tty (ssh's and sudo's password prompts)
    const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    return target.startsWith("/dev/pts/") || target === "/dev/tty";
  } catch {
    return false;
  }
}

export function waitingForTerminalInput(sessionId: number): boolean {
  if (process.platform !== "linux" || SYSCALLS === undefined) return false;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const s = sessionOf(entry);
    if (s?.session === sessionId && s.state === "S" && readingTerminal(entry, SYSCALLS)) return true;
  }
  return false;
}
