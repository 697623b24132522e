// The command runs as the leader of a new session and process group (detached: setsid; on a terminal
// node-pty's child calls setsid too), so a timeout or abort can reach everything it started — `sh -c
// 'sleep 60 & wait'` leaves no orphan sleeping on. Job control inside it (`set -m`, `bash -i`) puts each
// `&` job in a process group of its own, in the same session: those are found in /proc by their
// session id at the end of the command (sessionGroups) and ended with the command's own group.
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
  return membersRun(pgid, "pgrp", knownMembers) ?? true;
}

/**
 * Something of session `sid` still runs, in any of its process groups (groupRunning's rules: a zombie
 * does not count, the members a listing found are kept and a no comes from a fresh listing). Unlike a
 * group, a session has no kill(2) of its own to ask whether it is empty: every no costs a listing of
 * /proc. Undefined where /proc cannot be listed.
 */
export function sessionRunning(sid: number): boolean | undefined {
  return membersRun(sid, "session", knownSessionMembers);
}

function membersRun(id: number, by: "pgrp" | "session", kept: Map<number, string[]>): boolean | undefined {
  const known = kept.get(id);
  if (known !== undefined) for (const pid of known) if (memberRuns(pid, id, by)) return true;
  const pids = procPids();
  if (pids === undefined) return undefined;
  const running = pids.filter((pid) => memberRuns(pid, id, by));
  if (running.length === 0) kept.delete(id);
  else {
    if (kept.size >= MAX_KNOWN_GROUPS && !kept.has(id)) kept.clear();
    kept.set(id, running);
  }
  return running.length > 0;
}

const knownMembers = new Map<number, string[]>();
const knownSessionMembers = new Map<number, string[]>();
/** Groups (sessions) asked about and not yet seen gone; past this many the kept lists start over. */
const MAX_KNOWN_GROUPS = 64;

function memberRuns(pid: string, id: number, by: "pgrp" | "session"): boolean {
  const s = procStat(pid);
  return s !== undefined && s[by] === id && (s.state !== "Z" || procHasOtherThreads(pid));
}

/**
 * The process groups of session `sid` other than its leader's own, from one listing of /proc (empty
 * where there is none). A process that called setsid itself has left the session and is not among them:
 * a daemon started on purpose (`setsid server &`) is left alone, as before (exec.ts, file-writers.ts).
 *
 * A listing reads every process's stat: 0.8 ms median with ~130 processes here, 35 ms with ~1,020 on
 * two cores at a load average of 14. So it is taken only at the end of a command (its exit, a timeout,
 * an abort), never per read.
 */
export function sessionGroups(sid: number): number[] {
  const groups = new Set<number>();
  for (const pid of procPids() ?? []) {
    const s = procStat(pid);
    if (s !== undefined && s.session === sid && s.pgrp !== sid && (s.state !== "Z" || procHasOtherThreads(pid))) groups.add(s.pgrp);
  }
  return [...groups];
}

/**
 * Each signal to the command's group and then to every other group of its session (one listing for
 * all of them). `others`: false when the session is known to hold nothing else, to skip the listing.
 * False when the command's group was already gone.
 */
export function signalSession(sid: number, signals: readonly NodeJS.Signals[], others = true): boolean {
  let leader = false;
  for (const signal of signals) leader = signalGroup(sid, signal) || leader;
  if (others) for (const pgid of sessionGroups(sid)) for (const signal of signals) signalGroup(pgid, signal);
  return leader;
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
  signalSession(pid, ["SIGKILL"]);
  await untilGone(pid);
}

/**
 * SIGTERM to the group and the other groups of its session now, SIGKILL to them after the grace period.
 * Returns a cancel for the SIGKILL. `others`: see signalSession.
 */
export function terminateGroup(pid: number, graceMs: number, others = true): () => void {
  // A member stopped (`kill -STOP`, a job suspended) acts on the SIGTERM only once continued, as a
  // shell's `kill` does for a stopped job; without it, it was SIGKILLed at the end of the grace.
  signalSession(pid, ["SIGTERM", "SIGCONT"], others);
  // The listing is taken again: a job may have been started by the group since.
  const timer = setTimeout(() => signalSession(pid, ["SIGKILL"]), graceMs);
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
 * What the guard runs ($0: the command's pid, its group and session): SIGKILL to the group, then to
 * every group of the session, listed from /proc/PID/stat with the shell's builtins alone (the fields
 * after the command name, which may hold spaces and parentheses, are state, ppid, pgrp, session). A
 * job started in the session between the look at its stat and the end of the listing is missed.
 * Without /proc the pattern stays as it is and its read fails: the group alone, as before.
 */
export const GUARD_SCRIPT =
  'read _ ; kill -KILL -$0 2>/dev/null; for f in /proc/[0-9]*/stat; do read -r l < "$f" || continue; set -- ${l##*") "}; [ "$4" = "$0" ] && kill -KILL -"$3"; done 2>/dev/null';

/**
 * If the capturing process dies without cleaning up (SIGKILL, crash), its command's session would run
 * on as orphans, out of reach. A tiny shell in its own session holds a pipe from us; when that pipe
 * closes because we are gone, it kills the group and the other groups of the session (GUARD_SCRIPT).
 * On a normal finish the guard itself is killed.
 */
export function guardAgainstOrphans(pgid: number): () => void {
  let guard: ReturnType<typeof spawn> | undefined;
  try {
    guard = spawn("/bin/sh", ["-c", GUARD_SCRIPT, String(pgid)], {
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
