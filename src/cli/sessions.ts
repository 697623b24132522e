// `spool sessions`: the recorded sessions, newest last — id, started, command, status, size.
import { countOf, printableText } from "../errors/index.js";
import { formatBytes } from "../capture/index.js";
import { DEFAULT_ROOT, sessionsDir } from "../store/index.js";
import { defineCommand } from "./command.js";
import { listEntries, loadSummary, removedSinceListed, sessionDirWarnings } from "./session-catalog.js";
import { JSON_OUTPUT, ROOT } from "./shared-options.js";
import { shownCommand } from "./shown-command.js";
import { STORE, storeTarget } from "./store-option.js";

export const sessionsCommand = defineCommand({
  name: "sessions",
  summary: "list recorded sessions (id, started, command, status, size)",
  synopsis: "[--root DIR] [--store STORE] [--json]",
  description:
    "Lists the sessions recorded under DIR/sessions: id, start time, status (running, succeeded,\nfailed, timed out, interrupted) and size on disk, and the command. A session with several runs\n(--session) shows its first start, its last activity, and its latest command.",
  options: { root: ROOT, store: STORE, json: JSON_OUTPUT },
  async run(values) {
    const root = values.root ?? DEFAULT_ROOT;
    const target = storeTarget(values.store);
    const rows = [];
    // Each directory not listed is said above the table, and how many they were below it: in a long
    // listing (a shared root with other users' sessions) the lines scroll away.
    let skipped = 0;
    if (target.kind !== "postgres") {
      const warnings = sessionDirWarnings(root);
      for (const warning of warnings) process.stderr.write(`spool sessions: warning: ${printableText(warning)}\n`);
      skipped += warnings.length;
    }
    for (const entry of await listEntries(root, target)) {
      try {
        const loaded = await loadSummary(entry);
        rows.push(loaded.summary);
        for (const warning of loaded.warnings) process.stderr.write(`spool sessions: warning: ${printableText(warning)}\n`);
      } catch (err) {
        if (removedSinceListed(entry)) continue;
        process.stderr.write(`spool sessions: skipping ${entry.id}: ${printableText((err as Error).message)}\n`);
        skipped++;
      }
    }
    const skippedNote =
      skipped === 0
        ? ""
        : `spool sessions: skipped ${countOf(skipped, "session directory", "session directories")} it could not list (each said above); ${rows.length} listed\n`;
    if (values.json) {
      process.stdout.write(JSON.stringify(rows) + "\n");
      process.stderr.write(skippedNote);
      return 0;
    }
    if (rows.length === 0) {
      process.stdout.write(
        `No ${skipped > 0 ? "readable " : ""}sessions ${target.kind === "postgres" ? `in ${printableText(target.shown)}` : `under ${printableText(sessionsDir(root))}`}. 'spool run -- COMMAND' records one.\n`,
      );
      process.stderr.write(skippedNote);
      return 0;
    }
    const time = (t: string | null | undefined): string => (t ? t.replace("T", " ").slice(0, 19) : "?");
    const table = [
      ["ID", "STARTED", "LAST ACTIVITY", "STATUS", "SIZE", "COMMAND"],
      ...rows.map((r) => [
        r.id,
        time(r.startedAt),
        time(r.lastActivityAt),
        r.exitCode !== null && r.status === "failed" ? `${r.status} (${r.exitCode})` : r.status,
        formatBytes(r.bytes),
        shownCommand(r.command, 60),
      ]),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    for (const row of table) process.stdout.write(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join("  ") + "\n");
    process.stderr.write(skippedNote);
    return 0;
  },
});
