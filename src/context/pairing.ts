// Pairing repair: every tool call gets exactly one result, right after the assistant message that
// made it. Positional (block-scoped), not a global id map: providers reuse ids across turns (Kimi's
// "web_fetch:0" every turn), and a global map once matched an old dangling call to a newer turn's
// result. A result is claimed only between its assistant message and the next one.
// A repair touches only the turn that is broken: every other turn is copied message for message, so
// its provider bytes (and the prompt cache behind them) stay the same.
// Two calls with one id in one assistant message (models and proxies emit it; every provider rejects
// it, Anthropic with "tool_use ids must be unique") are two calls: the first keeps the id, each later
// one is renamed `<id>_2`, `<id>_3`, … (the first name nothing in the history uses), and the turn's
// results with that id answer them in order — a third result is a duplicate, a call left over gets the
// missing-result answer. Dropping the second call, as this did first, took its input out of the history
// and its output out of the model's sight, with no marker to read it back.
import { archiveKey, formatMarker } from "./archive-key.js";
import { freshCallId } from "./fresh-call-id.js";
import type { IdRewrite } from "./id-collisions.js";
import { lateResult } from "./late-result.js";
import type { AssistantMessage, AssistantPart, Message, ToolCallPart, ToolResultMessage, UserMessage } from "./messages.js";
import { textOf, toolResult } from "./messages.js";

export const SYNTHETIC_RESULT_TEXT =
  "[Tool result missing — the tool execution was interrupted or failed silently. " +
  "Do NOT retry this tool call. Analyze what went wrong and try a different approach.]";
export const SYNTHETIC_ERROR_CODE = "missing_result";

export interface PairingReport {
  /** Calls that had no result anywhere: answered with SYNTHETIC_RESULT_TEXT. */
  syntheticResultsInjected: number;
  /** Results whose id matches no call of their turn. */
  orphanResultsRemoved: number;
  /** Second (third, …) results for a call that already has one. */
  duplicateResultsRemoved: number;
  /** Calls with an empty id, dropped (a repeated id is renamed instead: callIdsRenamed). */
  duplicateToolUsePruned: number;
  resultsRelocated: number;
  /** Results that came after the next assistant message: removed, and their call told where the text is. */
  lateResults: number;
  /**
   * User messages kept where removed results were the only thing between two assistant messages (or
   * before the first), so a removal never leaves two assistant messages in a row (removedResultsNote).
   */
  placeholdersInserted: number;
  missingToolUseIds: string[];
  orphanToolResultIds: string[];
  duplicateResultIds: string[];
  lateResultIds: string[];
  /**
   * Calls that repeated an id earlier in their own message, renamed with the result that answers them
   * (the n-th result with the id answers the n-th call); `index` is the assistant message in the output.
   */
  callIdsRenamed: IdRewrite[];
  /** Every result that was dropped (orphan, duplicate or late), so a caller can archive its text. Late results' markers point at it. */
  removedResults: ToolResultMessage[];
}

export type PairingProblemKind = "empty_call_id" | "duplicate_call_id" | "missing_result" | "orphan_result" | "duplicate_result" | "displaced_result";

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
    duplicateResultsRemoved: 0,
    duplicateToolUsePruned: 0,
    resultsRelocated: 0,
    lateResults: 0,
    placeholdersInserted: 0,
    missingToolUseIds: [],
    orphanToolResultIds: [],
    duplicateResultIds: [],
    lateResultIds: [],
    callIdsRenamed: [],
    removedResults: [],
  };
}

export interface PairingOptions {
  /**
   * Calls may live outside the history, kept by the provider: an OpenAI Responses request that
   * continues a stored response (`previous_response_id`, `conversation`) or names earlier items by
   * `item_reference` sends outputs whose calls are not in its `input`. A result whose id no call before
   * it made is then kept where it is, untouched, instead of being removed as an orphan.
   */
  readonly externalCalls?: boolean;
}

/** Where each call id is first called (assistant message index). */
function firstCalls(messages: readonly Message[]): Map<string, number> {
  const first = new Map<string, number>();
  messages.forEach((m, i) => {
    if (m.role !== "assistant") return;
    for (const part of m.content) if (part.type === "toolCall" && !first.has(part.id)) first.set(part.id, i);
  });
  return first;
}

export function hasRepairs(report: PairingReport): boolean {
  return (
    report.syntheticResultsInjected +
      report.orphanResultsRemoved +
      report.duplicateResultsRemoved +
      report.duplicateToolUsePruned +
      report.resultsRelocated +
      report.lateResults +
      report.callIdsRenamed.length >
    0
  );
}

/**
 * Lists everything wrong with the pairing. Empty means the history is valid for every provider:
 * results adjacent to their block in a different order than the calls are valid.
 */
export function validatePairing(messages: readonly Message[], options: PairingOptions = {}): PairingProblem[] {
  const problems: PairingProblem[] = [];
  const first = options.externalCalls === true ? firstCalls(messages) : undefined;
  /** A result answering a call kept by the provider (no call before it in the history). */
  const external = (index: number, id: string): boolean => first !== undefined && id !== "" && !((first.get(id) ?? Infinity) < index);
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
      if (next.carried === true) continue;
      if (external(j, next.toolCallId)) continue;
      if (!ids.has(next.toolCallId)) problems.push({ kind: "orphan_result", index: j, toolCallId: next.toolCallId });
      else if (answered.has(next.toolCallId)) problems.push({ kind: "duplicate_result", index: j, toolCallId: next.toolCallId });
      else answered.add(next.toolCallId);
    }
    const open = j === messages.length;
    for (const id of ids) {
      if (answered.has(id)) continue;
      if (open && awaitsApproval(message, id)) continue;
      const late = findDisplaced(messages, j, id);
      if (late >= 0) {
        consumed[late] = 1;
        problems.push({ kind: "displaced_result", index: late, toolCallId: id });
      } else problems.push({ kind: "missing_result", index: i, toolCallId: id });
    }
  }
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool" && consumed[i] === 0 && message.carried !== true && !external(i, message.toolCallId))
      problems.push({ kind: "orphan_result", index: i, toolCallId: message.toolCallId });
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

interface Block {
  readonly index: number;
  /** The assistant message, with empty call ids pruned and repeated ones renamed. */
  readonly message: AssistantMessage;
  readonly calls: readonly ToolCallPart[];
  /** Calls renamed in this message (a repeated id), in call order. */
  readonly renames: readonly { readonly from: string; readonly to: string }[];
  /** Indexes of the claimed results, in the order they appear. */
  readonly results: number[];
  /** Claimed result index → the renamed call it answers. */
  readonly renamedResults: Map<number, string>;
  readonly missing: string[];
  /** True when the assistant message and its adjacent results are already valid: they are copied as they are. */
  intact: boolean;
  /** Missing call id → index of its late result, found after the next assistant message. */
  readonly late: Map<string, number>;
}

/**
 * Repairs pairing. Returns the same array (and an empty report) when nothing is wrong; otherwise a new
 * array — the input is never mutated. Only a broken turn is rebuilt: a valid turn (including results
 * adjacent to their calls in another order, as clients write parallel results in the order they
 * finish) is copied message for message, so its provider bytes do not change. Idempotent: a second
 * pass over the output reports no repairs and returns the same array.
 */
export function ensureToolResultPairing(messages: readonly Message[], options: PairingOptions = {}): { messages: readonly Message[]; report: PairingReport } {
  const report = emptyPairingReport();
  if (messages.length === 0 || !needsRepair(messages)) return { messages, report };

  // Pass 1: which results each turn claims (positionally: only up to the next assistant message).
  const blocks = new Map<number, Block>();
  /** Call id → the turns that made a call with it, in order. */
  const callers = new Map<string, Block[]>();
  const claimed = new Uint8Array(messages.length);
  /** For each unclaimed result: the block whose range it lies in, if any. */
  const governing = new Int32Array(messages.length).fill(-1);
  /** Results answering a call kept by the provider (PairingOptions.externalCalls): left where they are. */
  const kept = new Uint8Array(messages.length);
  const external = (id: string): boolean => options.externalCalls === true && id !== "" && !callers.has(id);
  const names: CallNames = { messages, nextSuffix: new Map() };
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "assistant" || !hasAnyCall(message)) continue;
    const { message: pruned, renames } = uniqueCalls(message, report, names);
    const calls = pruned.content.filter((p): p is ToolCallPart => p.type === "toolCall");
    const block: Block = {
      index: i,
      message: pruned,
      calls,
      renames,
      results: [],
      renamedResults: new Map(),
      missing: [],
      intact: pruned === message,
      late: new Map(),
    };
    blocks.set(i, block);
    for (const call of calls) {
      const list = callers.get(call.id);
      if (list === undefined) callers.set(call.id, [block]);
      else list.push(block);
    }
    /** The id a result carries → the calls it may answer, in call order (more than one when the id was repeated). */
    const wanted = new Map<string, string[]>();
    for (const call of calls) wanted.set(call.id, [call.id]);
    for (const { from, to } of renames) wanted.get(from)!.push(to);
    const answered = new Set<string>();
    let adjacent = true;
    let j = i + 1;
    for (; j < messages.length; j++) {
      const next = messages[j]!;
      if (next.role === "assistant") break;
      if (next.role !== "tool") {
        adjacent = false;
        continue;
      }
      governing[j] = i;
      if (next.carried === true) {
        // an approval response: it travels with the turn's results when it is among them, else stays put
        if (adjacent) {
          claimed[j] = 1;
          block.results.push(j);
        } else kept[j] = 1;
        continue;
      }
      if (!wanted.has(next.toolCallId) && external(next.toolCallId)) {
        kept[j] = 1;
        continue;
      }
      const answers = next.toolCallId === "" ? undefined : wanted.get(next.toolCallId)?.find((id) => !answered.has(id));
      if (answers === undefined) {
        if (adjacent) block.intact = false;
        continue;
      }
      answered.add(answers);
      claimed[j] = 1;
      block.results.push(j);
      if (answers !== next.toolCallId) block.renamedResults.set(j, answers);
      if (!adjacent) {
        block.intact = false;
        report.resultsRelocated++;
      }
    }
    // a call awaiting approval at the end of the history (only tool messages after it) has no result yet, rightly
    const open = adjacent && j === messages.length;
    for (const call of calls) if (!answered.has(call.id) && !(open && call.approvalRequested === true)) block.missing.push(call.id);
    if (block.missing.length > 0 || calls.length === 0) block.intact = false;
  }

  // Unclaimed results: a late answer to an earlier turn's missing call, a duplicate, or an orphan.
  for (let k = 0; k < messages.length; k++) {
    const message = messages[k]!;
    if (message.role !== "tool" || claimed[k] === 1) continue;
    if (
      kept[k] === 1 ||
      message.carried === true ||
      (options.externalCalls === true && message.toolCallId !== "" && !firstCallBefore(callers, message.toolCallId, k))
    ) {
      kept[k] = 1;
      continue;
    }
    report.removedResults.push(message);
    const owner = governing[k]! >= 0 ? blocks.get(governing[k]!) : undefined;
    if (owner !== undefined && owner.calls.some((c) => c.id === message.toolCallId)) {
      report.duplicateResultsRemoved++;
      report.duplicateResultIds.push(message.toolCallId);
      continue;
    }
    const lateFor = lateTarget(callers, k, message.toolCallId);
    if (lateFor !== undefined) {
      lateFor.late.set(message.toolCallId, k);
      report.lateResults++;
      report.lateResultIds.push(message.toolCallId);
      continue;
    }
    report.orphanResultsRemoved++;
    report.orphanToolResultIds.push(message.toolCallId);
  }

  // Pass 2: copy intact turns, rebuild broken ones (their results first, then what was interposed).
  const out: Message[] = [];
  let joinNextUser = false;
  /** Results removed since the last message written: if only they stood between two assistant messages, a note stays in their place. */
  let gap: { message: ToolResultMessage; late: boolean }[] = [];
  const lateIndexes = new Set<number>();
  for (const block of blocks.values()) for (const k of block.late.values()) lateIndexes.add(k);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool") {
      // an intact turn's results stay where they are, among any kept output between them
      if (kept[i] === 1 || (claimed[i] === 1 && blocks.get(governing[i]!)?.intact === true)) out.push(message);
      else if (claimed[i] === 0) gap.push({ message, late: lateIndexes.has(i) });
      continue;
    }
    if (message.role === "assistant" && gap.length > 0) {
      const previous = lastNonSystem(out);
      if (previous === undefined || previous.role === "assistant") {
        out.push(removedResultsNote(gap));
        report.placeholdersInserted++;
      }
    }
    gap = [];
    const block = blocks.get(i);
    if (block === undefined) {
      if (joinNextUser && message.role === "user" && message.extra === undefined && message.hints?.joined !== true) {
        // A broken turn's results now open the user message; the user's own text belongs in it, after them.
        out.push({ ...message, hints: { ...message.hints, joined: true } });
      } else out.push(message);
      joinNextUser = false;
      continue;
    }
    joinNextUser = false;
    if (block.intact) {
      out.push(message);
      continue;
    }
    for (const { from, to } of block.renames) report.callIdsRenamed.push({ from, to, index: out.length });
    out.push(block.message);
    const found: ToolResultMessage[] = block.results.map((k) => {
      const result = messages[k] as ToolResultMessage;
      const to = block.renamedResults.get(k);
      return to === undefined ? result : { ...result, toolCallId: to };
    });
    const answers: ToolResultMessage[] = [];
    for (const call of block.calls) {
      if (!block.missing.includes(call.id)) continue;
      const late = block.late.get(call.id);
      if (late !== undefined) answers.push(lateResult(call, messages[late] as ToolResultMessage));
      else {
        report.syntheticResultsInjected++;
        report.missingToolUseIds.push(call.id);
        answers.push(toolResult(call.id, SYNTHETIC_RESULT_TEXT, { isError: true, errorCode: SYNTHETIC_ERROR_CODE, toolName: call.name }));
      }
    }
    const results = inCallOrder(block.calls, found, answers);
    results.forEach((result, n) => out.push(rejoined(result, n > 0)));
    joinNextUser = results.length > 0;
  }
  if (!hasRepairs(report)) return { messages, report: emptyPairingReport() };
  return { messages: out, report };
}

/**
 * A rebuilt turn's results: the ones it had, in the order they had (clients write parallel results in
 * the order they finish), with each answer spool made (a synthetic or moved late result, `answers`, in
 * call order) placed before the first result of a later call. When the turn's own results follow the
 * calls, so does the whole list: calls A, B, C with only B answered read A (synthetic), B, C
 * (synthetic). Before, the made answers all came last (B, A, C), which an adapter that pairs results
 * with calls by position (some Bedrock and Gemini ones) misreads. A carried part (an approval
 * response) belongs to no call and keeps its place among the turn's results.
 */
function inCallOrder(calls: readonly ToolCallPart[], found: readonly ToolResultMessage[], answers: readonly ToolResultMessage[]): ToolResultMessage[] {
  if (answers.length === 0) return [...found];
  const position = new Map<string, number>();
  calls.forEach((call, n) => position.set(call.id, n));
  const out: ToolResultMessage[] = [];
  let next = 0;
  for (const result of found) {
    const at = result.carried === true ? undefined : position.get(result.toolCallId);
    while (at !== undefined && next < answers.length && position.get(answers[next]!.toolCallId)! < at) out.push(answers[next++]!);
    out.push(result);
  }
  while (next < answers.length) out.push(answers[next++]!);
  return out;
}

function awaitsApproval(message: AssistantMessage, id: string): boolean {
  for (const part of message.content) if (part.type === "toolCall" && part.id === id && part.approvalRequested === true) return true;
  return false;
}

function firstCallBefore(callers: ReadonlyMap<string, readonly Block[]>, id: string, at: number): boolean {
  return callers.get(id)?.some((b) => b.index < at) ?? false;
}

function lastNonSystem(out: readonly Message[]): Message | undefined {
  for (let i = out.length - 1; i >= 0; i--) if (out[i]!.role !== "system") return out[i];
  return undefined;
}

/**
 * What stays where removed results were the only thing between two assistant messages (or before the
 * first one): a user message naming them, so the roles still alternate (Anthropic rejects two assistant
 * messages in a row) and the model can still read a removed text (prepareHistory archives every removed
 * result under the key of its text). A late result is answered at its call; this only says it moved.
 */
export function removedResultsNote(removed: readonly { message: ToolResultMessage; late: boolean }[]): UserMessage {
  const items = removed.map(({ message, late }) => {
    const id = message.toolCallId === "" ? "with no call id" : `for call ${message.toolCallId}`;
    if (late) return `the result ${id} arrived late and was moved next to its call`;
    const text = textOf(message);
    const where = text === "" ? "it was empty" : `recall ${formatMarker(archiveKey(text))} reads it`;
    return `a result ${id} answered no tool call before it and was removed (${where})`;
  });
  return {
    role: "user",
    content: [{ type: "text", text: `[Tool results that stood here were taken out to keep calls and results paired: ${items.join("; ")}.]` }],
    hints: { content: "string" },
  };
}

/** The nearest earlier turn that called `id` and got no result for it (and has not been given a late one yet). */
function lateTarget(callers: ReadonlyMap<string, readonly Block[]>, at: number, id: string): Block | undefined {
  const list = callers.get(id);
  if (list === undefined) return undefined;
  let best: Block | undefined;
  for (let n = list.length - 1; n >= 0; n--) {
    if (list[n]!.index < at) {
      best = list[n];
      break;
    }
  }
  if (best === undefined || !best.missing.includes(id) || best.late.has(id)) return undefined;
  return best;
}

/** A result in a rebuilt turn: the first opens the envelope after the assistant message, the rest share it. */
function rejoined(result: ToolResultMessage, joined: boolean): ToolResultMessage {
  const hints = result.hints;
  if (joined ? hints?.joined === true : hints?.joined === undefined) return result;
  const { joined: _joined, ...rest } = hints ?? {};
  const next: ToolResultMessage = joined ? { ...result, hints: { ...rest, joined: true } } : { ...result, hints: rest };
  if (!joined && Object.keys(rest).length === 0) {
    const { hints: _h, ...bare } = next;
    return bare as ToolResultMessage;
  }
  return next;
}

function hasAnyCall(message: AssistantMessage): boolean {
  for (const part of message.content) if (part.type === "toolCall") return true;
  return false;
}

/** What renaming a repeated call id needs: every id of the history (gathered on the first rename) and the next suffix per id. */
interface CallNames {
  readonly messages: readonly Message[];
  taken?: Set<string>;
  readonly nextSuffix: Map<string, number>;
}

/** Every call and result id of the history: a new name must answer no other call and claim no other result. */
function takenIds(messages: readonly Message[]): Set<string> {
  const taken = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") taken.add(m.toolCallId);
    else if (m.role === "assistant") for (const part of m.content) if (part.type === "toolCall") taken.add(part.id);
  }
  return taken;
}

/**
 * Drops calls with an empty id (nothing can answer them by id) and renames later calls repeating an
 * id within the same message (the first keeps it), deterministically: the same history gets the same names.
 */
function uniqueCalls(
  message: AssistantMessage,
  report: PairingReport,
  names: CallNames,
): { message: AssistantMessage; renames: { from: string; to: string }[] } {
  const seen = new Set<string>();
  let dropped = 0;
  const renames: { from: string; to: string }[] = [];
  const content: AssistantPart[] = [];
  for (const part of message.content) {
    if (part.type !== "toolCall") {
      content.push(part);
      continue;
    }
    if (part.id === "") {
      dropped++;
      continue;
    }
    if (!seen.has(part.id)) {
      seen.add(part.id);
      content.push(part);
      continue;
    }
    const taken = (names.taken ??= takenIds(names.messages));
    const to = freshCallId(part.id, taken, names.nextSuffix);
    taken.add(to);
    renames.push({ from: part.id, to });
    // an AI SDK approval request names the id, so it stays with the first call; the renamed one waits for nothing
    const { approvalRequested: _approval, ...renamed } = part;
    content.push({ ...renamed, id: to });
  }
  if (dropped === 0 && renames.length === 0) return { message, renames };
  report.duplicateToolUsePruned += dropped;
  return { message: { ...message, content }, renames };
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
