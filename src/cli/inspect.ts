// `spool inspect SESSION`: what a session holds — operations, tool calls, output sizes, truncation,
// spill files, scopes still open, and for a run that died mid-command the output recovered from its
// last durable flush.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { formatBytes } from "../capture/index.js";
import { DEFAULT_ROOT, sidecarDir } from "../store/index.js";
import { defineCommand } from "./command.js";
import { listPostgresSpills } from "../store/index.js";
import { findEntry, loadSession } from "./session-catalog.js";
import { JSON_OUTPUT, ROOT } from "./shared-options.js";
import { STORE, storeTarget } from "./store-option.js";

export const inspectCommand = defineCommand({
  name: "inspect",
  summary: "summarise a session: calls, output sizes, truncation, spill files, open scopes, recovered output",
  synopsis: "SESSION [--root DIR] [--store STORE] [--json]",
  description: "SESSION is a session id (or a unique prefix of one) from 'spool sessions'.",
  options: { root: ROOT, store: STORE, json: JSON_OUTPUT },
  positionals: { min: 1, max: 1, name: "SESSION (an id from 'spool sessions')" },
  async run(values, positionals) {
    const entry = await findEntry(values.root ?? DEFAULT_ROOT, storeTarget(values.store), positionals[0]!);
    const { view, summary, live, warnings } = await loadSession(entry);
    for (const warning of warnings) process.stderr.write(`spool inspect: warning: ${warning}\n`);
    const spillDir = join(entry.dir, "spill");
    const spills = existsSync(spillDir)
      ? readdirSync(spillDir).map((name) => ({ path: join(spillDir, name), bytes: statSync(join(spillDir, name)).size }))
      : [];
    // Spills a database session keeps in the database (readable from any machine).
    for (const s of entry.backend === "postgres" ? await listPostgresSpills(entry.url, entry.id) : [])
      spills.push({ path: `${entry.file}/spill/${s.name}${s.complete ? "" : " (incomplete)"}`, bytes: s.bytes });
    const scopesDir = sidecarDir(entry.file);
    const openScopes = entry.backend !== "postgres" && existsSync(scopesDir) ? readdirSync(scopesDir).filter((f) => !f.endsWith(".tmp")) : [];
    const calls = view.calls.map((c) => ({
      id: c.id,
      tool: c.name,
      settled: c.ended,
      isError: c.isError,
      ...(c.run ? { command: c.run.command, startedAt: c.run.startedAt, endedAt: c.run.endedAt, exitCode: c.run.exitCode } : {}),
      outputChars: c.output?.content[0].text.length ?? 0,
      truncation: c.output?.truncation,
      ...(c.ended ? {} : { recoveredOutput: c.output?.content[0].text ?? "" }),
    }));
    const report = {
      ...summary,
      backend: entry.backend,
      dir: entry.dir,
      live,
      calls,
      spillFiles: spills,
      openScopes,
      transcriptEntries: view.transcript.length,
    };
    if (values.json) {
      process.stdout.write(JSON.stringify(report) + "\n");
      return 0;
    }
    const lines = [
      `Session ${summary.id} (${entry.backend}) — ${summary.status}${summary.exitCode !== null ? `, exit code ${summary.exitCode}` : ""}${live ? ", still running" : ""}`,
      `  command:   ${summary.command}`,
      `  started:   ${summary.startedAt || "?"}${summary.endedAt ? `   ended: ${summary.endedAt}` : ""}${summary.lastActivityAt ? `   last activity: ${summary.lastActivityAt}` : ""}`,
      `  directory: ${entry.dir} (${formatBytes(summary.bytes)})`,
      `  transcript entries: ${view.transcript.length}; open scopes: ${openScopes.length ? openScopes.join(", ") : "none"}`,
    ];
    for (const c of calls) {
      const t = c.truncation;
      lines.push(
        `  call ${c.id} (${c.tool}): ${c.settled ? (c.isError ? "error" : "ok") : "UNSETTLED"}, ${c.outputChars} chars shown` +
          (t && t.totalLines !== undefined
            ? `, ${t.totalLines} lines / ${formatBytes(t.totalBytes)} written${t.truncated ? `, truncated by ${t.truncatedBy}` : ""}`
            : ""),
      );
      if (c.command !== undefined)
        lines.push(
          `    $ ${c.command}   started ${c.startedAt}${c.endedAt ? `, ended ${c.endedAt}` : ""}${c.exitCode !== null && c.exitCode !== undefined ? `, exit ${c.exitCode}` : ""}`,
        );
      if (!c.settled) {
        const text = c.recoveredOutput ?? "";
        const tail = text.split("\n").slice(-15).join("\n");
        lines.push(`    recovered output (last durable flush, ${text.length} chars; last lines):`, ...tail.split("\n").map((l) => `    | ${l}`));
      }
    }
    for (const s of spills) lines.push(`  spill: ${s.path} (${formatBytes(s.bytes)})`);
    process.stdout.write(lines.join("\n") + "\n");
    return 0;
  },
});
