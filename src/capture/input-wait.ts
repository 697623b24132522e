// Whether a command on a pseudo-terminal is waiting for input: some process of the terminal's session
// (node-pty makes the shell a session leader, so its pid is the session id) is asleep waiting to read
// its terminal. A prompt (`[y/N]`, a password, a REPL) then waits for ever, as nothing types into it unless
// someone is told. Linux only (/proc/PID/syscall, readable for one's own children); elsewhere, never.
import { readdirSync, readFileSync } from "node:fs";
import { epollWatchesTerminal } from "./epoll-terminal.js";
import { pollWatchesTerminal } from "./poll-terminal.js";
import { procPids, procStat } from "./proc-stat.js";
import { terminalFd } from "./terminal-fd.js";

/**
 * The waits /proc/PID/syscall shows with the syscall's number and arguments:
 * - read(2): its first argument is the fd;
 * - select/pselect6 with nfds 1: only fd 0 is watched (readline, as Python's REPL and `bash -i` use it);
 * - epoll_wait/epoll_pwait/epoll_pwait2: the first argument is the epoll fd, whose registered
 *   descriptors /proc/PID/fdinfo lists (Node's REPL and every libuv prompt);
 * - poll/ppoll: the first two arguments are the pollfd array and its length (gdb, more).
 * The timeout of an epoll or poll wait is not looked at. An idle Node REPL waits with one for its first
 * ten seconds or so (a timer of its own), and a program that watches its terminal while a timer runs (a dev
 * server that reads keys) is driven from the terminal all the same; handing it over as a background
 * process loses nothing, as it goes on and ends by itself. libuv drops a descriptor it stops reading
 * only when that descriptor next has input, so a Node program that read its terminal once and then
 * went quiet without exiting counts as waiting too: handed over, it is still read to its end.
 * x86-64 numbers them 0; 23, 270; 232, 281, 441; 7, 271. The generic table (arm64): 63; 72; 22, 441; 73.
 */
const SYSCALLS =
  process.arch === "x64"
    ? { read: [0], select: [23, 270], epoll: [232, 281, 441], poll: [7, 271] }
    : process.arch === "arm64"
      ? { read: [63], select: [72], epoll: [22, 441], poll: [73] }
      : undefined;

/**
 * Some thread of the process is asleep waiting for its terminal. Not only the main one: a Go program
 * (terraform's "Enter a value:", gh's prompts) reads its stdin on a thread of its own while the main
 * thread sleeps on a futex, and so does any program that reads input on a thread.
 */
function readingTerminal(pid: string, calls: NonNullable<typeof SYSCALLS>): boolean {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return tasks.some((tid) => taskReadingTerminal(pid, tid, calls));
}

function taskReadingTerminal(pid: string, tid: string, calls: NonNullable<typeof SYSCALLS>): boolean {
  let args: string[];
  try {
    // "NR ARG0 ARG1 … SP PC" while in a syscall; "running" or "-1 SP PC" otherwise
    args = readFileSync(`/proc/${pid}/task/${tid}/syscall`, "latin1").trim().split(" ");
  } catch {
    return false;
  }
  const nr = Number(args[0]);
  if (args.length < 3 || !Number.isInteger(nr)) return false;
  if (calls.read.includes(nr)) return terminalFd(pid, Number(args[1]))?.terminal === true;
  if (calls.select.includes(nr)) return Number(args[1]) === 1 && terminalFd(pid, 0)?.terminal === true;
  if (calls.epoll.includes(nr)) return epollWatchesTerminal(pid, Number(args[1]));
  if (calls.poll.includes(nr)) return /^0x[0-9a-f]+$/.test(args[1]!) && pollWatchesTerminal(pid, BigInt(args[1]!), Number(args[2]));
  return false;
}

export function waitingForTerminalInput(sessionId: number): boolean {
  if (SYSCALLS === undefined) return false;
  for (const pid of procPids() ?? []) {
    const s = procStat(pid);
    if (s?.session === sessionId && s.state === "S" && readingTerminal(pid, SYSCALLS)) return true;
  }
  return false;
}
