// `spool gc --older-than 7d`: remove sessions that ended (or stopped being written) before a cutoff,
// and report what was freed. A session whose recording process is still alive is never removed.
import { rmSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import { formatBytes } from "../capture/index.js";
import type { Command } from "./commands.js";
import { UsageError } from "./cli-errors.js";
import { DEFAULT_ROOT, listSessions, loadSession, sessionsDir } from "./session-catalog.js";

const USAGE = `Usage: spool gc --older-than AGE [--root DIR] [--dry-run]

Removes sessions under DIR/sessions (default .spool) last active more than AGE ago. AGE is a number
with a unit: s, m, h, d or w (e.g. 7d, 12h). Running sessions are kept.`;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseAge(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(text.trim());
  if (!m) throw new UsageError(`--older-than needs a number and a unit (s, m, h, d, w), e.g. 7d; got "${text}"`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

export const gcCommand: Command = {
  name: "gc",
  summary: "remove old sessions and report what was freed",
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: { "older-than": { type: "string" }, root: { type: "string" }, "dry-run": { type: "boolean" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    if (values["older-than"] === undefined) throw new UsageError("--older-than AGE is required (e.g. --older-than 7d), so nothing is removed by accident");
    const cutoff = Date.now() - parseAge(values["older-than"]);
    const root = values.root ?? DEFAULT_ROOT;
    let freed = 0;
    let removed = 0;
    let kept = 0;
    for (const entry of listSessions(root)) {
      let loaded;
      try {
        loaded = await loadSession(entry);
      } catch (err) {
        process.stderr.write(`spool gc: skipping ${entry.id}: ${(err as Error).message}\n`);
        kept++;
        continue;
      }
      const lastActive = Math.max(Date.parse(loaded.summary.endedAt ?? "") || 0, statSync(entry.file).mtimeMs);
      if (loaded.live || lastActive >= cutoff) {
        kept++;
        continue;
      }
      freed += loaded.summary.bytes;
      removed++;
      if (!values["dry-run"]) rmSync(entry.dir, { recursive: true, force: true });
      process.stdout.write(`${values["dry-run"] ? "would remove" : "removed"} ${entry.id} (${formatBytes(loaded.summary.bytes)}, ${loaded.summary.status})\n`);
    }
    process.stdout.write(`${values["dry-run"] ? "Would free" : "Freed"} ${formatBytes(freed)} from ${removed} session${removed === 1 ? "" : "s"}; kept ${kept} under ${sessionsDir(root)}.\n`);
    return 0;
  },
};
