// Who holds a file open for writing: the processes (other than this one) with a descriptor on the
// file's device and inode whose open mode writes, read from /proc. Used on the file path (exec.ts)
// once a process outside the command's group is seen still writing the spill after the group is gone:
// on pipes such a writer's next write fails (spool closed its end), on a file it would go on for
// ever, into a file spool has removed, so its holders are found and ended. Linux only; elsewhere, and
// for processes whose descriptors this user cannot list, nothing is found.
//
// Cost (2 shared loaded cores, 105–300 processes, ~1,400 descriptors): a pass over every process
// 2.7–5.5 ms median as root (every descriptor listable), 0.65 ms as `nobody` (the others' fds are
// EACCES); over only the pids given out since the command (PidWindow), 0.27–0.32 ms either way. The
// window is taken at the spawn for 0.07 ms (/proc/stat). Readlink before stat, see holdsForWriting.
import { readFileSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";

/** O_ACCMODE bits of fdinfo's octal `flags:` line: O_WRONLY (1) or O_RDWR (2). */
const WRITE_MODES = 0o3;

/**
 * The pids given out from the command's own onwards: whatever inherited its stdout was started after
 * it, so only these are looked at. Taken at the spawn: the command's pid and the machine's count of
 * forks (/proc/stat `processes`, threads included, as they take pids too).
 */
export interface PidWindow {
  readonly from: number;
  readonly forks: number;
}

export function pidWindow(pid: number): PidWindow | undefined {
  const forks = forksSinceBoot();
  return forks === undefined ? undefined : { from: pid, forks };
}

function forksSinceBoot(): number | undefined {
  try {
    const m = /^processes (\d+)$/m.exec(readFileSync("/proc/stat", "latin1"));
    return m?.[1] === undefined ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

function readNumber(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, "latin1").trim());
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a pid can have been given out since the window opened. Pids are handed out in increasing
 * order up to pid_max and wrap around (pid_max is 32768 here, with 1.3 M forks since boot: it wraps
 * every few minutes): the new ones lie between the window's pid and the last one given out, across at
 * most one wrap — unless the machine forked pid_max times meanwhile, when any pid may be new.
 */
function newSince(window: PidWindow | undefined): (pid: number) => boolean {
  const all = (): boolean => true;
  if (window === undefined) return all;
  const last = readNumber("/proc/sys/kernel/ns_last_pid");
  const max = readNumber("/proc/sys/kernel/pid_max");
  const forks = forksSinceBoot();
  if (last === undefined || max === undefined || forks === undefined || forks - window.forks >= max - 1) return all;
  const from = window.from;
  return last >= from ? (pid) => pid > from && pid <= last : (pid) => pid > from || pid <= last;
}

/**
 * Processes other than this one that hold `path`'s inode open for writing (empty when `path` is gone),
 * among those started since `window` opened (all of them without one).
 */
export function fileWriters(path: string, window?: PidWindow): number[] {
  let target: Target;
  try {
    const real = realpathSync(path);
    const { dev, ino } = statSync(real);
    target = { dev, ino, names: [real, `${real} (deleted)`] };
  } catch {
    return [];
  }
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  const isNew = newSince(window);
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const pid = Number(entry);
    if (pid === process.pid || !Number.isInteger(pid) || !isNew(pid)) continue;
    if (holdsForWriting(pid, target)) found.push(pid);
  }
  return found;
}

interface Target {
  readonly dev: number;
  readonly ino: number;
  /** What /proc/PID/fd/N reads as for the file, linked or removed. */
  readonly names: readonly string[];
}

function holdsForWriting(pid: number, target: Target): boolean {
  let fds: string[];
  try {
    // Another user's descriptors: EACCES (unless root); a process that ended meanwhile: ENOENT.
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      // The link's text first: a stat follows it into the descriptor's file system, which for a
      // hung network or FUSE mount can block; the name costs no file system call.
      if (!target.names.includes(readlinkSync(`/proc/${pid}/fd/${fd}`))) continue;
      const s = statSync(`/proc/${pid}/fd/${fd}`);
      if (s.ino !== target.ino || s.dev !== target.dev) continue;
      const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, "latin1"));
      if (flags?.[1] !== undefined && (Number.parseInt(flags[1], 8) & WRITE_MODES) !== 0) return true;
    } catch {
      // closed or exited while we looked
    }
  }
  return false;
}

const POLL_MS = 25;
/** How long a SIGKILLed process may take to be gone (it was ~1 ms here; a stopped or D-state one longer). */
const KILLED_GONE_MS = 1000;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already, or not ours to signal
  }
}

/**
 * Ends the processes writing `path`, the way a closed pipe ends its writer: SIGPIPE (a writer's next
 * write to a pipe spool closed raises it). A file takes the writes of a writer that ignores SIGPIPE
 * (Python does) and would grow for ever, so what still holds it for writing after `graceMs` gets
 * SIGKILL. Resolves with the processes found at first.
 */
export async function stopFileWriters(path: string, graceMs: number, window?: PidWindow): Promise<number[]> {
  const writers = fileWriters(path, window);
  if (writers.length === 0) return writers;
  for (const pid of writers) signal(pid, "SIGPIPE");
  const ends = Date.now() + graceMs;
  // kill(pid, 0) is cheap; the scan is not (see the header): it runs once more, for what is left
  // (and for children a writer forked meanwhile, which inherited its descriptor).
  while (writers.some(running) && Date.now() < ends) await pause(POLL_MS);
  const survivors = fileWriters(path, window);
  for (const pid of survivors) signal(pid, "SIGKILL");
  // SIGKILL is acted on asynchronously: the call ends once they have let go of the file.
  const killEnds = Date.now() + KILLED_GONE_MS;
  while (survivors.some(running) && Date.now() < killEnds) await pause(POLL_MS);
  return writers;
}

/** A zombie has closed its descriptors: it counts as gone. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
