// `spool gc --older-than 7d`: remove sessions that ended (or stopped being written) before a cutoff,
// and report what was freed. A session whose recording process is still alive is never removed.
import { readdirSync, rmSync, statSync } from "node:fs";
import { formatBytes } from "../capture/index.js";
import { basename, join } from "node:path";
import { DEFAULT_ROOT, gcPostgresSessions, lockHolder, sessionsDir } from "../store/index.js";
import { defineCommand } from "./command.js";
import { EXIT } from "./exit.js";
import { listSessions, loadSummary, removedSinceListed, sessionDirWarnings } from "./session-catalog.js";
import { directorySize } from "./session-view.js";
import { ROOT } from "./shared-options.js";
import { STORE, storeTarget } from "./store-option.js";
import { UsageError } from "./usage-error.js";

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseAge(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(text.trim());
  if (!m) throw new UsageError(`--older-than needs a number and a unit (s, m, h, d or w), e.g. 7d; got "${text}"`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

export const gcCommand = defineCommand({
  name: "gc",
  summary: "remove old sessions and report what was freed",
  synopsis: "--older-than AGE [--root DIR] [--store STORE] [--dry-run]",
  description:
    "Removes sessions under DIR/sessions last active more than AGE ago. AGE is a number with a unit:\ns, m, h, d or w (e.g. 7d, 12h). Running sessions are kept.",
  options: {
    "older-than": { type: "string", value: "AGE", help: "remove sessions last active more than AGE ago (required)" },
    root: ROOT,
    store: STORE,
    "dry-run": { type: "boolean", help: "say what would be removed, remove nothing" },
  },
  async run(values) {
    if (values["older-than"] === undefined) throw new UsageError("--older-than AGE is required (e.g. --older-than 7d), so nothing is removed by accident");
    const cutoff = Date.now() - parseAge(values["older-than"]);
    const root = values.root ?? DEFAULT_ROOT;
    const dry = values["dry-run"] === true;
    const target = storeTarget(values.store);
    if (target.kind === "postgres") {
      // In the database: idle since the cutoff (last commit) and no writer holding the session.
      const r = await gcPostgresSessions(target.url, { olderThanMs: parseAge(values["older-than"]), dryRun: dry });
      let bytes = 0;
      for (const s of r.removed) {
        bytes += s.bytes;
        // This machine's local files of the session (spill/, results/) go with it.
        if (!dry) rmSync(join(sessionsDir(root), s.id), { recursive: true, force: true });
        process.stdout.write(`${dry ? "would remove" : "removed"} ${s.id} (${formatBytes(s.bytes)}, last commit ${s.updatedAt})\n`);
      }
      const n = r.removed.length;
      process.stdout.write(
        `${dry ? "Would free" : "Freed"} ${formatBytes(bytes)} from ${n} session${n === 1 ? "" : "s"} in ${target.shown}; kept ${r.keptLive} live.\n`,
      );
      return 0;
    }
    let freed = 0;
    let removed = 0;
    let kept = 0;
    let failed = 0;
    for (const warning of sessionDirWarnings(root)) process.stderr.write(`spool gc: warning: ${warning}\n`);
    for (const entry of listSessions(root)) {
      let found: { live: boolean; bytes: number; status: string };
      let lastActive: number;
      try {
        const loaded = await loadSummary(entry);
        found = { live: loaded.live, bytes: loaded.summary.bytes, status: loaded.summary.status };
        lastActive = Math.max(Date.parse(loaded.summary.endedAt ?? "") || 0, statSync(entry.file).mtimeMs);
      } catch (err) {
        // Another gc removed it meanwhile: neither kept nor ours to report (two gcs at once ended one of
        // them at its first such session with "ENOENT … stat", its report unprinted).
        if (removedSinceListed(entry)) continue;
        if (!emptySince(entry.file, cutoff)) {
          process.stderr.write(`spool gc: skipping ${entry.id}: ${(err as Error).message}\n`);
          kept++;
          continue;
        }
        // A writer between its lock and its first record: SQLite creates the database empty, then writes
        // (a `gc --older-than 0s` in those milliseconds removed a live session). Kept, as running.
        if (lockHolder(`${entry.file}.lock`) !== undefined) {
          kept++;
          continue;
        }
        found = { live: false, bytes: directorySize(entry.dir), status: "empty" };
        lastActive = 0;
      }
      if (found.live || lastActive >= cutoff) {
        kept++;
        continue;
      }
      if (!dry) {
        try {
          removeSession(entry.dir, entry.file);
        } catch (err) {
          // Another gc is removing it at the same moment (its directory went while this one read it).
          if (removedSinceListed(entry)) continue;
          process.stderr.write(`spool gc: could not remove ${entry.id}: ${(err as Error).message}; it is still listed, and the next gc tries again\n`);
          failed++;
          kept++;
          continue;
        }
      }
      freed += found.bytes;
      removed++;
      process.stdout.write(`${dry ? "would remove" : "removed"} ${entry.id} (${formatBytes(found.bytes)}, ${found.status})\n`);
    }
    process.stdout.write(
      `${dry ? "Would free" : "Freed"} ${formatBytes(freed)} from ${removed} session${removed === 1 ? "" : "s"}; kept ${kept} under ${sessionsDir(root)}.\n`,
    );
    return failed > 0 ? EXIT.failure : 0;
  },
});

/**
 * A log or database of 0 bytes, last written before the cutoff: a process that stopped before its
 * first write left it (spool publishes a JSONL log with its header, so there only a hand leaves one).
 * Every reader skips it as holding no session, and gc once did too, so it stayed for ever; it holds
 * nothing to lose. A writer writes its first record at once, long before any cutoff but a tiny one
 * (`--older-than 0s`): one that holds the session's lock is kept.
 */
function emptySince(file: string, cutoff: number): boolean {
  try {
    const st = statSync(file);
    return st.isFile() && st.size === 0 && st.mtimeMs < cutoff;
  } catch {
    return false;
  }
}

/**
 * The session's log (and the files named after it: checkpoint, sidecars, WAL) goes last: a removal cut
 * short (a directory it may not delete) leaves a session that is still listed, whole enough for the
 * next gc to finish, instead of files nothing lists any more.
 */
function removeSession(dir: string, log: string): void {
  const logName = basename(log);
  for (const name of readdirSync(dir)) if (!name.startsWith(logName)) rmSync(join(dir, name), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
