// /proc/PID/stat on Linux: a process's state, process group and session, and the processes of the
// machine listed from /proc. What the prompt check (input-wait.ts) and the end of a command's group
// (process-group.ts) look at; elsewhere there is no /proc and both say so with undefined.
import { closeSync, openSync, readdirSync, readSync } from "node:fs";

// /proc/PID/stat is a few hundred bytes (the command name in it is at most 64). Read into one buffer
// with open/read/close: a check reads it for every process on the machine, and readFileSync's fstat,
// allocation and decode made that ~10 µs a process against ~3.6 (0.55 → 0.25 ms over 70 processes).
const STAT = Buffer.allocUnsafe(1024);

export interface ProcStat {
  /** R, S, D, Z (a zombie: exited, not yet reaped), T … */
  readonly state: string;
  readonly pgrp: number;
  readonly session: number;
}

/** The stat of process `pid`, or undefined when it is gone (or there is no /proc). */
export function procStat(pid: string): ProcStat | undefined {
  let fd: number | undefined;
  let length: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, "r");
    length = readSync(fd, STAT, 0, STAT.length, 0);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const stat = STAT.toString("latin1", 0, length);
  // after the command name in parentheses: state ppid pgrp session …
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 4);
  return { state: fields[0]!, pgrp: Number(fields[2]), session: Number(fields[3]) };
}

/** The pids under /proc, or undefined where it cannot be listed (not Linux). */
export function procPids(): string[] | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    return readdirSync("/proc").filter((entry) => {
      const c = entry.charCodeAt(0);
      return c >= 48 && c <= 57;
    });
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid` has a thread besides its main one. A process whose main thread has ended
 * while others run (pthread_exit; ps shows it as Zl) has the main thread's state, Z, in its stat until
 * the last one ends: it is no zombie. Its task list holds the leader and the live threads.
 */
export function procHasOtherThreads(pid: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}
