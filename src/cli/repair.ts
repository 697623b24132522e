// `spool repair SESSION`: cut a JSONL session whose log holds a damaged line back to its last good
// line, on request only (opening never does this). The cut lines are kept beside the log.
import { parseArgs } from "node:util";
import { repairJsonlSession } from "../store/index.js";
import type { Command } from "./commands.js";
import { UsageError } from "./cli-errors.js";
import { DEFAULT_ROOT, findSession } from "./session-catalog.js";

const USAGE = `Usage: spool repair SESSION [--root DIR]

A JSONL session whose log holds a damaged line (a bad checksum on a complete line) is not opened.
repair moves that line and everything after it to <log>.damaged-<time> beside the log, cuts the log
back to its last good line, and checks that the session opens. A torn tail (a last line without its
newline) needs no repair: it is cut quietly on the next open.`;

export const repairCommand: Command = {
  name: "repair",
  summary: "cut a damaged JSONL session log back to its last good line (the cut part is kept)",
  async run(args) {
    const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: { root: { type: "string" }, help: { type: "boolean", short: "h" } } });
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(`expected one SESSION id, got ${positionals.length}`);
    const entry = findSession(values.root ?? DEFAULT_ROOT, positionals[0]!);
    if (entry.backend !== "jsonl") {
      process.stderr.write(`spool repair: session ${entry.id} is stored in SQLite, which recovers its own journal on open; repair applies to JSONL logs only.\n`);
      return 1;
    }
    const repaired = repairJsonlSession(entry.file);
    if (repaired.length === 0) process.stdout.write(`Session ${entry.id}: no damaged line; nothing to repair.\n`);
    for (const r of repaired) {
      process.stdout.write(`Session ${entry.id}: ${r.file}: cut at line ${r.line}; ${r.bytesMoved} bytes moved to ${r.savedTo}\n`);
    }
    return 0;
  },
};
