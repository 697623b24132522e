// `spool repair`: the one path that cuts a damaged JSONL log, and only when the user asks. Under the
// session's writer lock, each log (main and sidecars) is read up to its first line that fails to
// verify; the bytes from there on are moved to `<log>.damaged-<time>` beside it (nothing is thrown
// away), the log is cut back to its last good line, and the session is opened once to prove it loads:
// replaying every line, whatever the checkpoint says (the one full check of a checkpointed log; a cut
// main log also drops its checkpoint).
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptSessionError } from "../errors.js";
import { removeCheckpoint } from "./checkpoint.js";
import { acquireLock } from "./lock.js";
import { readLog } from "./log-file.js";
import { sidecarDir } from "../layout.js";
import { checkRegularFile } from "../regular-file.js";
import { loadSession } from "./replay.js";

export interface RepairedLog {
  readonly file: string;
  /** The first damaged line; it and everything after it were moved aside. */
  readonly line: number;
  readonly bytesMoved: number;
  readonly savedTo: string;
}

/** Repairs a JSONL session; returns what was cut (empty when nothing was damaged). */
export function repairJsonlSession(mainPath: string): RepairedLog[] {
  checkRegularFile(mainPath, "the log");
  const release = acquireLock(`${mainPath}.lock`, mainPath);
  try {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const dir = sidecarDir(mainPath);
    const sidecars = existsSync(dir)
      ? readdirSync(dir)
          .filter((n) => n.endsWith(".scope"))
          .map((n) => join(dir, n))
          .filter((p) => statSync(p).isFile())
      : [];
    const repaired: RepairedLog[] = [];
    for (const file of [mainPath, ...sidecars]) {
      const log = readLog(file, { untilDamage: true });
      if (log.damagedLine === undefined) continue;
      if (file === mainPath && log.damagedLine === 1) {
        throw new CorruptSessionError(file, 1, "the session header itself is damaged, so there is no good line to cut back to");
      }
      const bytes = readFileSync(file);
      const savedTo = `${file}.damaged-${stamp}`;
      writeFileSync(savedTo, bytes.subarray(log.goodLength), { flag: "wx", mode: 0o600 });
      // A sidecar whose header is damaged holds nothing usable: it goes whole (its bytes are saved).
      if (log.goodLength === 0) unlinkSync(file);
      else truncateSync(file, log.goodLength);
      repaired.push({ file, line: log.damagedLine, bytesMoved: bytes.length - log.goodLength, savedTo });
      if (file === mainPath) removeCheckpoint(mainPath);
    }
    loadSession(mainPath, { repair: true, ignoreCheckpoint: true });
    return repaired;
  } finally {
    release();
  }
}
