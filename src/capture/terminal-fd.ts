// Whether a descriptor of a process is its terminal: /proc/PID/fd/N links to a pseudo-terminal's
// slave side (/dev/pts/N) or to /dev/tty (the controlling terminal opened again, as ssh's and sudo's
// password prompts do). Linux only; a descriptor that is gone or unreadable is not a terminal.
import { readlinkSync } from "node:fs";

/**
 * The descriptor's link target, or undefined when it cannot be read. `master`: the master side of a
 * pseudo-terminal, which a terminal relay (`script`, `tmux`, `screen`, `expect`) waits on beside its
 * own terminal: the program it runs is what may prompt, in a session of its own spool cannot see.
 */
export function terminalFd(pid: string, fd: number): { target: string; terminal: boolean; master: boolean } | undefined {
  let target: string;
  try {
    target = readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return undefined;
  }
  return { target, terminal: /^\/dev\/pts\/\d+$/.test(target) || target === "/dev/tty", master: target === "/dev/ptmx" || target === "/dev/pts/ptmx" };
}
