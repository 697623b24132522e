// Whether a process asleep in poll/ppoll watches its terminal for input (gdb, more): the pollfd array
// is in its memory, read through /proc/PID/mem. That needs ptrace access, which a process has to its
// own descendants (also under Yama's default ptrace_scope 1, as spool spawns the command); where it is
// refused (ptrace_scope 2 or 3, a setuid program) the wait is not recognised.
import { closeSync, openSync, readSync } from "node:fs";
import { terminalFd } from "./terminal-fd.js";

const POLLIN = 0x1;
/** struct pollfd: int fd; short events; short revents (little-endian on x64 and arm64). */
const POLLFD_BYTES = 8;
/** Only the first entries are looked at: a prompt watches a few descriptors, not hundreds. */
const MAX_ENTRIES = 64;

export function pollWatchesTerminal(pid: string, address: bigint, nfds: number): boolean {
  if (!(nfds > 0) || address === 0n) return false;
  const entries = Buffer.alloc(Math.min(nfds, MAX_ENTRIES) * POLLFD_BYTES);
  let mem: number | undefined;
  try {
    mem = openSync(`/proc/${pid}/mem`, "r");
    if (readSync(mem, entries, 0, entries.length, address) !== entries.length) return false;
  } catch {
    return false;
  } finally {
    if (mem !== undefined) closeSync(mem);
  }
  let terminal = false;
  for (let at = 0; at < entries.length; at += POLLFD_BYTES) {
    const fd = entries.readInt32LE(at);
    if (fd < 0 || (entries.readInt16LE(at + 4) & POLLIN) === 0) continue;
    const t = terminalFd(pid, fd);
    // A relay (it waits on a pseudo-terminal's master too) is not the one at a prompt.
    if (t?.master) return false;
    terminal ||= t?.terminal === true;
  }
  return terminal;
}
