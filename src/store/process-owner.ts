// Which process writes a session, and whether it still runs. A pid means something only on the host
// that recorded it and in its PID namespace: a container has its own, and its pid 1 is init on the
// host. So an owner is recorded with its host and PID namespace, and judged:
//   same host, same namespace (or one not recorded)  → the pid decides;
//   same host, another namespace, seen from the initial one (the host, which sees every process of
//     every container) → alive while a process that is that pid inside that namespace exists;
//   anything else (another host; a reader inside a container, which cannot see the host's
//     processes) → unknown, which a lock respects.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

export interface ProcessOwner {
  readonly pid: number;
  /** Absent in records written before hosts were recorded: taken as this host. */
  readonly host?: string;
  /** `pid:[inode]` of /proc/self/ns/pid where the owner ran; absent where there is none to read. */
  readonly pidns?: string;
}

export type Liveness = "alive" | "dead" | "unknown";

function readNamespace(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

let mine: string | undefined | null = null;
/** This process's PID namespace, read once. */
function myNamespace(): string | undefined {
  if (mine === null) mine = readNamespace("/proc/self/ns/pid");
  return mine;
}

/** This process as a session's owner. */
export function currentOwner(): { pid: number; host: string; pidns?: string } {
  const pidns = myNamespace();
  return { pid: process.pid, host: hostname(), ...(pidns !== undefined ? { pidns } : {}) };
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The initial PID namespace, the host's: its inode number is fixed (PROC_PID_INIT_INO). */
const INITIAL_NAMESPACE = "pid:[4026531836]";

/**
 * Whether a process that is `pid` inside namespace `pidns` runs (not a zombie), looked for from the
 * initial namespace; undefined when a candidate's namespace could not be read.
 */
function nestedProcessAlive(pid: number, pidns: string): boolean | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${entry}/status`, "latin1");
    } catch {
      continue; // gone meanwhile
    }
    // NSpid: its pid in each namespace from this one inward; the last is its pid in its own.
    const nspid = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
    if (nspid === undefined) return undefined; // a kernel older than 4.1 says nothing of namespaces
    if (nspid.length < 2 || Number(nspid[nspid.length - 1]) !== pid || /^State:\s*Z/m.test(status)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/ns/pid`) === pidns) return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
    }
  }
  return false;
}

export function ownerLiveness(owner: ProcessOwner): Liveness {
  if (owner.host !== undefined && owner.host !== hostname()) return "unknown";
  const here = myNamespace();
  if (owner.pidns === undefined || here === undefined || owner.pidns === here) return pidAlive(owner.pid) ? "alive" : "dead";
  if (here !== INITIAL_NAMESPACE) return "unknown";
  const alive = nestedProcessAlive(owner.pid, owner.pidns);
  return alive === undefined ? "unknown" : alive ? "alive" : "dead";
}
