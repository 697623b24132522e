// The command runs as the leader of a new process group (detached: setsid), so a timeout or abort can
// reach everything it started — `sh -c 'sleep 60 & wait'` leaves no orphan sleeping on.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { monotonicMs } from "./clock.js";
import { procHasOtherThreads, procPids, procStat } from "./proc-stat.js";

export type GroupChild = ChildProcessByStdio<Writable | null, Readable | null, Readable | null>;

let defaultShell: string | undefined;
export function resolveShell(shell?: string): string {
  if (shell !== undefined) return shell;
  defaultShell ??= existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";
  return defaultShell;
}

/**
 * `stdin`: true for a pipe from spool, or a descriptor to read from. `output`: a descriptor the
 * command's stdout goes to, and its stderr too unless `errors` is another one, instead of two pipes.
 */
export function spawnInGroup(
  shell: string,
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  stdin: boolean | number = false,
  output?: number,
  errors: number | undefined = output,
): GroupChild {
  // stdin is closed unless the caller will write to it, so nothing can hang waiting on a prompt.
  const input = typeof stdin === "number" ? stdin : stdin ? "pipe" : "ignore";
  return spawn(shell, ["-c", command], { cwd, env, detached: true, stdio: [input, output ?? "pipe", errors ?? "pipe"] }) as GroupChild;
}

/** Signals the whole group; false when the group is already gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export const groupAlive = (pid: number): boolean => signalGroup(pid, 0 as unknown as NodeJS.Signals);

/**
 * Something in the group still runs: on Linux, a member that is not a zombie. An orphan's zombie stays
 * in the group until init reaps it — ~1 s on a Firecracker VM measured here (1.3-1.8 s), for ever under
 * a PID 1 that never reaps (a container started without --init) — and has nothing left to end. One
 * whose main thread alone has ended (state Z too) still runs its other threads: it counts.
 *
 * Listing /proc costs 6-8 ms with ~1,000 processes, and the end of a command asks every 25 ms for up
 * to half a second. So the members a listing found are kept, and while one of them still runs the
 * answer is yes after a stat of each (a pid reused inside the group is a member too). A no always
 * comes from a fresh listing: a member may have forked before it ended.
 */
export function groupRunning(pgid: number): boolean {
  if (!groupAlive(pgid)) {
    knownMembers.delete(pgid);
    return false;
  }
  const known = knownMembers.get(pgid);
  if (known !== undefined) for (const pid of known) if (memberRuns(pid, pgid)) return true;
  const pids = procPids();
  if (pids === undefined) return true;
  const running = pids.filter((pid) => memberRuns(pid, pgid));
  if (running.length === 0) knownMembers.delete(pgid);
  else {
    if (knownMembers.size >= MAX_KNOWN_GROUPS && !knownMembers.has(pgid)) knownMembers.clear();
    knownMembers.set(pgid, running);
  }
  return running.length > 0;
}

const knownMembers = new Map<number, string[]>();
/** Groups asked about and not yet seen gone; past this many the kept lists start over. */
const MAX_KNOWN_GROUPS = 64;

function memberRuns(pid: string, pgid: number): boolean {
  const s = procStat(pid);
  return s !== undefined && s.pgrp === pgid && (s.state !== "Z" || procHasOtherThreads(pid));
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** After a SIGKILL: how long the group may take to be gone before the caller goes on anyway. */
const KILLED_GONE_MS = 250;

export async function untilGone(pid: number, ms = KILLED_GONE_MS): Promise<void> {
  const ends = monotonicMs() + ms;
  // A zombie writes nothing more, and an orphan's waits on init (~1.3-1.8 s on this VM): every fifth
  // look (each lists /proc) asks whether anything of the group still runs rather than whether it is reaped.
  for (let look = 1; groupAlive(pid) && monotonicMs() < ends; look++) {
    if (look % 5 === 0 && !groupRunning(pid)) return;
    await pause(5);
  }
}

/**
 * After a SIGTERM to the group and its leader's exit: what survived gets up to `graceMs` as long as it
 * still writes (`lastOutputAt` within `quietMs`; a test runner printing its summary on SIGTERM), and
 * is SIGKILLed once it has been quiet that long. Resolves when the group is gone.
 */
export async function killWhenQuiet(pid: number, graceMs: number, quietMs: number, lastOutputAt: () => number): Promise<void> {
  const since = monotonicMs();
  const ends = since + graceMs;
  const writing = (): boolean => monotonicMs() - Math.max(since, lastOutputAt()) < quietMs;
  while (groupAlive(pid) && monotonicMs() < ends && writing()) await pause(25);
  signalGroup(pid, "SIGKILL");
  await untilGone(pid);
}

/** SIGTERM to the group now, SIGKILL after the grace period. Returns a cancel for the SIGKILL. */
export function terminateGroup(pid: number, graceMs: number): () => void {
  signalGroup(pid, "SIGTERM");
  // A member stopped (`kill -STOP`, a job suspended) acts on the SIGTERM only once continued, as a
  // shell's `kill` does for a stopped job; without it, it was SIGKILLed at the end of the grace.
  signalGroup(pid, "SIGCONT");
  const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
  timer.unref();
  return () => clearTimeout(timer);
}

/** Shell convention: a death by signal reports 128 + the signal number. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  if (signal !== null) return 128 + (constants.signals[signal] ?? 0);
  return 1;
}

/**
 * If the capturing process dies without cleaning up (SIGKILL, crash), its command's group would run
 * on as orphans, out of reach. A tiny shell in its own session holds a pipe from us; when that pipe
 * closes because we are gone, it kills the group. On a normal finish the guard itself is killed.
 */
export function guardAgainstOrphans(pgid: number): () => void {
  let guard: ReturnType<typeof spawn> | undefined;
  try {
    guard = spawn("/bin/sh", ["-c", "read _ ; kill -KILL -$0 2>/dev/null", String(pgid)], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
  } catch {
    return () => {};
  }
  guard.on("error", () => {});
  guard.stdin?.on("error", () => {});
  // The guard must never keep the caller's event loop alive.
  guard.unref();
  (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return () => {
    guard?.kill("SIGKILL");
  };
}
