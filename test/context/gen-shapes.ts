// Wire-level generators for the shapes real clients send that gen.ts's neutral histories do not make:
// results split across consecutive user (or tool) messages, the Claude Code shape; AI SDK tool approval
// requests and responses, ending while a call awaits approval or before an approved call ran; and
// OpenAI Responses requests that continue state the provider keeps (previous_response_id,
// conversation, item_reference), whose outputs answer calls that are not in `input`.
import { adapters, type Format, type Message } from "../../src/context/index.js";
import { history } from "./gen.js";

type Json = Record<string, unknown>;

/**
 * A history in `format`'s wire form, call ids unique request-wide unless `reuse` (the base generator
 * reuses "web_fetch:0" in later turns, as Kimi does; OpenAI accepts it, Anthropic does not).
 */
export function wireHistory(seed: number, turns: number, format: Format, reuse = false): Json[] {
  if (reuse) return adapters[format].toProvider(history(seed, turns)) as Json[];
  let n = 0;
  const ids = new Map<string, string>();
  const h: Message[] = history(seed, turns).map((m) => {
    if (m.role === "assistant") {
      ids.clear();
      return {
        ...m,
        content: m.content.map((p) => {
          if (p.type !== "toolCall") return p;
          const id = `${p.id}#${n++}`;
          ids.set(p.id, id);
          return { ...p, id };
        }),
      };
    }
    if (m.role === "tool") return { ...m, toolCallId: ids.get(m.toolCallId) ?? m.toolCallId };
    return m;
  });
  return adapters[format].toProvider(h) as Json[];
}

function blocks(m: Json): Json[] {
  return Array.isArray(m["content"]) ? (m["content"] as Json[]) : [];
}

/**
 * Anthropic: a user message holding tool_result blocks is sometimes written as one user message per
 * block (Claude Code sends each parallel result on its own). AI SDK: a tool message with several parts
 * becomes one tool message per part.
 */
export function splitTurns(wire: readonly Json[], format: "anthropic" | "ai-sdk", rand: () => number): Json[] {
  const out: Json[] = [];
  for (const m of wire) {
    const parts = blocks(m);
    const splittable = format === "anthropic" ? m["role"] === "user" && parts.some((b) => b["type"] === "tool_result") : m["role"] === "tool";
    if (!splittable || parts.length < 2 || rand() < 0.3) {
      out.push(m);
      continue;
    }
    for (const part of parts) out.push({ ...m, content: [part] });
  }
  return out;
}

export type ApprovalEnd = "none" | "awaiting" | "approved";

/**
 * AI SDK tool approval: some calls of some turns ask for approval (a tool-approval-request after the
 * calls); the user's tool-approval-response comes in a tool message before the results, which for a
 * denied call is an execution-denied output. With `end` set, the history stops in the last call turn
 * while its approval calls have no result yet: "awaiting" (no response yet) or "approved" (the
 * response is there, the SDK runs the call on the next request). Results of calls that need no
 * approval are there, as the SDK ran them.
 */
export function withApprovals(wire: readonly Json[], rand: () => number, end: ApprovalEnd): Json[] {
  const out: Json[] = [];
  let approvalId = 0;
  const lastCallTurn = wire.map((m) => m["role"] === "assistant" && blocks(m).some((p) => p["type"] === "tool-call")).lastIndexOf(true);
  for (let i = 0; i < wire.length; i++) {
    const m = wire[i]!;
    const calls = m["role"] === "assistant" ? blocks(m).filter((p) => p["type"] === "tool-call") : [];
    const ending = end !== "none" && i === lastCallTurn;
    if (calls.length === 0 || (!ending && rand() < 0.5)) {
      out.push(m);
      continue;
    }
    let needing = calls.filter(() => rand() < 0.6);
    if (needing.length === 0) needing = [calls[Math.floor(rand() * calls.length)]!];
    const asked = needing.map((c) => ({
      toolCallId: String(c["toolCallId"]),
      approvalId: `approval_${approvalId++}`,
      approved: rand() < 0.75,
      reason: rand() < 0.3 ? "looks safe" : undefined,
    }));
    const requests = asked.map((a) => ({ type: "tool-approval-request", approvalId: a.approvalId, toolCallId: a.toolCallId }));
    out.push({ ...m, content: [...blocks(m), ...requests] });
    const responses = asked.map((a) => ({
      type: "tool-approval-response",
      approvalId: a.approvalId,
      approved: a.approved,
      ...(a.reason !== undefined ? { reason: a.reason } : {}),
    }));
    // the results the generator wrote for this turn, split into the calls that needed approval and the rest
    let j = i + 1;
    const results: Json[] = [];
    for (; j < wire.length && wire[j]!["role"] === "tool"; j++) results.push(...blocks(wire[j]!));
    const needs = (p: Json) => asked.find((a) => a.toolCallId === p["toolCallId"]);
    const free = results.filter((p) => needs(p) === undefined);
    const gated = results
      .filter((p) => needs(p) !== undefined)
      .map((p) => {
        const a = needs(p)!;
        return a.approved ? p : { ...p, output: { type: "execution-denied", ...(a.reason !== undefined ? { reason: a.reason } : {}) } };
      });
    if (ending) {
      if (free.length > 0) out.push({ role: "tool", content: free });
      if (end === "approved") out.push({ role: "tool", content: responses });
      return out;
    }
    if (rand() < 0.5) out.push({ role: "tool", content: [...responses, ...free, ...gated] });
    else {
      if (free.length > 0) out.push({ role: "tool", content: free });
      out.push({ role: "tool", content: responses });
      if (gated.length > 0) out.push({ role: "tool", content: gated });
    }
    i = j - 1;
  }
  return out;
}

export type ServerState = "previous_response_id" | "conversation" | "item_reference";

/**
 * An OpenAI Responses request body that continues stored state. previous_response_id / conversation:
 * `input` starts where the stored response ended, often with the outputs of its calls (the calls stay
 * with the provider). item_reference: earlier model output items are named by reference instead of
 * sent, so the outputs after them answer calls that are not in `input`.
 */
export function withServerState(wire: readonly Json[], rand: () => number, mode: ServerState): Json {
  if (mode !== "item_reference") {
    // cut at the start of a run of outputs (the usual continuation) or anywhere
    const starts = wire.flatMap((item, i) => (item["type"] === "function_call_output" && wire[i - 1]?.["type"] === "function_call" ? [i] : []));
    const cut = starts.length > 0 && rand() < 0.8 ? starts[Math.floor(rand() * starts.length)]! : Math.floor(rand() * wire.length);
    return { model: "gpt-5", [mode]: mode === "conversation" ? "conv_1" : "resp_1", input: wire.slice(cut) };
  }
  const input: Json[] = [];
  let ref = 0;
  // some clients refer to single items of a model turn and send the rest
  const mixed = rand() < 0.3;
  let referring = false;
  for (let i = 0; i < wire.length; i++) {
    const item = wire[i]!;
    const modelOutput = item["type"] === "function_call" || item["type"] === "reasoning" || (item["type"] === "message" && item["role"] === "assistant");
    if (!modelOutput) {
      referring = false;
      input.push(item);
      continue;
    }
    // a model turn is referred to as a whole (every item of it) or sent as it is
    if (i === 0 || !isModelOutput(wire[i - 1]!)) referring = rand() < 0.5;
    input.push(referring || (mixed && rand() < 0.3) ? { type: "item_reference", id: `item_${ref++}` } : item);
  }
  return { model: "gpt-5", input };
}

function isModelOutput(item: Json): boolean {
  return item["type"] === "function_call" || item["type"] === "reasoning" || (item["type"] === "message" && item["role"] === "assistant");
}
