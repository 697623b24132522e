// Pairing repair: every tool call gets exactly one result, right after the assistant message that
// made it. Positional (block-scoped), not a global id map: providers reuse ids across turns (Kimi's
// "web_fetch:0" every turn), and a global map once matched an old dangling call to a newer turn's
// result. A result is claimed only between its assistant message and the next one.
import type { AssistantMessage, AssistantPart, Message, ToolResultMessage } from "./messages.js";
import { toolResult } from "./messages.js";

export const SYNTHETIC_RESULT_TEXT =
  "[Tool result missing — the tool execution was interrupted or failed silently. " +
  "Do NOT retry this tool call. Analyze what went wrong and try a different approach.]";
export const SYNTHETIC_ERROR_CODE = "missing_result";

export interface PairingReport {
  syntheticResultsInjected: number;
  orphanResultsRemoved: number;
  duplicateToolUsePruned: number;
  resultsRelocated: number;
  missingToolUseIds: string[];
  orphanToolResultIds: string[];
  /** The orphan (or duplicate) results that were dropped, so a caller can archive their text. */
  removedResults: ToolResultMessage[];
}

export type PairingProblemKind =
  | "empty_call_id"
  | "duplicate_call_id"
  | "missing_result"
  | "orphan_result"
  | "duplicate_result"
  | "displaced_result";

export interface PairingProblem {
  readonly kind: PairingProblemKind;
  /** Index of the message the problem is about (the assistant for call problems, the tool message otherwise). */
  readonly index: number;
  readonly toolCallId: string;
}

export function emptyPairingReport(): PairingReport {
  return {
    syntheticResultsInjected: 0,
    orphanResultsRemoved: 0,
    duplicateToolUsePruned: 0,
    resultsRelocated: 0,
    missingToolUseIds: [],
    orphanToolResultIds: [],
    removedResults: [],
  };
}

export function hasRepairs(report: PairingReport): boolean {
  return (
    report.syntheticResultsInjected + report.orphanResultsRemoved + report.duplicateToolUsePruned + report.resultsRelocated > 0
  );
}

/**
 * Lists everything wrong with the pairing. Empty means the history is valid for every provider:
 * results adjacent to their block in a different order than the calls are valid.
 */
export function validatePairing(messages: readonly Message[]): PairingProblem[] {
  const problems: PairingProblem[] = [];
  const consumed = new Uint8Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const ids = new Set<string>();
    let calls = 0;
    for (const part of message.content) {
      if (part.type !== "toolCall") continue;
      calls++;
      if (part.id === "") problems.push({ kind: "empty_call_id", index: i, toolCallId: "" });
      else if (ids.has(part.id)) problems.push({ kind: "duplicate_call_id", index: i, toolCallId: part.id });
      else ids.add(part.id);
    }
    if (calls === 0) continue;
    const answered = new Set<string>();
    let j = i + 1;
    for (; j < messages.length; j++) {
      const next = messages[j]!;
      if (next.role !== "tool") break;
      consumed[j] = 1;
      if (!ids.has(next.toolCallId)) problems.push({ kind: "orphan_result", index: j, toolCallId: next.toolCallId });
      else if (answered.has(next.toolCallId)) problems.push({ kind: "duplicate_result", index: j, toolCallId: next.toolCallId });
      else answered.add(next.toolCallId);
    }
    for (const id of ids) {
      if (answered.has(id)) continue;
      const late = findDisplaced(messages, j, id);
      if (late >= 0) {
        consumed[late] = 1;
        problems.push({ kind: "displaced_result", index: late, toolCallId: id });
      } else problems.push({ kind: "missing_result", index: i, toolCallId: id });
    }
  }
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool" && consumed[i] === 0) problems.push({ kind: "orphan_result", index: i, toolCallId: message.toolCallId });
  }
  return problems;
}

/** A result for `id` after interposed non-tool messages but before the next assistant message. */
function findDisplaced(messages: readonly Message[], from: number, id: string): number {
  for (let k = from; k < messages.length; k++) {
    const m = messages[k]!;
    if (m.role === "assistant") return -1;
    if (m.role === "tool" && m.toolCallId === id) return k;
  }
  return -1;
}

/** The allocation-free check behind the fast path. */
function needsRepair(messages: readonly Message[]): boolean {
  let i = 0;
  while (i < messages.length) {
    const message = messages[i]!;
    if (message.role === "tool") return true;
    i++;
    if (message.role !== "assistant") continue;
    let calls = 0;
    for (const part of message.content) {
      if (part.type !== "toolCall") continue;
      if (part.id === "") return true;
      calls++;
    }
    if (calls === 0) continue;
    if (calls > 1 && hasDuplicateCallIds(message)) return true;
    let results = 0;
    while (i < messages.length && messages[i]!.role === "tool") {
      const result = messages[i] as ToolResultMessage;
      results++;
      if (results > calls || !callsInclude(message, result.toolCallId)) return true;
      for (let k = i - results + 1; k < i; k++) if ((messages[k] as ToolResultMessage).toolCallId === result.toolCallId) return true;
      i++;
    }
    if (results !== calls) return true;
  }
  return false;
}

function hasDuplicateCallIds(message: AssistantMessage): boolean {
  const seen = new Set<string>();
  for (const part of message.content) {
    if (part.type !== "toolCall") continue;
    if (seen.has(part.id)) return true;
    seen.add(part.id);
  }
  return false;
}

function callsInclude(message: AssistantMessage, id: string): boolean {
  for (const part of message.content) if (part.type === "toolCall" && part.id === id) return true;
  return false;
}

/**
 * Repairs pairing. Returns the same array (and an empty report) when nothing is wrong; otherwise a new
 * array — the input is never mutated. Idempotent: a second pass over the output reports no repairs.
 */
export function ensureToolResultPairing(messages: readonly Message[]): { messages: readonly Message[]; report: PairingReport } {
  const report = emptyPairingReport();
  if (messages.length === 0 || !needsRepair(messages)) return { messages, report };

  const out: Message[] = [];
  const claimed = new Uint8Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool") {
      if (claimed[i] === 1) continue;
      report.orphanResultsRemoved++;
      report.orphanToolResultIds.push(message.toolCallId);
      report.removedResults.push(message);
      continue;
    }
    if (message.role !== "assistant" || !hasAnyCall(message)) {
      out.push(message);
      continue;
    }
    const pruned = pruneInvalidCalls(message, report);
    out.push(pruned);
    const calls = pruned.content.filter((p): p is Extract<AssistantPart, { type: "toolCall" }> => p.type === "toolCall");
    if (calls.length === 0) continue;

    const wanted = new Map<string, { index: number; relocated: boolean }>();
    for (const call of calls) wanted.set(call.id, { index: -1, relocated: false });
    let interposed = false;
    for (let j = i + 1; j < messages.length; j++) {
      const next = messages[j]!;
      if (next.role === "assistant") break;
      if (next.role !== "tool") {
        interposed = true;
        continue;
      }
      const slot = wanted.get(next.toolCallId);
      if (next.toolCallId === "" || slot === undefined || slot.index >= 0) continue;
      slot.index = j;
      slot.relocated = interposed;
      claimed[j] = 1;
    }
    for (const call of calls) {
      const slot = wanted.get(call.id)!;
      if (slot.index >= 0) {
        if (slot.relocated) report.resultsRelocated++;
        out.push(messages[slot.index]!);
      } else {
        report.syntheticResultsInjected++;
        report.missingToolUseIds.push(call.id);
        out.push(toolResult(call.id, SYNTHETIC_RESULT_TEXT, { isError: true, errorCode: SYNTHETIC_ERROR_CODE, toolName: call.name }));
      }
    }
  }
  if (!hasRepairs(report)) return { messages, report: emptyPairingReport() };
  return { messages: out, report };
}

function hasAnyCall(message: AssistantMessage): boolean {
  for (const part of message.content) if (part.type === "toolCall") return true;
  return false;
}

/** Drops calls with an empty id and later calls repeating an id within the same message (first wins). */
function pruneInvalidCalls(message: AssistantMessage, report: PairingReport): AssistantMessage {
  const seen = new Set<string>();
  let dropped = 0;
  const content: AssistantPart[] = [];
  for (const part of message.content) {
    if (part.type === "toolCall") {
      if (part.id === "" || seen.has(part.id)) {
        dropped++;
        continue;
      }
      seen.add(part.id);
    }
    content.push(part);
  }
  if (dropped === 0) return message;
  report.duplicateToolUsePruned += dropped;
  return { ...message, content };
}

/** Calls of the last assistant message with calls that have no result after it (the batch still open). */
export function countPendingToolCalls(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "assistant" || !hasAnyCall(message)) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length; j++) {
      const m = messages[j]!;
      if (m.role === "tool") answered.add(m.toolCallId);
    }
    let pending = 0;
    for (const part of message.content) if (part.type === "toolCall" && !answered.has(part.id)) pending++;
    return pending;
  }
  return 0;
}
