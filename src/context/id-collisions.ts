// Tool call ids unique across the whole request. Anthropic rejects a request in which two tool_use
// blocks share an id ("tool_use ids must be unique", a 400), yet SWE-agent replays and some
// OpenAI-compatible servers reuse `call_0` in every turn. A colliding call is renamed together with
// its result, deterministically (same input, same names), to a name no other call in the history
// uses, so a second pass finds nothing to rename. Runs after pairing, when every result sits right
// after its own turn. Parts that name a call without being one — an AI SDK `tool-approval-request` in
// the assistant message, a `tool-approval-response` carried among its results — are renamed with it:
// left behind, an approval named the earlier call that kept the id, and the SDK ran that call's input.
import { freshCallId } from "./fresh-call-id.js";
import type { AssistantPart, ContentPart, Message, ToolResultMessage } from "./messages.js";

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
      const to = freshCallId(part.id, all, nextSuffix);
      all.add(to);
      seen.add(to);
      renamed.set(part.id, to);
      rewrites.push({ from: part.id, to, index: i });
      content.push({ ...part, id: to });
    }
    if (renamed.size === 0) continue;
    out ??= messages.slice();
    // an approval request may come before the call it names
    out[i] = { ...message, content: content.map((part) => renamedRef(part, renamed)) };
    let adjacent = true;
    for (let j = i + 1; j < messages.length && messages[j]!.role !== "assistant"; j++) {
      const next = messages[j]!;
      if (next.role !== "tool") {
        adjacent = false;
        continue;
      }
      if (next.carried === true) {
        // an approval response stays where it is, even past the user's text: it belongs to this turn
        const parts = next.content.map((part) => renamedRef(part, renamed));
        if (parts.some((part, k) => part !== next.content[k])) out[j] = { ...next, content: parts };
        continue;
      }
      if (!adjacent) continue;
      const to = renamed.get(next.toolCallId);
      if (to !== undefined) out[j] = { ...next, toolCallId: to };
    }
  }
  return { messages: out ?? messages, rewrites };
}

/** Kinds of carried provider parts that name a tool call by `toolCallId` (AI SDK tool approval). */
const CALL_REFERENCES: ReadonlySet<unknown> = new Set(["tool-approval-request", "tool-approval-response"]);

/** `part` with the call it names renamed, when it is a carried part naming a renamed call; else `part` itself. */
function renamedRef<P extends AssistantPart | ContentPart>(part: P, renamed: ReadonlyMap<string, string>): P {
  if (part.type !== "raw" || typeof part.value !== "object" || part.value === null) return part;
  const value = part.value as Record<string, unknown>;
  if (!CALL_REFERENCES.has(value["type"]) || typeof value["toolCallId"] !== "string") return part;
  const to = renamed.get(value["toolCallId"]);
  return to === undefined ? part : { ...part, value: { ...value, toolCallId: to } };
}
