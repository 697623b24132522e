// Live (non-zombie) members of a process group, read from /proc: a killed process stays a zombie
// until its new parent reaps it, and kill(-pgid, 0) would still count it.
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
