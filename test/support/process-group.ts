// Live (non-zombie) processes and process-group members, read from /proc: a killed process stays a
// zombie until its new parent reaps it, and kill(pid, 0) would still count it.
import { readdirSync, readFileSync } from "node:fs";

export function groupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z") found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Running, not a zombie waiting to be reaped by whoever inherited it. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** State letter of /proc/PID/stat (R, S, Z…), undefined once the process is gone. */
export function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0];
  } catch {
    return undefined;
  }
}
