// What the viewer sees of a session (the `session:<id>` state) and the session list (`sessions`),
// built either live from harness events or from a session's stored log. Both paths produce the same
// shape, so the page never knows whether it watches a live run or a replay.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ToolResultMessage } from "../context/index.js";
import {
  callRecord,
  OPEN_OPERATIONS,
  readDurableOutput,
  readTranscript,
  reduceCalls,
  SESSION_RECORD,
  type CallView as HarnessCallView,
  type HarnessEvent,
  type SessionRecord,
  type SessionStatus,
} from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import type { SessionSnapshot } from "../store/index.js";

/**
 * Written by `spool run` (and `spool mcp`, `createSpool`) when it starts and when it ends: once for the
 * session (RUN_INFO: the first command and first start, the latest status and end) and once per call
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

/** A session as its log holds it: settled calls from the transcript, unsettled ones from their last durable flush. */
export function viewFromSnapshot(id: string, snap: Pick<SessionSnapshot, "get" | "readList">, live: boolean): SessionView {
  const info = snap.get(RUN_INFO) ?? { command: "(unknown)", cwd: "", pid: 0, startedAt: "", endedAt: null, status: "interrupted" as const, exitCode: null };
  const view = newSessionView(id, info);
  // A session whose writer died without recording an end was interrupted.
  if (info.status === "running" && !live) view.status = "interrupted";
  view.transcript = readTranscript(snap);
  const later = (a: string | null | undefined, b: string | null | undefined): string | null => (!b ? a : !a || Date.parse(b) > Date.parse(a) ? b : a) ?? null;
  const runOf = (callId: string): { run: RunInfo | undefined; call: CallRun | undefined } => {
    const run = snap.get(callRecord(callId));
    if (run === undefined) return { run: undefined, call: undefined };
    view.lastActivityAt = later(later(view.lastActivityAt, run.startedAt), run.endedAt);
    return { run, call: { command: run.command, startedAt: run.startedAt, endedAt: run.endedAt, exitCode: run.exitCode, status: run.status } };
  };
  // Sessions recorded before per-call records kept one call's details in the session record.
  const legacy = view.transcript.length === 1 ? info : undefined;
  for (const m of view.transcript) {
    const text = m.content.find((p) => p.type === "text");
    const { run, call } = runOf(m.toolCallId);
    view.calls.push({
      id: m.toolCallId,
      name: m.toolName ?? "",
      args: undefined,
      output: {
        content: [{ type: "text", text: text && "text" in text ? text.text : "" }],
        details: (run ?? legacy)?.details ?? (m.spillPath ? { spillPath: m.spillPath } : {}),
        terminate: false,
        truncation: (run ?? legacy)?.truncation ?? ({} as ToolOutputState["truncation"]),
      },
      ended: true,
      isError: m.isError,
      ...(call ? { run: call } : {}),
    });
  }
  const open = snap.get(OPEN_OPERATIONS) ?? {};
  for (const [opId, op] of Object.entries(open)) {
    for (const c of op.calls) {
      const { output } = readDurableOutput(snap, opId, c.toolCallId);
      const { call } = runOf(c.toolCallId);
      view.calls.push({ id: c.toolCallId, name: c.toolName, args: c.args, output, ended: false, isError: false, ...(call ? { run: call } : {}) });
    }
  }
  return view;
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
