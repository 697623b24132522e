// `spool sessions`: the recorded sessions, newest last — id, started, command, status, size.
import { parseArgs } from "node:util";
import { formatBytes } from "../capture/index.js";
import type { Command } from "./commands.js";
import { DEFAULT_ROOT, listSessions, loadSession, sessionDirWarnings, sessionsDir } from "./session-catalog.js";

const USAGE = `Usage: spool sessions [--root DIR] [--json]

Lists the sessions recorded under DIR/sessions (default .spool): id, start time, command, status
(running, succeeded, failed, interrupted) and size on disk. A session with several runs (--session)
shows its first command and start and its last activity.`;

export const sessionsCommand: Command = {
  name: "sessions",
  summary: "list recorded sessions (id, started, command, status, size)",
  async run(args) {
    const { values } = parseArgs({ args: [...args], options: { root: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } });
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    const root = values.root ?? DEFAULT_ROOT;
    const rows = [];
    for (const warning of sessionDirWarnings(root)) process.stderr.write(`spool sessions: warning: ${warning}\n`);
    for (const entry of listSessions(root)) {
      try {
        const loaded = await loadSession(entry);
        rows.push(loaded.summary);
        for (const warning of loaded.warnings) process.stderr.write(`spool sessions: warning: ${warning}\n`);
      } catch (err) {
        process.stderr.write(`spool sessions: skipping ${entry.id}: ${(err as Error).message}\n`);
      }
    }
    if (values.json) {
      process.stdout.write(JSON.stringify(rows) + "\n");
      return 0;
    }
    if (rows.length === 0) {
      process.stdout.write(`No sessions under ${sessionsDir(root)}. \`spool run -- COMMAND\` records one.\n`);
      return 0;
    }
    const time = (t: string | null): string => (t ? t.replace("T", " ").slice(0, 19) : "?");
    const table = [["ID", "STARTED", "LAST ACTIVITY", "STATUS", "SIZE", "COMMAND"], ...rows.map((r) => [
      r.id,
      time(r.startedAt),
      time(r.lastActivityAt),
      r.exitCode !== null && r.status !== "running" ? `${r.status} (${r.exitCode})` : r.status,
      formatBytes(r.bytes),
      r.command.length > 60 ? `${r.command.slice(0, 57)}...` : r.command,
    ])];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    for (const row of table) process.stdout.write(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join("  ") + "\n");
    return 0;
  },
};
