// `spool gc --older-than 7d`: remove sessions that ended (or stopped being written) before a cutoff,
// and report what was freed. A session whose recording process is still alive, or whose lock a live
// process holds, is never removed: the removal itself takes the session's lock (removeIdleSession).
import { countOf, printableText } from "../errors/index.js";
import { rmSync, statSync } from "node:fs";
import { formatBytes } from "../capture/index.js";
import { join } from "node:path";
import { DEFAULT_ROOT, gcPostgresSessions, lockHolder, removeIdleSession, sessionsDir } from "../store/index.js";
import { defineCommand } from "./command.js";
import { EXIT } from "./exit.js";
import { parseDuration } from "./parse-duration.js";
import { listSessions, loadSummary, removedSinceListed, sessionDirWarnings } from "./session-catalog.js";
import { directorySize } from "./session-view.js";
import { ROOT } from "./shared-options.js";
import { STORE, storeTarget } from "./store-option.js";
import { UsageError } from "./usage-error.js";

/** --older-than: a duration with its unit (a bare number could mean anything), in milliseconds. */
export function parseAge(text: string): number {
  const seconds = parseDuration(text.trim(), "required");
  if (seconds === undefined) throw new UsageError(`--older-than needs a number and a unit (s, m, h, d or w), e.g. 7d; got "${text}"`);
  return seconds * 1000;
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
        `${dry ? "Would free" : "Freed"} ${formatBytes(bytes)} from ${countOf(n, "session")} in ${target.shown}; kept ${r.keptLive} live.\n`,
      );
      return 0;
    }
    let freed = 0;
    let removed = 0;
    let kept = 0;
    let failed = 0;
    for (const warning of sessionDirWarnings(root)) process.stderr.write(`spool gc: warning: ${printableText(warning)}\n`);
    for (const entry of listSessions(root)) {
      let found: { live: boolean; bytes: number; status: string };
      let lastActive: number;
      /** The log's mtime as judged: the removal keeps a session written since (removeIdleSession). */
      let mtime: number;
      try {
        const loaded = await loadSummary(entry);
        found = { live: loaded.live, bytes: loaded.summary.bytes, status: loaded.summary.status };
        mtime = statSync(entry.file).mtimeMs;
        lastActive = Math.max(Date.parse(loaded.summary.endedAt ?? "") || 0, mtime);
      } catch (err) {
        // Another gc removed it meanwhile, or is removing it (its lock says so): neither kept nor ours to
        // report (two gcs at once ended one of them at its first such session with "ENOENT … stat", its
        // report unprinted).
        // Trap: the lock first, then the log (that gc removes the log before it lets go of the lock).
        if (lockHolder(`${entry.file}.lock`)?.purpose === "remove" || removedSinceListed(entry)) continue;
        const empty = emptySince(entry.file, cutoff);
        if (empty === undefined) {
          process.stderr.write(`spool gc: skipping ${entry.id}: ${(err as Error).message}\n`);
          kept++;
          continue;
        }
        found = { live: false, bytes: directorySize(entry.dir), status: "empty" };
        lastActive = 0;
        mtime = empty;
      }
      // A live process holding the session's lock is a writer, whatever the session says: one between its
      // lock and its first record (SQLite creates the database empty, then writes: a `gc --older-than 0s`
      // in those milliseconds removed a live session), or one that opened it through the library (no
      // `spool run` to mark it running). Kept, as running; the dry run says so too. Another gc holding it
      // to remove it is no writer: that gc reports it.
      const holder = lockHolder(`${entry.file}.lock`);
      if (holder?.purpose === "remove") continue;
      if (found.live || lastActive >= cutoff || holder !== undefined) {
        kept++;
        continue;
      }
      if (!dry) {
        try {
          // Under the session's lock: a writer that opened it since the judgement above keeps it.
          const removal = removeIdleSession(entry.dir, entry.file, mtime);
          if (removal === "gone") continue;
          if (removal !== "removed") {
            kept++;
            continue;
          }
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
      `${dry ? "Would free" : "Freed"} ${formatBytes(freed)} from ${countOf(removed, "session")}; kept ${kept} under ${sessionsDir(root)}.\n`,
    );
    return failed > 0 ? EXIT.failure : 0;
  },
});

/**
 * A log or database of 0 bytes, last written before the cutoff: a process that stopped before its
 * first write left it (spool publishes a JSONL log with its header, so there only a hand leaves one).
 * Every reader skips it as holding no session, and gc once did too, so it stayed for ever; it holds
 * nothing to lose. A writer writes its first record at once, long before any cutoff but a tiny one
 * (`--older-than 0s`): one that holds the session's lock is kept. Returns the file's mtime when it is
 * such a file, undefined otherwise.
 */
function emptySince(file: string, cutoff: number): number | undefined {
  try {
    const st = statSync(file);
    return st.isFile() && st.size === 0 && st.mtimeMs < cutoff ? st.mtimeMs : undefined;
  } catch {
    return undefined;
  }
}
