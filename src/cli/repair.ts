// `spool repair SESSION`: cut a JSONL session whose log holds a damaged line back to its last good
// line, on request only (opening never does this). The cut lines are kept beside the log.
import { countOf } from "../errors/index.js";
import { DEFAULT_ROOT, repairJsonlSession } from "../store/index.js";
import { defineCommand } from "./command.js";
import { findSession } from "./session-catalog.js";
import { ROOT } from "./shared-options.js";

export const repairCommand = defineCommand({
  name: "repair",
  summary: "cut a damaged JSONL session log back to its last good line (the cut part is kept)",
  synopsis: "SESSION [--root DIR]",
  description:
    "A JSONL session whose log holds a damaged line (a bad checksum on a complete line) is not opened.\n" +
    "repair moves that line and everything after it to <log>.damaged-<time> beside the log, cuts the log\n" +
    "back to its last good line, and checks that the session opens. A torn tail (a last line without its\n" +
    "newline) needs no repair: it is cut quietly on the next open.",
  options: { root: ROOT },
  positionals: { min: 1, max: 1, name: "SESSION (an id from 'spool sessions')" },
  async run(values, positionals) {
    const entry = findSession(values.root ?? DEFAULT_ROOT, positionals[0]!);
    if (entry.backend !== "jsonl") {
      process.stderr.write(
        `spool repair: session ${entry.id} is stored in SQLite, which recovers its own journal on open; repair applies to JSONL logs only\n`,
      );
      return 1;
    }
    const repaired = repairJsonlSession(entry.file);
    if (repaired.length === 0) process.stdout.write(`Session ${entry.id}: no damaged line; nothing to repair.\n`);
    for (const r of repaired) {
      process.stdout.write(`Session ${entry.id}: ${r.file}: cut at line ${r.line}; ${countOf(r.bytesMoved, "byte")} moved to ${r.savedTo}\n`);
    }
    return 0;
  },
});
