// What the viewer sees of a session (the `session:<id>` state) and the session list (`sessions`),
// built either live from harness events or from a session's stored log. Both paths produce the same
// shape, so the page never knows whether it watches a live run or a replay.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ToolResultMessage } from "../context/index.js";
import {
  callRecord,
  endReason,
  OPEN_OPERATIONS,
  readDurableOutput,
  readTranscript,
  reduceCalls,
  SESSION_RECORD,
  type CallView as HarnessCallView,
  type HarnessEvent,
  type SessionRecord,
  type SessionStatus,
  type ToolCall,
} from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import type { SessionSnapshot } from "../store/index.js";

/**
 * Written by `spool run` (and `spool mcp`, `createSpool`) when it starts and when it ends: once for the
 * session (RUN_INFO: the first start, the latest command with its status and end) and once per call
 * (the harness's callRecord: that call's own command, times, exit, truncation and details).
 */
export type RunInfo = SessionRecord;
export type { SessionStatus };
export const RUN_INFO = SESSION_RECORD;

/** What one call's run recorded, shown next to the call. */
export interface CallRun {
  command: string;
  startedAt: string;
  endedAt: string | null;
  exitCode: number | null;
  status: SessionStatus;
}

/** A call as the session view holds it: the harness's call fold, with its output typed. */
export interface CallView extends HarnessCallView {
  output: ToolOutputState | undefined;
  run?: CallRun;
}

export interface SessionView {
  id: string;
  command: string;
  status: SessionStatus;
  /** Why it ended so, when its caller said (one line, at most 300 chars). */
  reason?: string;
  exitCode: number | null;
  startedAt: string;
  endedAt: string | null;
  /** The latest start or end of any call (the session's first start is `startedAt`). */
  lastActivityAt?: string | null;
  calls: CallView[];
  transcript: ToolResultMessage[];
}

export interface SessionSummary {
  id: string;
  command: string;
  status: SessionStatus;
  /** Why it ended so, when its caller said (createSpool's close({ error })): one line, at most 300 chars. */
  reason?: string;
  startedAt: string;
  endedAt: string | null;
  /** The latest start or end of any call, when the session records its calls (`spool run`). */
  lastActivityAt?: string | null;
  exitCode: number | null;
  bytes: number;
}

export function newSessionView(id: string, info: RunInfo): SessionView {
  return {
    id,
    command: info.command,
    status: info.status,
    ...reasonOf(info),
    exitCode: info.exitCode,
    startedAt: info.startedAt,
    endedAt: info.endedAt,
    lastActivityAt: info.endedAt ?? info.startedAt,
    calls: [],
    transcript: [],
  };
}

/** Fold one harness event into a view (by mutation: it runs under a tracked state). */
export function reduceSessionView(view: SessionView, event: HarnessEvent): void {
  reduceCalls(view.calls, event);
}

/** What the view shows of a session whose log holds no session record. */
const UNKNOWN_RUN: RunInfo = { command: "(unknown)", cwd: "", pid: 0, startedAt: "", endedAt: null, status: "interrupted", exitCode: null };

/** The session's record as the view reads it (a stand-in when there is none). */
export function runInfoOf(snap: Pick<SessionSnapshot, "get">): RunInfo {
  return snap.get(RUN_INFO) ?? UNKNOWN_RUN;
}

/** The session's own fields of the view, from its record. */
export function sessionHeader(info: RunInfo, live: boolean): Pick<SessionView, "command" | "status" | "reason" | "exitCode" | "startedAt" | "endedAt"> {
  return {
    command: info.command,
    // A session whose writer died without recording an end was interrupted.
    status: info.status === "running" && !live ? "interrupted" : info.status,
    ...reasonOf(info),
    exitCode: info.exitCode,
    startedAt: info.startedAt,
    endedAt: info.endedAt,
  };
}

/**
 * The record's reason, cleaned again as it is read (a log written by hand or by another program may
 * hold anything there, and `spool inspect` prints it to a terminal); absent, not undefined, when there
 * is none, so `--json` documents keep the keys they had.
 */
function reasonOf(info: RunInfo): { reason?: string } {
  const reason = typeof info.reason === "string" ? endReason(info.reason) : undefined;
  return reason !== undefined ? { reason } : {};
}

/** The later of two times (`b` when `a` is unset; `a` when `b` is unset or not later). */
function later(a: string | null | undefined, b: string | null | undefined): string | null {
  return (!b ? a : !a || Date.parse(b) > Date.parse(a) ? b : a) ?? null;
}

/** A call's record folded into the session's latest activity. */
export function laterRun(at: string | null | undefined, run: Pick<RunInfo, "startedAt" | "endedAt"> | undefined): string | null | undefined {
  return run === undefined ? at : later(later(at, run.startedAt), run.endedAt);
}

/** What the view shows of a call's own record. */
export function callRun(run: RunInfo): CallRun {
  return { command: run.command, startedAt: run.startedAt, endedAt: run.endedAt, exitCode: run.exitCode, status: run.status };
}

/**
 * A settled call: its transcript entry, with details and truncation from its record, or from `legacy`
 * (the session's record, for a session of one call recorded before per-call records).
 */
export function settledCall(m: ToolResultMessage, run: RunInfo | undefined, legacy: RunInfo | undefined): CallView {
  const text = m.content.find((p) => p.type === "text");
  const source = run ?? legacy;
  return {
    id: m.toolCallId,
    name: m.toolName ?? "",
    args: undefined,
    output: {
      content: [{ type: "text", text: text && "text" in text ? text.text : "" }],
      details: source?.details ?? (m.spillPath ? { spillPath: m.spillPath } : {}),
      terminate: false,
      truncation: source?.truncation ?? ({} as ToolOutputState["truncation"]),
    },
    ended: true,
    isError: m.isError,
    ...(run ? { run: callRun(run) } : {}),
  };
}

/** A call still running, with its output as of its last durable flush. */
export function openCall(c: ToolCall, output: ToolOutputState | undefined, run: RunInfo | undefined): CallView {
  return { id: c.toolCallId, name: c.toolName, args: c.args, output, ended: false, isError: false, ...(run ? { run: callRun(run) } : {}) };
}

/** Reads calls' records, folding each into the session's latest activity as it goes. */
export interface CallRecords {
  record(callId: string): RunInfo | undefined;
  /** The latest start or end read so far; before any record, the session's own end (or start). */
  readonly lastActivityAt: string | null | undefined;
}

export function callRecords(snap: Pick<SessionSnapshot, "get">, info: RunInfo): CallRecords {
  let at: string | null | undefined = info.endedAt ?? info.startedAt;
  return {
    record(callId) {
      const run = snap.get(callRecord(callId));
      at = laterRun(at, run);
      return run;
    },
    get lastActivityAt() {
      return at;
    },
  };
}

/**
 * The settled calls of `transcript` (an array, or entries read page by page), each with its record.
 * Sessions recorded before per-call records kept one call's details in the session record (`info`):
 * a transcript of one entry takes them from there, known once a second entry is read or is not there.
 */
export function* settledCalls(transcript: Iterable<ToolResultMessage>, records: CallRecords, info: RunInfo): Generator<CallView, void, undefined> {
  const entries = transcript[Symbol.iterator]();
  const first = entries.next();
  if (first.done) return;
  let next = entries.next();
  yield settledCall(first.value, records.record(first.value.toolCallId), next.done ? info : undefined);
  for (; !next.done; next = entries.next()) yield settledCall(next.value, records.record(next.value.toolCallId), undefined);
}

/** The calls still running (or that never settled), each with its output as of its last durable flush. */
export function* unsettledCalls(snap: Pick<SessionSnapshot, "get" | "readList">, records: CallRecords): Generator<CallView, void, undefined> {
  for (const [opId, op] of Object.entries(snap.get(OPEN_OPERATIONS) ?? {})) {
    for (const c of op.calls) yield openCall(c, readDurableOutput(snap, opId, c.toolCallId).output, records.record(c.toolCallId));
  }
}

/**
 * A session as its log holds it: settled calls from the transcript, unsettled ones from their last
 * durable flush. Reads all of it; a followed session keeps its view current with followView instead.
 */
export function viewFromSnapshot(id: string, snap: Pick<SessionSnapshot, "get" | "readList">, live: boolean): SessionView {
  const info = runInfoOf(snap);
  const transcript = readTranscript(snap);
  const records = callRecords(snap, info);
  const calls = [...settledCalls(transcript, records, info), ...unsettledCalls(snap, records)];
  return { id, ...sessionHeader(info, live), lastActivityAt: records.lastActivityAt, calls, transcript };
}

export function directorySize(dir: string): number {
  let total = 0;
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += directorySize(p);
    else if (e.isFile()) {
      try {
        total += statSync(p).size;
      } catch {
        // removed while we looked: not ours to count
      }
    }
  }
  return total;
}
