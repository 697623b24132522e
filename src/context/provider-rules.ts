// The rules each provider API enforces on tool calls and roles — the ones spool may break while
// editing a history or must repair — checked on the exact wire form an adapter produces. Spool's own
// pairing check (validatePairing) is format-neutral and narrower; this is the judge of "would the API
// take it". prepareHistory runs it as a debug assertion (see PrepareOptions.format/assertValid) and
// the tests run it after every prepareHistory.
import { adapters, type Format } from "./adapters/index.js";
import { isRecord, type Json } from "./adapters/shape.js";
import type { Message } from "./messages.js";

export type ProviderRule =
  /** Anthropic: a tool_use id appears once in the whole request (else 400 "tool_use ids must be unique"). */
  | "unique_call_ids"
  /**
   * Anthropic: user and assistant messages alternate; the system prompt is not a message. (The API
   * combines consecutive user messages into one turn; spool flags them all the same, and only must not add any.)
   */
  | "roles_alternate"
  /** Anthropic: in a user turn (consecutive user messages combined, as the API does), every tool_result block comes before any other block. */
  | "results_first"
  /** Every call is answered exactly once, in the place the API looks (next message / following tool messages / later item). */
  | "call_answered_once"
  /** Every result answers a call that comes before it (in the place the API looks). */
  | "result_has_call";

export interface ProviderProblem {
  readonly rule: ProviderRule;
  readonly message: string;
}

/** Everything `format`'s API would reject about the tool calls and roles of `messages`, in that format's wire shape. Empty = accepted. */
export interface ProviderRuleOptions {
  /**
   * OpenAI Responses: the request continues state the provider keeps (`previous_response_id`,
   * `conversation`, `item_reference`), so an output may answer a call that is not in `input`: an
   * output whose call_id no earlier item called is accepted (see continuesServerState).
   */
  readonly externalCalls?: boolean;
}

export function validateForProvider(messages: readonly Message[], format: Format, options: ProviderRuleOptions = {}): ProviderProblem[] {
  return validateWire(adapters[format].toProvider(messages), format, options);
}

export function validateWire(wire: readonly unknown[], format: Format, options: ProviderRuleOptions = {}): ProviderProblem[] {
  switch (format) {
    case "anthropic":
      return anthropicRules(wire);
    case "openai-chat":
      return chatRules(wire);
    case "openai-responses":
      return responsesRules(wire, options.externalCalls === true);
    case "ai-sdk":
      return aiSdkRules(wire);
  }
}

function blocksOf(m: Json): Json[] {
  return Array.isArray(m["content"]) ? m["content"].filter(isRecord) : [];
}

function anthropicRules(wire: readonly unknown[]): ProviderProblem[] {
  const problems: ProviderProblem[] = [];
  const ids = new Map<string, number>();
  const messages = wire.filter(isRecord);
  /**
   * The turns the API sees: it combines consecutive user messages into one turn (Claude Code sends each
   * parallel result in its own user message), so calls and results are judged per turn, not per message.
   */
  const turns: { role: unknown; first: number; blocks: { block: Json; at: string }[] }[] = [];
  messages.forEach((m, i) => {
    const role = m["role"];
    const blocks = blocksOf(m).map((block, j) => ({ block, at: `messages.${i}.content.${j}` }));
    // spool's conversation files may open with the system prompt as a message; a caller lifts it into `system`
    if (i === 0 && role === "system") return;
    if (role !== "user" && role !== "assistant")
      problems.push({ rule: "roles_alternate", message: `messages.${i}: role ${JSON.stringify(role)} is not user or assistant` });
    else if (i > 0 && messages[i - 1]!["role"] === role && !(i === 1 && role === "user" && messages[0]!["role"] === "system"))
      problems.push({ rule: "roles_alternate", message: `messages.${i}: a second ${role} message in a row` });
    if (role === "assistant") {
      blocks.forEach(({ block: b, at }) => {
        if (b["type"] !== "tool_use") return;
        const id = String(b["id"]);
        const first = ids.get(id);
        if (first !== undefined) problems.push({ rule: "unique_call_ids", message: `${at}: tool_use id ${id} was already used in messages.${first}` });
        else ids.set(id, i);
      });
    }
    const last = turns[turns.length - 1];
    if (role === "user" && last !== undefined && last.role === "user") last.blocks.push(...blocks);
    else turns.push({ role, first: i, blocks });
  });
  turns.forEach((turn, t) => {
    if (turn.role === "assistant") {
      const uses = turn.blocks.filter(({ block }) => block["type"] === "tool_use").map(({ block }) => String(block["id"]));
      if (uses.length === 0) return;
      const next = turns[t + 1];
      const answers =
        next !== undefined && next.role === "user"
          ? next.blocks.filter(({ block }) => block["type"] === "tool_result").map(({ block }) => String(block["tool_use_id"]))
          : [];
      for (const id of new Set(uses)) {
        const n = answers.filter((a) => a === id).length;
        if (n !== 1)
          problems.push({
            rule: "call_answered_once",
            message: `messages.${turn.first}: tool_use ${id} has ${n} tool_result blocks in the next turn (needs exactly 1)`,
          });
      }
      return;
    }
    if (turn.role !== "user") return;
    let other: string | undefined;
    for (const { block, at } of turn.blocks) {
      if (block["type"] !== "tool_result") {
        other ??= at;
        continue;
      }
      if (other !== undefined) problems.push({ rule: "results_first", message: `${at}: tool_result after other content (${other}) in the same turn` });
    }
    const prev = turns[t - 1];
    const uses =
      prev !== undefined && prev.role === "assistant"
        ? prev.blocks.filter(({ block }) => block["type"] === "tool_use").map(({ block }) => String(block["id"]))
        : [];
    for (const { block, at } of turn.blocks) {
      if (block["type"] !== "tool_result") continue;
      const id = String(block["tool_use_id"]);
      if (!uses.includes(id)) problems.push({ rule: "result_has_call", message: `${at}: tool_result ${id} answers no tool_use of the previous turn` });
    }
  });
  return problems;
}

function chatRules(wire: readonly unknown[]): ProviderProblem[] {
  const problems: ProviderProblem[] = [];
  for (let i = 0; i < wire.length; i++) {
    const m = wire[i];
    if (!isRecord(m)) continue;
    if (m["role"] === "tool") {
      problems.push({
        rule: "result_has_call",
        message: `messages[${i}]: a 'tool' message must follow an assistant message with tool_calls (or its other tool messages)`,
      });
      continue;
    }
    const calls = m["role"] === "assistant" && Array.isArray(m["tool_calls"]) ? (m["tool_calls"] as unknown[]).filter(isRecord) : [];
    if (calls.length === 0) continue;
    const ids = calls.map((c) => String(c["id"]));
    const answered = new Map<string, number>();
    let j = i + 1;
    for (; j < wire.length; j++) {
      const r = wire[j];
      if (!isRecord(r) || r["role"] !== "tool") break;
      const id = String(r["tool_call_id"]);
      if (!ids.includes(id))
        problems.push({ rule: "result_has_call", message: `messages[${j}]: tool_call_id ${id} answers none of messages[${i}].tool_calls` });
      answered.set(id, (answered.get(id) ?? 0) + 1);
    }
    for (const id of new Set(ids)) {
      const n = answered.get(id) ?? 0;
      if (n !== 1 || ids.filter((x) => x === id).length > 1)
        problems.push({
          rule: "call_answered_once",
          message: `messages[${i}]: tool_call ${id} is answered ${n} time(s) by the tool messages after it (needs exactly 1)`,
        });
    }
    i = j - 1;
  }
  return problems;
}

function responsesRules(wire: readonly unknown[], externalCalls: boolean): ProviderProblem[] {
  const problems: ProviderProblem[] = [];
  const open = new Map<string, number>();
  const called = new Set<string>();
  wire.forEach((item, i) => {
    if (!isRecord(item)) return;
    const type = item["type"];
    const id = String(item["call_id"]);
    if (type === "function_call" || type === "custom_tool_call") {
      if (open.has(id))
        problems.push({ rule: "call_answered_once", message: `input[${i}]: call_id ${id} is called again before input[${open.get(id)}] was answered` });
      open.set(id, i);
      called.add(id);
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      if (!open.has(id) && !(externalCalls && !called.has(id)))
        problems.push({ rule: "result_has_call", message: `input[${i}]: no open call with call_id ${id} before this output` });
      open.delete(id);
    }
  });
  for (const [id, i] of open) problems.push({ rule: "call_answered_once", message: `input[${i}]: call_id ${id} has no output after it` });
  return problems;
}

function aiSdkRules(wire: readonly unknown[]): ProviderProblem[] {
  const problems: ProviderProblem[] = [];
  const ids = new Map<string, number>();
  let open: Map<string, number> | undefined;
  /** Calls of the open turn that wait for the user's approval (tool-approval-request). */
  let approvals = new Set<string>();
  const close = (at: string, end: boolean) => {
    if (open !== undefined)
      // the AI SDK runs an approved call when the history ends with its approval: no result yet is right
      for (const [id, n] of open)
        if (n !== 1 && !(end && n === 0 && approvals.has(id)))
          problems.push({ rule: "call_answered_once", message: `${at}: tool call ${id} has ${n} result(s) (needs exactly 1)` });
    open = undefined;
  };
  wire.forEach((m, i) => {
    if (!isRecord(m)) return;
    const parts = blocksOf(m);
    if (m["role"] === "tool") {
      for (const p of parts) {
        if (p["type"] !== "tool-result") continue;
        const id = String(p["toolCallId"]);
        if (open === undefined || !open.has(id))
          problems.push({ rule: "result_has_call", message: `messages[${i}]: tool result ${id} answers no pending tool call` });
        else open.set(id, open.get(id)! + 1);
      }
      return;
    }
    close(`messages[${i}]`, false);
    if (m["role"] !== "assistant") return;
    approvals = new Set(parts.filter((p) => p["type"] === "tool-approval-request").map((p) => String(p["toolCallId"])));
    for (const p of parts) {
      if (p["type"] !== "tool-call") continue;
      const id = String(p["toolCallId"]);
      // AI SDK histories are sent to any provider, Anthropic included: ids must be unique request-wide.
      if (ids.has(id)) problems.push({ rule: "unique_call_ids", message: `messages[${i}]: tool call id ${id} was already used in messages[${ids.get(id)}]` });
      else ids.set(id, i);
      if (p["providerExecuted"] === true) continue;
      (open ??= new Map()).set(id, 0);
    }
  });
  close("end of history", true);
  return problems;
}
