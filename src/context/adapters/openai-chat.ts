// OpenAI Chat Completions ⇄ neutral: `tool_calls` on the assistant message (arguments are a JSON
// string), one `role:"tool"` message per result. The API has no error flag, so an error result's
// text carries "[ERROR:<code>] " / "[ERROR] " (and is read back from it).
import { FormatError } from "../errors.js";
import type { AssistantPart, ContentPart, Hints, ImagePart, Message, TextPart, ToolCallPart } from "../messages.js";
import { errorPrefix, markError, unmarkError } from "./error-marker.js";
import { build, extraOf, isRecord, kindOf, parseArguments, record, str, withOptional, type Json } from "./shape.js";

export function fromOpenAIChat(input: readonly unknown[]): Message[] {
  return input.map((raw, i): Message => {
    const at = `messages[${i}]`;
    const msg = record(raw, at, "a message");
    const role = str(msg, "role", at);
    const content = msg["content"];
    switch (role) {
      case "system":
      case "developer": {
        const extra = extraOf(msg, ["role", "content"]);
        return withOptional({ role: "system", content: parts(content, at) } as Message, {
          extra: role === "developer" ? { ...extra, "openai:role": "developer" } : extra,
          hints: contentHint(content),
        });
      }
      case "user":
        return withOptional({ role: "user", content: parts(content, at) } as Message, {
          extra: extraOf(msg, ["role", "content"]),
          hints: contentHint(content),
        });
      case "assistant": {
        const known = ["role", "content", "tool_calls"];
        const calls = msg["tool_calls"];
        if (calls !== undefined && !Array.isArray(calls)) throw new FormatError(`expected "tool_calls" to be an array, got ${kindOf(calls)}`, at);
        const list: unknown[] = calls ?? [];
        if (list.length === 0) known.pop();
        const callParts = list.map((c, j) => toolCallFrom(record(c, `${at}.tool_calls[${j}]`, "a tool call"), `${at}.tool_calls[${j}]`));
        return withOptional({ role: "assistant", content: [...parts(content, at), ...callParts] } as Message, {
          extra: extraOf(msg, known),
          hints: contentHint(content),
        });
      }
      case "tool": {
        const toolCallId = str(msg, "tool_call_id", at);
        const unmarked = unmarkError(parts(content, at), false, true);
        return withOptional({ role: "tool", toolCallId, isError: unmarked.isError, content: unmarked.parts } as Message, {
          errorCode: unmarked.errorCode,
          extra: extraOf(msg, ["role", "tool_call_id", "content"]),
          hints: contentHint(content),
        });
      }
      default:
        throw new FormatError(`unknown role ${JSON.stringify(role)}; Chat Completions roles are system, developer, user, assistant and tool`, at);
    }
  });
}

function contentHint(content: unknown): Hints | undefined {
  if (typeof content === "string") return { content: "string" };
  if (Array.isArray(content)) return { content: "parts" };
  if (content === null) return { content: "null" };
  if (content === undefined) return { content: "absent" };
  return undefined;
}

function parts(content: unknown, at: string): ContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new FormatError(`expected "content" to be a string, null or an array, got ${kindOf(content)}`, at);
  return content.map((raw, j): ContentPart => {
    const part = record(raw, `${at}.content[${j}]`, "a content part");
    if (part["type"] === "text" && typeof part["text"] === "string") {
      return withOptional({ type: "text", text: part["text"] } as TextPart, { extra: extraOf(part, ["type", "text"]) });
    }
    const image = part["image_url"];
    if (part["type"] === "image_url" && isRecord(image) && typeof image["url"] === "string") {
      return withOptional({ type: "image", url: image["url"] } as ImagePart, {
        extra: { ...extraOf(part, ["type", "image_url"]), ...prefixKeys(extraOf(image, ["url"]), "image_url.") },
      });
    }
    if (typeof part["type"] !== "string") throw new FormatError(`a content part needs a string "type"`, `${at}.content[${j}]`);
    return { type: "raw", value: part };
  });
}

function prefixKeys(extra: Json | Readonly<Record<string, unknown>> | undefined, prefix: string): Json {
  const out: Json = {};
  if (extra)
    for (const key of Object.keys(extra)) Object.defineProperty(out, prefix + key, { value: extra[key], enumerable: true, writable: true, configurable: true });
  return out;
}

function toolCallFrom(call: Json, at: string): ToolCallPart {
  const id = str(call, "id", at);
  const kind = call["type"] ?? "function";
  if (typeof kind !== "string") throw new FormatError(`expected "type" to be a string`, at);
  const body = record(call[kind], `${at}.${kind}`, `the "${kind}" body of a tool call`);
  const name = str(body, "name", `${at}.${kind}`);
  const argsKey = kind === "function" ? "arguments" : "input";
  const rawArgs = body[argsKey];
  const extra = {
    ...extraOf(call, ["id", "type", kind]),
    ...prefixKeys(extraOf(body, ["name", argsKey]), `${kind}.`),
    ...(kind !== "function" ? { "openai:kind": kind } : {}),
    ...(call["type"] === undefined ? { "openai:untyped": true } : {}),
  };
  const part: ToolCallPart = { type: "toolCall", id, name, input: undefined };
  if (typeof rawArgs !== "string") throw new FormatError(`expected "${argsKey}" to be a string, got ${kindOf(rawArgs)}`, `${at}.${kind}`);
  const { input, rawInput } = kind === "function" ? parseArguments(rawArgs) : { input: rawArgs, rawInput: undefined };
  return withOptional({ ...part, input }, { rawInput, extra: Object.keys(extra).length > 0 ? extra : undefined });
}

export function toOpenAIChat(messages: readonly Message[]): Json[] {
  return messages.map((message): Json => {
    switch (message.role) {
      case "system": {
        const { "openai:role": role, ...extra } = (message.extra ?? {}) as Json;
        return build(extra, { role: role ?? "system", content: renderContent(message.content, message.hints) });
      }
      case "user":
        return build(message.extra, { role: "user", content: renderContent(message.content, message.hints) });
      case "assistant": {
        const calls = message.content.filter((p): p is ToolCallPart => p.type === "toolCall");
        const rest = message.content.filter((p): p is ContentPart => p.type !== "toolCall");
        return build(message.extra, {
          role: "assistant",
          content: renderContent(rest, message.hints),
          tool_calls: calls.length > 0 ? calls.map(renderCall) : undefined,
        });
      }
      case "tool": {
        const content = markError(message.content, message.isError ? errorPrefix(message.errorCode, true) : "");
        return build(message.extra, { role: "tool", tool_call_id: message.toolCallId, content: renderContent(content, message.hints) ?? "" });
      }
    }
  });
}

function renderContent(parts: readonly ContentPart[], hints: Hints | undefined): unknown {
  if (parts.length === 0) {
    if (hints?.content === "null") return null;
    if (hints?.content === "absent") return undefined;
    if (hints?.content === "string") return "";
  }
  // Text-only content is a plain string unless the provider sent an array (the common shape, and what a synthetic result gets).
  const plain = hints?.content === "string" || (hints?.content !== "parts" && parts.length > 0);
  if (plain && parts.every((p) => p.type === "text" && p.extra === undefined)) {
    return parts.map((p) => (p as TextPart).text).join("\n");
  }
  return parts.map((part): Json => {
    switch (part.type) {
      case "text":
        return build(part.extra, { type: "text", text: part.text });
      case "image": {
        const extra = (part.extra ?? {}) as Json;
        const outer: Json = {};
        const inner: Json = {};
        for (const key of Object.keys(extra)) {
          const target = key.startsWith("image_url.") ? inner : outer;
          Object.defineProperty(target, key.startsWith("image_url.") ? key.slice(10) : key, {
            value: extra[key],
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        const url = part.url ?? `data:${part.mediaType ?? "image/png"};base64,${part.data ?? ""}`;
        return build(outer, { type: "image_url", image_url: build(inner, { url }) });
      }
      case "raw":
        return part.value as Json;
    }
  });
}

function renderCall(call: ToolCallPart): Json {
  const extra = (call.extra ?? {}) as Json;
  const kind = typeof extra["openai:kind"] === "string" ? (extra["openai:kind"] as string) : "function";
  const outer: Json = {};
  const body: Json = {};
  for (const key of Object.keys(extra)) {
    if (key === "openai:kind" || key === "openai:untyped") continue;
    const target = key.startsWith(`${kind}.`) ? body : outer;
    Object.defineProperty(target, key.startsWith(`${kind}.`) ? key.slice(kind.length + 1) : key, {
      value: extra[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const args = kind === "function" ? (call.rawInput ?? JSON.stringify(call.input ?? {})) : call.input;
  return build(outer, {
    id: call.id,
    type: extra["openai:untyped"] === true ? undefined : kind,
    [kind]: build(body, { name: call.name, [kind === "function" ? "arguments" : "input"]: args }),
  });
}

/** What Chat Completions would reject: every tool_calls message must be followed by tool messages answering all its ids. */
export function checkOpenAIChat(wire: readonly unknown[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < wire.length; i++) {
    const m = wire[i];
    if (!isRecord(m)) {
      problems.push(`messages[${i}] is not an object`);
      continue;
    }
    if (m["role"] === "tool") {
      problems.push(`messages[${i}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls'`);
      continue;
    }
    if (m["role"] !== "assistant" || !Array.isArray(m["tool_calls"]) || m["tool_calls"].length === 0) continue;
    const ids = (m["tool_calls"] as unknown[]).map((c) => (isRecord(c) ? String(c["id"]) : ""));
    if (new Set(ids).size !== ids.length) problems.push(`messages[${i}]: duplicate tool_call ids`);
    const answered = new Set<string>();
    let j = i + 1;
    for (; j < wire.length; j++) {
      const r = wire[j];
      if (!isRecord(r) || r["role"] !== "tool") break;
      const id = String(r["tool_call_id"]);
      if (!ids.includes(id)) problems.push(`messages[${j}]: tool_call_id ${id} does not answer the preceding tool_calls`);
      if (answered.has(id)) problems.push(`messages[${j}]: second response for ${id}`);
      answered.add(id);
    }
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length > 0) problems.push(`messages[${i}]: tool_call_ids did not have response messages: ${missing.join(", ")}`);
    i = j - 1;
  }
  return problems;
}
