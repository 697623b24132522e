// Deterministic generators for random histories and their damage, driven by a seed so thousands of
// histories stay cheap (fast-check picks seeds and damage lists; text comes from a tiny PRNG).
import {
  assistant,
  toolResult,
  userText,
  type AssistantMessage,
  type AssistantPart,
  type Message,
  type ToolCallPart,
  type ToolResultMessage,
} from "../../src/context/index.js";

export function rng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const WORDS = ["alpha", "beta", "gamma", "delta", "error:", "ok", "func", "main()", "κόσμε", "日本語", "😀", "🚀x", "\t", '{"k": 1}', "--- a/x", "@@ -1 +1 @@"];

/** Varied text of `chars` characters: lines of words, sometimes one huge line, often astral (surrogate-pair) characters. */
export function text(rand: () => number, chars: number): string {
  const oneLine = rand() < 0.1;
  let out = "";
  let line = 0;
  while (out.length < chars) {
    const n = 3 + Math.floor(rand() * 12);
    const words: string[] = [`L${line++}`];
    for (let i = 0; i < n; i++) words.push(WORDS[Math.floor(rand() * WORDS.length)]!);
    out += words.join(" ") + (oneLine ? " " : "\n");
  }
  return out.slice(0, chars);
}

const SIZES: readonly [number, number][] = [
  [0, 40],
  [40, 900],
  [900, 6_000],
  [6_000, 30_000],
];

export function size(rand: () => number): number {
  const r = rand();
  const [lo, hi] = r < 0.3 ? SIZES[0]! : r < 0.6 ? SIZES[1]! : r < 0.88 ? SIZES[2]! : SIZES[3]!;
  return lo + Math.floor(rand() * (hi - lo));
}

const TOOLS = ["web_fetch", "read", "grep", "bash", "write"];

export interface HistoryOptions {
  /**
   * AI SDK tool approvals (only the AI SDK format carries them): some calls ask for approval, with a
   * `tool-approval-request` in the assistant message and a `tool-approval-response` before the result;
   * the last turn may end awaiting one (no result yet).
   */
  readonly approvals?: boolean;
}

/**
 * A valid history: turns of user → assistant with 0–3 calls → their results → maybe a closing
 * assistant. A turn after results sometimes has no user message (the agent loop: the model calls again
 * right after reading its results), so assistant messages stand with nothing but results between them.
 */
export function history(seed: number, turns: number, options: HistoryOptions = {}): Message[] {
  const rand = rng(seed);
  const out: Message[] = [];
  if (rand() < 0.3) out.push({ role: "system", content: [{ type: "text", text: "You are a careful agent." }] });
  for (let t = 0; t < turns; t++) {
    const loop = out[out.length - 1]?.role === "tool" && rand() < 0.35;
    if (!loop) out.push(userText(`turn ${t}: ${text(rand, 10 + Math.floor(rand() * 60))}`));
    const calls = Math.floor(rand() * 4);
    // ids reused across turns, like Kimi's "web_fetch:0" every turn (more often with approvals, so approved calls get renamed)
    const reuse = rand() < (options.approvals === true ? 0.6 : 0.3);
    const specs = Array.from({ length: calls }, (_, i) => {
      const name = TOOLS[Math.floor(rand() * TOOLS.length)]!;
      return { id: reuse ? `${name}:${i}` : `call_${t}_${i}_${Math.floor(rand() * 1e6).toString(36)}`, name, input: { n: i, q: text(rand, 8) } };
    });
    const turn = assistant(rand() < 0.5 ? `let me look (${t})` : "", specs);
    // (drawn only with approvals on, so the histories of every other seed stay as they were)
    const approved = options.approvals === true && calls > 0 && rand() < 0.5 ? Math.floor(rand() * calls) : -1;
    const awaiting = approved >= 0 && t === turns - 1 && rand() < 0.5;
    if (approved < 0) out.push(turn);
    else out.push(withApproval(turn, specs[approved]!.id, `ap_${t}`, rand() < 0.5));
    for (const [i, spec] of specs.entries()) {
      if (i === approved) out.push(approvalResponse(`ap_${t}`));
      if (i === approved && awaiting) continue;
      const isError = rand() < 0.12;
      const message = toolResult(spec.id, text(rand, size(rand)), {
        isError,
        toolName: spec.name,
        ...(isError && rand() < 0.5 ? { errorCode: "ENOENT" } : {}),
      });
      out.push(message);
    }
    if (calls > 0 && !awaiting && rand() < 0.6) out.push(assistant(`summary of turn ${t}`));
  }
  return out;
}

/** `turn` with the call `id` asking for approval (its request before or after the calls, as clients differ). */
function withApproval(turn: AssistantMessage, id: string, approvalId: string, requestFirst: boolean): AssistantMessage {
  const request: AssistantPart = { type: "raw", value: { type: "tool-approval-request", approvalId, toolCallId: id } };
  const content = turn.content.map((p) => (p.type === "toolCall" && p.id === id ? { ...p, approvalRequested: true as const } : p));
  return { ...turn, content: requestFirst ? [request, ...content] : [...content, request] };
}

/** The user's answer, as the AI SDK adapter carries it among the results. */
function approvalResponse(approvalId: string): ToolResultMessage {
  return {
    role: "tool",
    toolCallId: "",
    isError: false,
    content: [{ type: "raw", value: { type: "tool-approval-response", approvalId, approved: true } }],
    carried: true,
    extra: { "aisdk:part": true },
  };
}

export type Damage =
  | "drop"
  | "duplicateResult"
  | "duplicateCall"
  | "sharedId"
  | "dropCall"
  | "pastProse"
  | "pastAssistant"
  | "orphan"
  | "hugeResult"
  | "emptyResult";
export const DAMAGES: readonly Damage[] = [
  "drop",
  "duplicateResult",
  "duplicateCall",
  "sharedId",
  "dropCall",
  "pastProse",
  "pastAssistant",
  "orphan",
  "hugeResult",
  "emptyResult",
];

/** Results a damage may pick: carried parts (AI SDK approval responses) are the client's, not results, and stay as they are. */
function toolIndexes(h: readonly Message[]): number[] {
  const idx: number[] = [];
  h.forEach((m, i) => {
    if (m.role === "tool" && m.carried !== true) idx.push(i);
  });
  return idx;
}

function callMessages(h: readonly Message[]): (readonly [Message & { role: "assistant" }, number])[] {
  const out: (readonly [Message & { role: "assistant" }, number])[] = [];
  h.forEach((m, i) => {
    if (m.role === "assistant" && m.content.some((p) => p.type === "toolCall")) out.push([m, i]);
  });
  return out;
}

export function damage(h: readonly Message[], kind: Damage, a: number, b: number, seed: number): Message[] {
  const out = h.slice();
  const results = toolIndexes(out);
  const pick = results.length > 0 ? results[a % results.length]! : -1;
  switch (kind) {
    case "drop":
      if (pick >= 0) out.splice(pick, 1);
      break;
    case "duplicateResult":
      if (pick >= 0) out.splice(pick + 1, 0, out[pick]!);
      break;
    case "duplicateCall": {
      const asst = callMessages(out);
      if (asst.length === 0) break;
      const [m, i] = asst[a % asst.length]!;
      const calls = m.content.filter((p): p is Extract<AssistantPart, { type: "toolCall" }> => p.type === "toolCall");
      out[i] = { ...m, content: [...(m.content as AssistantPart[]), calls[b % calls.length]!] } as Message;
      break;
    }
    case "sharedId": {
      // two different calls with one id in one message, each with its own result (a model or proxy reusing
      // an id within a turn): the second call takes the first's id, and so does its result
      const asst = callMessages(out);
      if (asst.length === 0) break;
      const [m, i] = asst[a % asst.length]!;
      // a call awaiting approval keeps its id: its approval request names it (approval parts are the client's)
      const calls = m.content.filter((p): p is ToolCallPart => p.type === "toolCall" && p.approvalRequested !== true);
      if (calls.length === 0) break;
      const first = calls[b % calls.length]!;
      const other = calls.length > 1 ? calls[(b + 1) % calls.length]! : undefined;
      if (other === undefined || other === first) {
        // one call: a second one with the same id and other input, answered right after the first's result
        const second: ToolCallPart = { ...first, input: { again: b } };
        out[i] = { ...m, content: [...m.content, second] };
        let j = i + 1;
        while (j < out.length && out[j]!.role === "tool") j++;
        out.splice(j, 0, toolResult(first.id, text(rng(seed + b), 10 + (b % 400)), { toolName: first.name }));
        break;
      }
      out[i] = { ...m, content: m.content.map((p) => (p === other ? { ...other, id: first.id } : p)) };
      for (let j = i + 1; j < out.length && out[j]!.role !== "assistant"; j++) {
        const r = out[j]!;
        if (r.role === "tool" && r.carried !== true && r.toolCallId === other.id) out[j] = { ...r, toolCallId: first.id };
      }
      break;
    }
    case "dropCall": {
      // a call edited out of the history (or kept by the provider): its result answers nothing before it
      const asst = callMessages(out);
      if (asst.length === 0) break;
      const [m, i] = asst[a % asst.length]!;
      // a call awaiting approval stays: its approval request names it (approval parts are the client's)
      const calls = m.content.filter((p) => p.type === "toolCall" && p.approvalRequested !== true);
      if (calls.length === 0) break;
      // sometimes every call of the message (rewritten as text by another tool), else one
      const gone = b % 3 === 0 ? calls : [calls[b % calls.length]!];
      const content = m.content.filter((p) => !gone.includes(p as (typeof calls)[number]));
      out[i] = { ...m, content: content.length > 0 ? content : [{ type: "text", text: `(call ${b} edited out)` }] };
      break;
    }
    case "pastProse":
      if (pick >= 0) {
        const [moved] = out.splice(pick, 1);
        out.splice(pick, 0, userText(`[feedback ${b}]`), moved!);
      }
      break;
    case "pastAssistant":
      if (pick >= 0) {
        const [moved] = out.splice(pick, 1);
        let j = pick;
        while (j < out.length && out[j]!.role !== "assistant") j++;
        out.splice(Math.min(out.length, j + 1), 0, moved!);
      }
      break;
    case "orphan":
      out.splice(a % (out.length + 1), 0, toolResult(`ghost_${b}`, text(rng(seed + b), 20 + (b % 5000))));
      break;
    case "hugeResult":
      if (pick >= 0) {
        const m = out[pick] as ToolResultMessage;
        out[pick] = { ...m, content: [{ type: "text", text: text(rng(seed ^ b), 40_000 + (b % 40_000)) }] };
      }
      break;
    case "emptyResult":
      if (pick >= 0) out[pick] = { ...(out[pick] as ToolResultMessage), content: [] };
      break;
  }
  return out;
}
