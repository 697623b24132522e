// OpenAI Responses input items ⇄ neutral. Items are flat: one model turn is a run of reasoning,
// message and function_call items, which becomes one neutral assistant message (so the calls form
// one block for pairing); each function_call_output is a tool message. Items we do not model ride as
// raw parts (inside the assistant run when they are model output, or an item_reference among a run's
// calls; as a user-side raw item otherwise).
import { FormatError } from "../errors.js";
import type { AssistantMessage, AssistantPart, ContentPart, Hints, ImagePart, Message, TextPart, ToolCallPart } from "../messages.js";
import { errorPrefix, markError, unmarkError } from "./error-marker.js";
import { build, extraOf, isRecord, kindOf, parseArguments, record, str, withOptional, type Json } from "./shape.js";

const MESSAGE_KEY = "openai:message";
const ITEM_KEY = "openai:item";

export function fromOpenAIResponses(input: readonly unknown[]): Message[] {
  const out: Message[] = [];
  let group: { content: AssistantPart[]; extra?: Json; hints?: Hints; hasMessage: boolean } | undefined;
  const close = () => {
    if (!group) return;
    out.push(withOptional({ role: "assistant", content: group.content } as AssistantMessage, { extra: group.extra, hints: group.hints }));
    group = undefined;
  };
  input.forEach((raw, i) => {
    const at = `input[${i}]`;
    const item = record(raw, at, "an input item");
    const type = item["type"];
    if (type === undefined || type === "message") {
      const role = str(item, "role", at);
      const content = item["content"];
      if (role === "assistant") {
        if (group?.hasMessage) close();
        group ??= { content: [], hasMessage: false };
        group.hasMessage = true;
        group.extra = { [MESSAGE_KEY]: { ...extraOf(item, ["role", "content"]), at: group.content.length } };
        group.hints = { content: typeof content === "string" ? "string" : "parts" };
        group.content.push(...parts(content, at, "output_text"));
        return;
      }
      close();
      if (role !== "user" && role !== "system" && role !== "developer") {
        throw new FormatError(`unknown role ${JSON.stringify(role)}; message items are user, system, developer or assistant`, at);
      }
      const extra = extraOf(item, ["role", "content"]);
      const neutralRole = role === "user" ? "user" : "system";
      out.push(
        withOptional({ role: neutralRole, content: parts(content, at, "input_text") } as Message, {
          extra: role === "developer" ? { ...extra, "openai:role": "developer" } : extra,
          hints: typeof content === "string" ? { content: "string" } : { content: "parts" },
        }),
      );
      return;
    }
    if (typeof type !== "string") throw new FormatError(`an input item needs a string "type"`, at);
    if (type === "function_call" || type === "custom_tool_call") {
      group ??= { content: [], hasMessage: false };
      group.content.push(callFrom(item, type, at));
      return;
    }
    if (type === "function_call_output" || type === "custom_tool_call_output") {
      close();
      const output = item["output"];
      const unmarked = unmarkError(outputParts(output, at), false, true);
      out.push(
        withOptional({ role: "tool", toolCallId: str(item, "call_id", at), isError: unmarked.isError, content: unmarked.parts } as Message, {
          errorCode: unmarked.errorCode,
          extra: extraOf(item, ["call_id", "output"]),
          hints: typeof output === "string" ? { content: "string" } : { content: "parts" },
        }),
      );
      return;
    }
    if (type === "item_reference" && group?.content.some((p) => p.type === "toolCall")) {
      // an item of the model turn its calls are in (e.g. a reasoning item sent by reference between two
      // calls): as a user-side item it would split the turn, and a call's output would look late
      group.content.push({ type: "raw", value: item });
      return;
    }
    if (type === "reasoning" || type.endsWith("_call")) {
      group ??= { content: [], hasMessage: false };
      group.content.push({ type: "raw", value: item });
      return;
    }
    close();
    out.push({ role: "user", content: [{ type: "raw", value: item }], extra: { [ITEM_KEY]: true } });
  });
  close();
  return out;
}

function callFrom(item: Json, type: string, at: string): ToolCallPart {
  const argsKey = type === "function_call" ? "arguments" : "input";
  const rawArgs = item[argsKey];
  if (typeof rawArgs !== "string") throw new FormatError(`expected "${argsKey}" to be a string, got ${kindOf(rawArgs)}`, at);
  const { input, rawInput } = type === "function_call" ? parseArguments(rawArgs) : { input: rawArgs, rawInput: undefined };
  return withOptional({ type: "toolCall", id: str(item, "call_id", at), name: str(item, "name", at), input } as ToolCallPart, {
    rawInput,
    extra: extraOf(item, ["call_id", "name", argsKey]),
  });
}

function parts(content: unknown, at: string, defaultText: string): ContentPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new FormatError(`expected "content" to be a string or an array, got ${kindOf(content)}`, at);
  return content.map((raw, j) => part(record(raw, `${at}.content[${j}]`, "a content part"), `${at}.content[${j}]`, defaultText));
}

function part(p: Json, at: string, defaultText: string): ContentPart {
  const type = p["type"];
  if ((type === "input_text" || type === "output_text") && typeof p["text"] === "string") {
    const extra = extraOf(p, ["type", "text"]);
    return withOptional({ type: "text", text: p["text"] } as TextPart, {
      extra: type !== defaultText ? { ...extra, "openai:type": type } : extra,
    });
  }
  if (type === "input_image" && typeof p["image_url"] === "string") {
    return withOptional({ type: "image", url: p["image_url"] } as ImagePart, { extra: extraOf(p, ["type", "image_url"]) });
  }
  if (typeof type !== "string") throw new FormatError(`a content part needs a string "type"`, at);
  return { type: "raw", value: p };
}

function outputParts(output: unknown, at: string): ContentPart[] {
  if (typeof output === "string") return [{ type: "text", text: output }];
  if (!Array.isArray(output)) throw new FormatError(`expected "output" to be a string or an array, got ${kindOf(output)}`, at);
  return output.map((raw, j) => part(record(raw, `${at}.output[${j}]`, "an output part"), `${at}.output[${j}]`, "input_text"));
}

export function toOpenAIResponses(messages: readonly Message[]): Json[] {
  const out: Json[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
      case "user": {
        if (message.extra?.[ITEM_KEY] === true && message.content.length === 1 && message.content[0]!.type === "raw") {
          out.push(message.content[0]!.value as Json);
          break;
        }
        const { "openai:role": devRole, ...extra } = (message.extra ?? {}) as Json;
        const role = message.role === "user" ? "user" : (devRole ?? "system");
        out.push(build(extra, { role, content: renderParts(message.content, message.hints, "input_text") }));
        break;
      }
      case "assistant":
        renderAssistant(message, out);
        break;
      case "tool": {
        const content = markError(message.content, message.isError ? errorPrefix(message.errorCode, true) : "");
        const extra = message.extra ?? {};
        out.push(
          build(extra, {
            type: extra["type"] ?? "function_call_output",
            call_id: message.toolCallId,
            output: renderParts(content, message.hints, "input_text"),
          }),
        );
        break;
      }
    }
  }
  return out;
}

function renderAssistant(message: AssistantMessage, out: Json[]): void {
  const meta = message.extra?.[MESSAGE_KEY] as Json | undefined;
  let run: ContentPart[] | undefined;
  let emitted = false;
  const flush = () => {
    if (run === undefined) return;
    const { at: _at, ...itemExtra } = (!emitted && meta ? meta : { type: "message" }) as Json;
    out.push(build(itemExtra, { role: "assistant", content: renderParts(run, emitted ? undefined : message.hints, "output_text") }));
    emitted = true;
    run = undefined;
  };
  const parts = message.content;
  if (meta !== undefined && !parts.some((p) => p.type === "text" || p.type === "image")) {
    // a message item with empty content: put it back where it was
    const at = typeof meta["at"] === "number" ? (meta["at"] as number) : 0;
    const before = parts.slice(0, at);
    for (const p of before) out.push(renderNonText(p));
    run = [];
    flush();
    for (const p of parts.slice(at)) out.push(renderNonText(p));
    return;
  }
  for (const p of parts) {
    if (p.type === "text" || p.type === "image") (run ??= []).push(p);
    else {
      flush();
      out.push(renderNonText(p));
    }
  }
  flush();
}

function renderNonText(p: AssistantPart): Json {
  if (p.type === "toolCall") {
    const extra = p.extra ?? {};
    const custom = extra["type"] === "custom_tool_call";
    return build(extra, {
      type: extra["type"] ?? "function_call",
      call_id: p.id,
      name: p.name,
      [custom ? "input" : "arguments"]: custom ? p.input : (p.rawInput ?? JSON.stringify(p.input ?? {})),
    });
  }
  if (p.type === "raw") return p.value as Json;
  return { type: "message", role: "assistant", content: [renderPart(p, "output_text")] };
}

function renderParts(parts: readonly ContentPart[], hints: Hints | undefined, defaultText: string): unknown {
  // Text-only content is a plain string unless the input had an array (the common shape, and what a synthetic result gets).
  const plain = hints?.content === "string" || (hints?.content !== "parts" && parts.length > 0);
  if (plain && parts.every((p) => p.type === "text" && p.extra === undefined)) {
    return parts.map((p) => (p as TextPart).text).join("\n");
  }
  return parts.map((p) => renderPart(p, defaultText));
}

function renderPart(p: ContentPart, defaultText: string): Json {
  switch (p.type) {
    case "text": {
      const { "openai:type": type, ...extra } = (p.extra ?? {}) as Json;
      return build(extra, { type: type ?? defaultText, text: p.text });
    }
    case "image":
      return build(p.extra, { type: "input_image", image_url: p.url ?? `data:${p.mediaType ?? "image/png"};base64,${p.data ?? ""}` });
    case "raw":
      return p.value as Json;
  }
}

/**
 * Whether a Responses request body continues state the provider keeps: `previous_response_id`,
 * `conversation`, or `item_reference` items in `input`. Its outputs may then answer calls that are not
 * in `input` (PairingOptions.externalCalls).
 */
export function continuesServerState(body: unknown): boolean {
  if (!isRecord(body)) return false;
  const previous = body["previous_response_id"];
  const conversation = body["conversation"];
  if ((typeof previous === "string" && previous !== "") || (conversation !== undefined && conversation !== null)) return true;
  const input = body["input"];
  return Array.isArray(input) && input.some((item) => isRecord(item) && item["type"] === "item_reference");
}

/** What the Responses API would reject: a call without an output, an output without an earlier call, duplicates. */
export function checkOpenAIResponses(wire: readonly unknown[]): string[] {
  const problems: string[] = [];
  const calls = new Set<string>();
  const answered = new Set<string>();
  wire.forEach((item, i) => {
    if (!isRecord(item)) {
      problems.push(`input[${i}] is not an object`);
      return;
    }
    const type = item["type"];
    const id = String(item["call_id"]);
    if (type === "function_call" || type === "custom_tool_call") {
      if (calls.has(id) && !answered.has(id)) problems.push(`input[${i}]: duplicate call_id ${id}`);
      calls.add(id);
      answered.delete(id);
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      if (!calls.has(id)) problems.push(`input[${i}]: No tool call found for function call output with call_id ${id}`);
      else if (answered.has(id)) problems.push(`input[${i}]: second output for call_id ${id}`);
      answered.add(id);
    }
  });
  for (const id of calls) if (!answered.has(id)) problems.push(`No tool output found for function call ${id}`);
  return problems;
}
