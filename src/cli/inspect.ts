// `spool inspect SESSION`: what a session holds — operations, tool calls, output sizes, truncation,
// spill files, scopes still open, and for a run that died mid-command the output recovered from its
// last durable flush. Streamed from the session's log as it is read (inspect-report.ts).
import { printableText } from "../errors/index.js";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_ROOT, listPostgresSpills, sidecarDir } from "../store/index.js";
import { defineCommand } from "./command.js";
import { writeInspectReport, type SpillFile } from "./inspect-report.js";
import { PacedOutput } from "./paced-output.js";
import { findEntry, livenessOf, sessionWarnings, withSnapshot } from "./session-catalog.js";
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
    // Awaited inside the snapshot: a SQLite snapshot closes when the callback settles.
    return withSnapshot(entry, async (snap) => {
      const { live } = livenessOf(entry, snap);
      for (const warning of sessionWarnings(entry, snap, live)) process.stderr.write(`spool inspect: warning: ${printableText(warning)}\n`);
      const spills = localSpills(join(entry.dir, "spill"));
      // Spills a database session keeps in the database (readable from any machine).
      for (const s of entry.backend === "postgres" ? await listPostgresSpills(entry.url, entry.id) : [])
        spills.push({ path: `${entry.file}/spill/${s.name}${s.complete ? "" : " (incomplete)"}`, bytes: s.bytes });
      const scopesDir = sidecarDir(entry.file);
      const openScopes = entry.backend !== "postgres" && existsSync(scopesDir) ? readdirSync(scopesDir).filter((f) => !f.endsWith(".tmp")) : [];
      await writeInspectReport(new PacedOutput(process.stdout), entry, snap, { live, spills, openScopes }, values.json === true);
      return 0;
    });
  },
});

/** The spill files beside a local session; one that cannot be read is a warning, not the end of the report. */
function localSpills(dir: string): SpillFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") process.stderr.write(`spool inspect: warning: cannot list ${dir}: ${(err as Error).message}\n`);
    return [];
  }
  const spills: SpillFile[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      spills.push({ path, bytes: statSync(path).size });
    } catch (err) {
      process.stderr.write(`spool inspect: warning: cannot read spill file ${path}: ${(err as Error).message}\n`);
    }
  }
  return spills;
}
