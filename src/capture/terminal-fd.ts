// Whether a descriptor of a process is its terminal: /proc/PID/fd/N links to a pseudo-terminal's
// slave side (/dev/pts/N) or to /dev/tty (the controlling terminal opened again, as ssh's and sudo's
// password prompts do). Linux only; a descriptor that is gone or unreadable is not a terminal.
import { readlinkSync } from "node:fs";

/** The descriptor's link target, or undefined when it cannot be read. */
export function terminalFd(pid: string, fd: number): { target: string; terminal: boolean } | undefined {
  let target: string;
  try {
    target = readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return undefined;
  }
  return { target, terminal: /^\/dev\/pts\/\d+$/.test(target) || target === "/dev/tty" };
}
