// Whether an epoll instance of a process watches its terminal for input: /proc/PID/fdinfo/<epfd> lists
// each registered descriptor (`tfd: N events: HEX … sdev: HEX`); one registered with EPOLLIN that is
// the terminal means a wait on that instance ends when someone types. This is how libuv (Node's REPL,
// readline prompts, inquirer) waits for its terminal, on a descriptor it opened again, not fd 0.
import { readFileSync } from "node:fs";
import { terminalFd } from "./terminal-fd.js";

const EPOLLIN = 0x1;
const TFD = /^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)/;
const SDEV = /\bsdev:([0-9a-f]+)/;

export function epollWatchesTerminal(pid: string, epfd: number): boolean {
  let info: string;
  try {
    info = readFileSync(`/proc/${pid}/fdinfo/${epfd}`, "latin1");
  } catch {
    return false;
  }
  // A server can watch thousands of sockets: one link per filesystem shows that its descriptors are
  // sockets, pipes or anonymous inodes (links that are no path), so the rest on it are skipped.
  const pseudo = new Set<string>();
  let terminal = false;
  for (const line of info.split("\n")) {
    const m = TFD.exec(line);
    if (m === null || (Number.parseInt(m[2]!, 16) & EPOLLIN) === 0) continue;
    const sdev = SDEV.exec(line)?.[1];
    if (sdev !== undefined && pseudo.has(sdev)) continue;
    const fd = terminalFd(pid, Number(m[1]));
    // A relay (it waits on a pseudo-terminal's master too) is not the one at a prompt.
    if (fd?.master) return false;
    terminal ||= fd?.terminal === true;
    if (fd !== undefined && sdev !== undefined && !fd.target.startsWith("/")) pseudo.add(sdev);
  }
  return terminal;
}
