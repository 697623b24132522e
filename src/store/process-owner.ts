// Which process writes a session, and whether it still runs. A pid means something only on the
// machine, in the boot and in the PID namespace that recorded it: a container has its own namespace
// (and usually its own hostname), and its pid 1 is init on the host. So an owner is recorded with its
// host, the kernel's boot id (the same inside every container of one machine, new at each boot) and its
// PID namespace, and judged:
//   another boot of this host                       → dead (nothing survives a reboot);
//   another machine                                 → unknown: nothing here can tell;
//   this machine, same namespace (or one not known) → the pid decides;
//   this machine, another namespace, seen from the initial one (the host, which sees every process of
//     every container) → alive while a process that is that pid inside that namespace exists;
//   anything else (a reader inside a container, which cannot see the host's processes) → unknown.
// A lock respects "unknown".
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

export interface ProcessOwner {
  readonly pid: number;
  /** Absent in records written before hosts were recorded: taken as this host. */
  readonly host?: string;
  /** /proc/sys/kernel/random/boot_id where the owner ran; absent where there is none to read. */
  readonly boot?: string;
  /** `pid:[inode]` of /proc/self/ns/pid where the owner ran; absent where there is none to read. */
  readonly pidns?: string;
  /**
   * When the owner started, in clock ticks since boot (field 22 of /proc/PID/stat, the same seen from
   * any namespace): a pid taken again by another process, after the owner died, does not match it.
   */
  readonly start?: number;
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

let myBootId: string | undefined | null = null;
function myBoot(): string | undefined {
  if (myBootId === null) {
    try {
      myBootId = readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim() || undefined;
    } catch {
      myBootId = undefined;
    }
  }
  return myBootId;
}

/** Fields of a /proc/PID/stat (`self` or a pid): state, flags, start time; undefined when it cannot be read. */
function statOf(pid: string): { state: string; flags: number; start: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // after the command name in parentheses: state (field 3) … flags (field 9) … starttime (field 22)
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, flags: Number(fields[6]), start: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

/** PF_EXITING (include/linux/sched.h): the task is in do_exit and never returns to user space. */
const PF_EXITING = 0x4;

/**
 * A process whose main thread is exiting or has exited: a zombie (Z) waits to be reaped, and kill(pid,
 * 0) still succeeds on it, so a SIGKILLed writer whose parent had not waited for it yet (a harness that
 * kills spool and restarts it at once; this sandbox's init reaps after a second or more) held its lock.
 * Measured on a SIGKILLed Node: R for up to 5 ms (with the SIGKILL pending: killPending below), then
 * R with PF_EXITING, then Z with 2–4 threads for up to 26 ms while its other threads exit, then Z
 * alone. Every session write (JSONL lines, SQLite) is made synchronously by the main thread, so once
 * it is exiting nothing more reaches the session. (A program whose main thread alone ends with
 * pthread_exit is Z too and runs on; Node never does.)
 */
const exited = (s: { state: string; flags: number }): boolean => s.state === "Z" || s.state === "X" || (s.flags & PF_EXITING) !== 0;

/** SIGKILL's bit in the SigPnd/ShdPnd masks of /proc/PID/status (bit n-1 for signal n = 9). */
const SIGKILL_BIT = 0x100;

/**
 * Whether a /proc/PID/status shows a SIGKILL pending: the process is doomed but has not run far enough
 * to be exiting. kill(pid, SIGKILL) queues it in the shared set (ShdPnd, which stays set through Z) and,
 * being fatal, in every thread's own set (SigPnd); a SIGKILL cannot be blocked, ignored or survived
 * (a namespace's init, the one process that may refuse it, never has it queued). Measured on a
 * SIGKILLed Node (6.18 kernel, 2 cores): read at once, its main thread was still R without PF_EXITING
 * in 1 of 30 kills, and in 24 of 30 when it was stopped (SIGSTOP) first, every time with SIGKILL in
 * both masks. The main thread's file is enough: only a SIGKILL sent to one thread (tgkill, which
 * nothing here does) leaves ShdPnd empty, and the main thread clears its SigPnd only on its way
 * into do_exit, a few instructions before PF_EXITING is set. Trap: a doomed process may still finish
 * the system call it is in. A write() to a file stops at its next page once a fatal signal is pending
 * (microseconds, long before a new writer has read the log); a wait the kill cannot end (state D, an
 * unanswered network disk) can last, and a write may land when it wakes, so ownerLiveness does not
 * count a D process as dead on its pending SIGKILL. SQLite's own file locks hold until the exit anyway.
 */
function killPending(status: string): boolean {
  // 16 hex digits, signal 1 in the lowest bit: the last 8 hold signals 1–32
  for (const m of status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)) if ((Number.parseInt(m[1]!.slice(-8), 16) & SIGKILL_BIT) !== 0) return true;
  return false;
}

/** killPending for a pid; a process gone before its status is read is as good as killed. */
function pidKillPending(pid: number): boolean {
  try {
    return killPending(readFileSync(`/proc/${pid}/status`, "latin1"));
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** This process as a session's owner. */
export function currentOwner(): { pid: number; host: string; boot?: string; pidns?: string; start?: number } {
  const boot = myBoot();
  const pidns = myNamespace();
  const start = statOf("self")?.start;
  return {
    pid: process.pid,
    host: hostname(),
    ...(boot !== undefined ? { boot } : {}),
    ...(pidns !== undefined ? { pidns } : {}),
    ...(start !== undefined && Number.isFinite(start) ? { start } : {}),
  };
}

/** Where the owner ran, seen from here. */
function placeOf(owner: ProcessOwner): "this machine" | "earlier boot" | "elsewhere" {
  const sameHost = owner.host === undefined || owner.host === hostname();
  const boot = myBoot();
  if (owner.boot === undefined || boot === undefined) return sameHost ? "this machine" : "elsewhere";
  if (owner.boot === boot) return "this machine";
  return sameHost ? "earlier boot" : "elsewhere";
}

/** Words for where a live or unknown owner runs, for a message: "" when it is this host's own process. */
export function ownerPlace(owner: ProcessOwner): string {
  if (placeOf(owner) !== "this machine") return owner.host ?? "another host";
  const here = myNamespace();
  if (owner.pidns === undefined || here === undefined || owner.pidns === here) return owner.host === undefined || owner.host === hostname() ? "" : owner.host;
  return `${owner.host !== undefined && owner.host !== hostname() ? `${owner.host}, ` : ""}a container on this machine (another PID namespace)`;
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
 * initial namespace: by its start time when the owner recorded one (readable for anyone), else by its
 * namespace (readable only for one's own processes); undefined when a candidate could not be told.
 */
function nestedProcessAlive(pid: number, pidns: string, start: number | undefined): boolean | undefined {
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
    if (nspid.length < 2 || Number(nspid[nspid.length - 1]) !== pid || /^State:\s*Z/m.test(status) || (killPending(status) && !/^State:\s*D/m.test(status)))
      continue;
    if (start !== undefined) {
      if (statOf(entry)?.start === start) return true;
      continue;
    }
    try {
      if (readlinkSync(`/proc/${entry}/ns/pid`) === pidns) return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
    }
  }
  return false;
}

export function ownerLiveness(owner: ProcessOwner): Liveness {
  const place = placeOf(owner);
  if (place === "earlier boot") return "dead";
  if (place === "elsewhere") return "unknown";
  const here = myNamespace();
  if (owner.pidns === undefined || here === undefined || owner.pidns === here) {
    // The same machine by its boot id but another hostname, with no namespace to tell: nothing to go by.
    if (owner.host !== undefined && owner.host !== hostname()) return "unknown";
    if (!pidAlive(owner.pid)) return "dead";
    const now = statOf(String(owner.pid));
    if (now !== undefined && exited(now)) return "dead";
    // its pid, taken again by another process since it died
    if (now !== undefined && owner.start !== undefined && now.start !== owner.start) return "dead";
    // SIGKILLed a moment ago (a harness that kills spool and starts it again at once), not exiting yet
    return now !== undefined && now.state !== "D" && pidKillPending(owner.pid) ? "dead" : "alive";
  }
  if (here !== INITIAL_NAMESPACE) return "unknown";
  const alive = nestedProcessAlive(owner.pid, owner.pidns, owner.start);
  return alive === undefined ? "unknown" : alive ? "alive" : "dead";
}
