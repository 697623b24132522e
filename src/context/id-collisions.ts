// Tool call ids unique across the whole request. Anthropic rejects a request in which two tool_use
// blocks share an id ("tool_use ids must be unique", a 400), yet SWE-agent replays and some
// OpenAI-compatible servers reuse `call_0` in every turn. A colliding call is renamed together with
// its result, deterministically (same input, same names), to a name no other call in the history
// uses, so a second pass finds nothing to rename. Runs after pairing, when every result sits right
// after its own turn. A renamed call that awaits approval takes its approval request along (the AI SDK
// runs the call a request names: left behind, it named the earlier call of that id, which then ran again).
import { isRecord } from "./adapters/shape.js";
import type { AssistantPart, Message, ToolResultMessage } from "./messages.js";

export interface IdRewrite {
  readonly from: string;
  readonly to: string;
  /** Index (in the returned history) of the assistant message whose call was renamed. */
  readonly index: number;
}

export function rewriteCollidingIds(messages: readonly Message[]): { messages: readonly Message[]; rewrites: IdRewrite[] } {
  const all = new Set<string>();
  let calls = 0;
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    for (const p of m.content) {
      if (p.type !== "toolCall") continue;
      all.add(p.id);
      calls++;
    }
  }
  const rewrites: IdRewrite[] = [];
  if (all.size === calls) return { messages, rewrites };

  const seen = new Set<string>();
  /** Per id, the suffix to try next: a `call_0` reused in every one of 10,000 turns costs 10,000 lookups, not 50 million. */
  const nextSuffix = new Map<string, number>();
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const renamed = new Map<string, string>();
    const content: AssistantPart[] = [];
    for (const part of message.content) {
      if (part.type !== "toolCall") {
        content.push(part);
        continue;
      }
      if (!seen.has(part.id) || renamed.has(part.id)) {
        seen.add(part.id);
        content.push(part);
        continue;
      }
      const to = freshId(part.id, all, nextSuffix);
      all.add(to);
      seen.add(to);
      renamed.set(part.id, to);
      rewrites.push({ from: part.id, to, index: i });
      content.push({ ...part, id: to });
    }
    if (renamed.size === 0) continue;
    out ??= messages.slice();
    out[i] = { ...message, content: withApprovalRequestsRenamed(content, renamed) };
    for (let j = i + 1; j < messages.length && messages[j]!.role === "tool"; j++) {
      const result = messages[j] as ToolResultMessage;
      const to = renamed.get(result.toolCallId);
      if (to !== undefined) out[j] = { ...result, toolCallId: to };
    }
  }
  return { messages: out ?? messages, rewrites };
}

/** The AI SDK tool-approval-request parts of a message (carried raw) follow their call's new id. */
function withApprovalRequestsRenamed(content: AssistantPart[], renamed: ReadonlyMap<string, string>): AssistantPart[] {
  const approvals = new Set<string>();
  for (const part of content) if (part.type === "toolCall" && part.approvalRequested === true) approvals.add(part.id);
  if (approvals.size === 0) return content;
  return content.map((part) => {
    if (part.type !== "raw" || !isRecord(part.value) || part.value["type"] !== "tool-approval-request") return part;
    const to = renamed.get(String(part.value["toolCallId"]));
    return to !== undefined && approvals.has(to) ? { type: "raw", value: { ...part.value, toolCallId: to } } : part;
  });
}

/** `<id>_2`, `<id>_3`, … — the first that no call uses. Kept within Anthropic's id alphabet when the id is. */
function freshId(id: string, taken: ReadonlySet<string>, nextSuffix: Map<string, number>): string {
  for (let n = nextSuffix.get(id) ?? 2; ; n++) {
    const candidate = `${id}_${n}`;
    if (taken.has(candidate)) continue;
    nextSuffix.set(id, n + 1);
    return candidate;
  }
}
