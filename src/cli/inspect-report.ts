// What `spool inspect` prints, streamed: each call is made from its transcript entry and call record
// as the transcript is read page by page, written out and dropped; then the calls still open with their
// recovered output; then spill files. Text or one JSON document, byte for byte what building the whole
// view first printed (on a 1 GB `spool run` log of 90,599 calls that peaked at 1.3 GB RSS).
// The header comes first but states what only the whole read knows (the latest activity of any call,
// the transcript's length), so the calls are held back in a DeferredText — a temporary file past 1 MB
// — and follow the header once it is known: one read of the log, memory one page and one chunk.
// (A first pass for the header alone costs a second full read: 14.3 s against 7.5 s on that log.)
import { countOf } from "../errors/index.js";
import { formatBytes } from "../capture/index.js";
import { transcriptEntries } from "../harness/index.js";
import type { SessionSnapshot } from "../store/index.js";
import { DeferredText } from "./deferred-text.js";
import type { PacedOutput } from "./paced-output.js";
import { summaryOf, type SessionEntry } from "./session-catalog.js";
import { shownCommand } from "./shown-command.js";
import { callRecords, directorySize, runInfoOf, sessionHeader, settledCalls, unsettledCalls, type CallView } from "./session-view.js";

/**
 * Transcript entries read per page. What a page holds survives the young-generation collections that
 * happen while it is held, and V8 (Node 24) grows its young generation with what survives; a page
 * continues where the last one stopped (the store resumes at the line after its cursor), so a small
 * page costs no re-reading. On the 1 GB log, cold, Node 24: pages of 100 peak at 266–270 MB RSS, of
 * 20 at 190–192, of 10 at 168–191, of 5 at 142–167, of 1 at 144–145, all in 6–9 s.
 */
export const INSPECT_PAGE = 5;

export interface SpillFile {
  readonly path: string;
  readonly bytes: number;
}

/** What the report shows of the session beyond its log: files beside it, and whether its writer lives. */
export interface InspectContext {
  readonly live: boolean;
  readonly spills: readonly SpillFile[];
  readonly openScopes: readonly string[];
}

/** One call as the report shows it (the `calls` element of `--json`). */
function reportCall(c: CallView) {
  return {
    id: c.id,
    tool: c.name,
    settled: c.ended,
    isError: c.isError,
    ...(c.run ? { command: c.run.command, startedAt: c.run.startedAt, endedAt: c.run.endedAt, exitCode: c.run.exitCode, status: c.run.status } : {}),
    outputChars: c.output?.content[0].text.length ?? 0,
    truncation: c.output?.truncation,
    ...(c.ended ? {} : { recoveredOutput: c.output?.content[0].text ?? "" }),
  };
}

/** A call's lines of the text report, each ending in a newline. */
function callText(c: ReturnType<typeof reportCall>): string {
  const t = c.truncation;
  const lines = [
    `  call ${c.id} (${c.tool}): ${c.settled ? `${c.isError ? "error" : "ok"}${c.status === "interrupted" || c.status === "timed out" ? ` (${c.status})` : ""}` : "UNSETTLED"}, ${countOf(c.outputChars, "char")} shown` +
      (t && t.totalLines !== undefined
        ? `, ${countOf(t.totalLines, "line")} / ${formatBytes(t.totalBytes)} of cleaned text${t.cutLines > 0 ? ` (${countOf(t.cutLines, "over-long line")} cut)` : ""}${t.truncated ? `, truncated by ${t.truncatedBy}` : ""}`
        : ""),
  ];
  if (c.command !== undefined)
    lines.push(
      `    $ ${shownCommand(c.command)}   started ${c.startedAt}${c.endedAt ? `, ended ${c.endedAt}` : ""}${c.exitCode !== null && c.exitCode !== undefined ? `, exit ${c.exitCode}` : ""}`,
    );
  if (!c.settled) {
    // Its own output only: none said as none, so no bare "|" line reads as the start of what follows.
    const text = c.recoveredOutput ?? "";
    const lines15 = text.replace(/\n$/, "").split("\n").slice(-15);
    if (text === "") lines.push("    recovered output (last durable flush): none, nothing of its output was saved");
    else lines.push(`    recovered output (last durable flush, ${countOf(text.length, "char")}; last lines):`, ...lines15.map((l) => `    | ${l}`));
  }
  return lines.map((l) => `${l}\n`).join("");
}

/**
 * Writes the inspect report of the session `snap` holds to `out`. `deferDir`: where held-back calls go
 * once they outgrow memory (the system's temporary directory by default).
 */
export async function writeInspectReport(
  out: PacedOutput,
  entry: SessionEntry,
  snap: SessionSnapshot,
  ctx: InspectContext,
  json: boolean,
  deferDir?: string,
): Promise<void> {
  const info = runInfoOf(snap);
  const records = callRecords(snap, info);
  const body = new DeferredText(deferDir);
  try {
    let entries = 0;
    const transcript = function* () {
      for (const m of transcriptEntries(snap, INSPECT_PAGE)) {
        entries++;
        yield m;
      }
    };
    let sep = "";
    for (const calls of [settledCalls(transcript(), records, info), unsettledCalls(snap, records)]) {
      for (const c of calls) {
        if (!json) body.append(callText(reportCall(c)));
        else {
          body.append(sep + JSON.stringify(reportCall(c)));
          sep = ",";
        }
      }
    }
    const summary = summaryOf(entry, { ...sessionHeader(info, ctx.live), lastActivityAt: records.lastActivityAt }, directorySize(entry.dir));
    if (json) {
      // The document the whole view printed, key for key: {...summary, backend, dir, live, calls, spillFiles, openScopes, transcriptEntries}.
      const head = JSON.stringify({ ...summary, backend: entry.backend, dir: entry.dir, live: ctx.live });
      await out.write(`${head.slice(0, -1)},"calls":[`);
      await body.writeTo(out);
      const tail = JSON.stringify({ spillFiles: ctx.spills, openScopes: ctx.openScopes, transcriptEntries: entries });
      await out.write(`],${tail.slice(1)}\n`);
    } else {
      const head = [
        `Session ${summary.id} (${entry.backend}) — ${summary.status}${summary.exitCode !== null ? `, exit code ${summary.exitCode}` : ""}${ctx.live ? ", still running" : ""}`,
        ...(summary.reason !== undefined ? [`  reason:    ${summary.reason}`] : []),
        `  command:   ${shownCommand(summary.command)}`,
        `  started:   ${summary.startedAt || "?"}${summary.endedAt ? `   ended: ${summary.endedAt}` : ""}${summary.lastActivityAt ? `   last activity: ${summary.lastActivityAt}` : ""}`,
        `  directory: ${entry.dir} (${formatBytes(summary.bytes)})`,
        `  transcript entries: ${entries}; open scopes: ${ctx.openScopes.length ? ctx.openScopes.join(", ") : "none"}`,
      ];
      await out.write(head.map((l) => `${l}\n`).join(""));
      await body.writeTo(out);
      for (const s of ctx.spills) await out.write(`  spill: ${s.path} (${formatBytes(s.bytes)} raw)\n`);
    }
    await out.flush();
  } finally {
    body.close();
  }
}
