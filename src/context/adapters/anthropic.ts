// Anthropic Messages API ⇄ neutral. One Anthropic user message may hold several tool_result blocks
// (and text after them); it becomes one neutral `tool` message per result plus a user message, each
// marked `joined` so the way back rebuilds the same envelope. Blocks we do not model (thinking,
// documents, server tools) travel as raw parts.
import { FormatError } from "../errors.js";
import type { AssistantPart, ContentPart, Hints, ImagePart, Message, TextPart, ToolResultMessage } from "../messages.js";
import { errorPrefix, markError, unmarkError } from "./error-marker.js";
import { build, extraOf, isRecord, kindOf, record, str, withOptional, type Json } from "./shape.js";

export function fromAnthropic(input: readonly unknown[]): Message[] {
  const out: Message[] = [];
  input.forEach((raw, i) => {
    const at = `messages[${i}]`;
    const msg = record(raw, at, "a message");
    const role = str(msg, "role", at);
    const extra = extraOf(msg, ["role", "content"]);
    const content = msg["content"];
    const envelopeStart = out.length;
    const joinHint = (index: number): Hints | undefined => {
      if (index > envelopeStart) return { joined: true };
      // A result that starts its own envelope right after another result: say so, or the way back would merge them.
      const prev = out[out.length - 1];
      return prev?.role === "tool" ? { joined: false } : undefined;
    };
    if (role === "system") {
      out.push(withOptional({ role: "system", content: contentParts(content, at) } as Message, { extra, hints: stringHint(content) }));
      return;
    }
    if (role === "assistant") {
      out.push(withOptional({ role: "assistant", content: assistantParts(content, at) } as Message, { extra, hints: stringHint(content) }));
      return;
    }
    if (role !== "user") throw new FormatError(`unknown role ${JSON.stringify(role)}; Anthropic messages are "user" or "assistant"`, at);
    if (typeof content === "string" || content === undefined) {
      out.push(withOptional({ role: "user", content: contentParts(content, at) } as Message, { extra, hints: stringHint(content) }));
      return;
    }
    if (!Array.isArray(content)) throw new FormatError(`expected "content" to be a string or an array, got ${kindOf(content)}`, at);
    let pending: ContentPart[] | undefined;
    let extraUsed = false;
    const takeExtra = () => {
      if (extraUsed) return undefined;
      extraUsed = true;
      return extra;
    };
    const flushUser = () => {
      if (pending === undefined) return;
      out.push(
        withOptional({ role: "user", content: pending } as Message, { extra: takeExtra(), hints: out.length > envelopeStart ? { joined: true } : undefined }),
      );
      pending = undefined;
    };
    content.forEach((rawBlock, j) => {
      const bat = `${at}.content[${j}]`;
      const block = record(rawBlock, bat, "a content block");
      if (block["type"] === "tool_result") {
        flushUser();
        const result = toolResultFrom(block, bat, takeExtra());
        const join = joinHint(out.length);
        // both hints count: the content shape ("string") and the envelope (joined) — one must not overwrite the other
        out.push(join === undefined ? result : { ...result, hints: { ...result.hints, ...join } });
        return;
      }
      (pending ??= []).push(contentPart(block, bat));
    });
    if (content.length === 0) pending = [];
    flushUser();
  });
  return out;
}

function stringHint(content: unknown): Hints | undefined {
  if (typeof content === "string") return { content: "string" };
  if (content === undefined) return { content: "absent" };
  return undefined;
}

/** `messageExtra`: fields of the enclosing user message, kept apart from the block's own under one key. */
function toolResultFrom(block: Json, at: string, messageExtra: Json | undefined): ToolResultMessage {
  const toolCallId = str(block, "tool_use_id", at);
  const flagged = block["is_error"] === true;
  const rawContent = block["content"];
  const parts = contentParts(rawContent, at);
  const unmarked = unmarkError(parts, flagged, false);
  const known = ["type", "tool_use_id", "content", ...(flagged ? ["is_error"] : [])];
  const extra = messageExtra === undefined ? extraOf(block, known) : { ...extraOf(block, known), "anthropic:message": messageExtra };
  const message: ToolResultMessage = withOptional({ role: "tool", toolCallId, isError: unmarked.isError, content: unmarked.parts } as ToolResultMessage, {
    errorCode: unmarked.errorCode,
    hints: stringHint(rawContent),
  });
  return extra ? { ...message, extra } : message;
}

function contentParts(content: unknown, at: string): ContentPart[] {
  if (content === undefined) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new FormatError(`expected "content" to be a string or an array, got ${kindOf(content)}`, at);
  return content.map((block, j) => contentPart(record(block, `${at}.content[${j}]`, "a content block"), `${at}.content[${j}]`));
}

function contentPart(block: Json, at: string): ContentPart {
  const type = block["type"];
  if (type === "text" && typeof block["text"] === "string") {
    return withOptional({ type: "text", text: block["text"] } as TextPart, { extra: extraOf(block, ["type", "text"]) });
  }
  if (type === "image" && isRecord(block["source"])) {
    const source = block["source"];
    const extra = extraOf(block, ["type", "source"]);
    if (
      source["type"] === "base64" &&
      typeof source["media_type"] === "string" &&
      typeof source["data"] === "string" &&
      Object.keys(source).join() === "type,media_type,data"
    ) {
      return withOptional({ type: "image", mediaType: source["media_type"], data: source["data"] } as ImagePart, { extra });
    }
    if (source["type"] === "url" && typeof source["url"] === "string" && Object.keys(source).join() === "type,url") {
      return withOptional({ type: "image", url: source["url"] } as ImagePart, { extra });
    }
  }
  if (typeof type !== "string") throw new FormatError(`a content block needs a string "type"`, at);
  return { type: "raw", value: block };
}

function assistantParts(content: unknown, at: string): AssistantPart[] {
  if (content === undefined) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new FormatError(`expected "content" to be a string or an array, got ${kindOf(content)}`, at);
  return content.map((raw, j) => {
    const bat = `${at}.content[${j}]`;
    const block = record(raw, bat, "a content block");
    if (block["type"] === "tool_use") {
      const id = str(block, "id", bat);
      const name = str(block, "name", bat);
      return withOptional({ type: "toolCall", id, name, input: block["input"] } as AssistantPart, { extra: extraOf(block, ["type", "id", "name", "input"]) });
    }
    return contentPart(block, bat);
  });
}

export function toAnthropic(messages: readonly Message[]): Json[] {
  const out: Json[] = [];
  let last: { envelope: Json; blocks: Json[]; onlyResults: boolean; hasExtra?: boolean } | undefined;
  let prevRole: Message["role"] | undefined;
  for (const message of messages) {
    if (message.role === "system" || message.role === "assistant") {
      const parts = message.content as readonly AssistantPart[];
      out.push(build(message.extra, { role: message.role, content: renderContent(parts, message.hints) }));
      last = undefined;
      prevRole = message.role;
      continue;
    }
    const joined = message.hints?.joined;
    if (message.role === "tool") {
      const messageExtra = message.extra?.["anthropic:message"] as Json | undefined;
      const blockExtra = message.extra ? withoutKey(message.extra, "anthropic:message") : undefined;
      const parts = markError(message.content, message.isError ? errorPrefix(message.errorCode, false) : "");
      const block = build(blockExtra, {
        type: "tool_result",
        tool_use_id: message.toolCallId,
        content: message.hints?.content === "absent" && parts.length === 0 ? undefined : renderContent(parts, message.hints),
        ...(message.isError ? { is_error: true } : {}),
      });
      const join = last !== undefined && last.onlyResults && (joined === true || (joined === undefined && prevRole === "tool"));
      if (join) {
        last!.blocks.push(block);
        // The envelope's own fields ride on the result that opened it; pairing repair can put a
        // synthetic result first (call order), and they must still reach the envelope.
        if (messageExtra !== undefined && !last!.hasExtra) {
          const envelope = build(messageExtra, { role: "user", content: last!.blocks });
          out[out.indexOf(last!.envelope)] = envelope;
          last = { ...last!, envelope, hasExtra: true };
        }
      } else {
        const blocks = [block];
        const envelope = build(messageExtra, { role: "user", content: blocks });
        out.push(envelope);
        last = { envelope, blocks, onlyResults: true, hasExtra: messageExtra !== undefined };
      }
      prevRole = "tool";
      continue;
    }
    // user
    if (joined === true && last !== undefined) {
      for (const part of message.content) last.blocks.push(renderPart(part));
      last.onlyResults = false;
    } else {
      const rendered = renderContent(message.content, message.hints);
      const envelope = build(message.extra, { role: "user", content: rendered });
      out.push(envelope);
      last = Array.isArray(rendered) ? { envelope, blocks: rendered as Json[], onlyResults: false } : undefined;
    }
    prevRole = "user";
  }
  return out;
}

function withoutKey(extra: Json | Readonly<Record<string, unknown>>, key: string): Json | undefined {
  const rest: Json = {};
  for (const k of Object.keys(extra)) if (k !== key) Object.defineProperty(rest, k, { value: extra[k], enumerable: true, writable: true, configurable: true });
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function renderContent(parts: readonly AssistantPart[], hints: Hints | undefined): unknown {
  if (hints?.content === "string" && parts.length === 1 && parts[0]!.type === "text" && parts[0]!.extra === undefined) return parts[0]!.text;
  if (hints?.content === "string" && parts.length === 0) return "";
  if (hints?.content === "absent" && parts.length === 0) return undefined;
  return parts.map(renderPart);
}

function renderPart(part: AssistantPart): Json {
  switch (part.type) {
    case "text":
      return build(part.extra, { type: "text", text: part.text });
    case "image":
      return build(part.extra, {
        type: "image",
        source: part.data !== undefined ? { type: "base64", media_type: part.mediaType ?? "image/png", data: part.data } : { type: "url", url: part.url ?? "" },
      });
    case "toolCall":
      return build(part.extra, { type: "tool_use", id: part.id, name: part.name, input: part.input ?? {} });
    case "raw":
      return part.value as Json;
  }
}

/** What the Messages API would reject about the tool blocks of `wire` (consecutive user turns merged, as the API does). */
export function checkAnthropic(wire: readonly unknown[]): string[] {
  const problems: string[] = [];
  const turns: { role: string; blocks: Json[] }[] = [];
  for (const raw of wire) {
    if (!isRecord(raw)) {
      problems.push("a message is not an object");
      continue;
    }
    const role = String(raw["role"]);
    const content = raw["content"];
    const blocks = Array.isArray(content) ? content.filter(isRecord) : [];
    const prev = turns[turns.length - 1];
    if (prev && prev.role === role && role === "user") prev.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  turns.forEach((turn, i) => {
    if (turn.role === "system") return;
    const uses = turn.role === "assistant" ? turn.blocks.filter((b) => b["type"] === "tool_use").map((b) => String(b["id"])) : [];
    if (new Set(uses).size !== uses.length) problems.push(`turn ${i}: duplicate tool_use ids`);
    if (uses.length > 0) {
      const next = turns[i + 1];
      if (!next || next.role !== "user") {
        problems.push(`turn ${i}: tool_use ids [${uses.join(", ")}] were found without tool_result blocks immediately after`);
        return;
      }
      const results = next.blocks.filter((b) => b["type"] === "tool_result").map((b) => String(b["tool_use_id"]));
      for (const id of uses) if (!results.includes(id)) problems.push(`turn ${i}: tool_use ${id} has no tool_result in the next message`);
      const firstOther = next.blocks.findIndex((b) => b["type"] !== "tool_result");
      const lastResult = next.blocks.map((b) => b["type"]).lastIndexOf("tool_result");
      if (firstOther >= 0 && firstOther < lastResult) problems.push(`turn ${i + 1}: tool_result blocks must come before other content`);
    }
    if (turn.role === "user") {
      const prev = turns[i - 1];
      const allowed = prev?.role === "assistant" ? prev.blocks.filter((b) => b["type"] === "tool_use").map((b) => String(b["id"])) : [];
      const seen = new Set<string>();
      for (const b of turn.blocks) {
        if (b["type"] !== "tool_result") continue;
        const id = String(b["tool_use_id"]);
        if (!allowed.includes(id)) problems.push(`turn ${i}: unexpected tool_use_id ${id} found in tool_result blocks`);
        if (seen.has(id)) problems.push(`turn ${i}: duplicate tool_result for ${id}`);
        seen.add(id);
      }
    }
  });
  return problems;
}
