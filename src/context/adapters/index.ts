// The four provider formats, format detection, and unwrapping of request bodies. Each adapter is
// lossless both ways: fromX(toX(neutral)) and toX(fromX(wire)) give back what went in, including
// fields we do not model.
import { FormatError, FormatMismatchError } from "../errors.js";
import type { Message } from "../messages.js";
import { checkAISDK, fromAISDK, toAISDK } from "./ai-sdk.js";
import { checkAnthropic, fromAnthropic, toAnthropic } from "./anthropic.js";
import { checkOpenAIChat, fromOpenAIChat, toOpenAIChat } from "./openai-chat.js";
import { checkOpenAIResponses, fromOpenAIResponses, toOpenAIResponses } from "./openai-responses.js";
import { isRecord } from "./shape.js";

export { fromAISDK, toAISDK, checkAISDK } from "./ai-sdk.js";
export { fromAnthropic, toAnthropic, checkAnthropic } from "./anthropic.js";
export { fromOpenAIChat, toOpenAIChat, checkOpenAIChat } from "./openai-chat.js";
export { fromOpenAIResponses, toOpenAIResponses, checkOpenAIResponses, continuesServerState } from "./openai-responses.js";

export type Format = "anthropic" | "openai-chat" | "openai-responses" | "ai-sdk";
export const FORMATS: readonly Format[] = ["anthropic", "openai-chat", "openai-responses", "ai-sdk"];

export interface Adapter {
  readonly format: Format;
  /** Parses provider messages; throws FormatError (with the path of the offending value) on anything malformed. */
  fromProvider(wire: readonly unknown[]): Message[];
  toProvider(messages: readonly Message[]): Record<string, unknown>[];
  /** What the provider's API would reject about tool pairing in `wire`; empty means it accepts it. */
  check(wire: readonly unknown[]): string[];
}

export const adapters: Readonly<Record<Format, Adapter>> = {
  anthropic: { format: "anthropic", fromProvider: fromAnthropic, toProvider: toAnthropic, check: checkAnthropic },
  "openai-chat": { format: "openai-chat", fromProvider: fromOpenAIChat, toProvider: toOpenAIChat, check: checkOpenAIChat },
  "openai-responses": { format: "openai-responses", fromProvider: fromOpenAIResponses, toProvider: toOpenAIResponses, check: checkOpenAIResponses },
  "ai-sdk": { format: "ai-sdk", fromProvider: fromAISDK, toProvider: toAISDK, check: checkAISDK },
};

export function getAdapter(format: string): Adapter {
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new FormatError(`unknown format ${JSON.stringify(format)}; use one of ${FORMATS.join(", ")}`);
  }
  return adapters[format as Format];
}

/** A conversation file: a bare array, or an object whose `messages` (or `input`) array is the conversation. */
export interface Conversation {
  readonly items: readonly unknown[];
  /** Puts a converted array back where it came from (same wrapper object, other fields untouched). */
  wrap(items: readonly unknown[]): unknown;
  readonly key: "messages" | "input" | undefined;
}

export function unwrapConversation(json: unknown): Conversation {
  if (Array.isArray(json)) return { items: json, key: undefined, wrap: (items) => items };
  if (isRecord(json)) {
    for (const key of ["messages", "input"] as const) {
      const items = json[key];
      if (Array.isArray(items)) return { items, key, wrap: (next) => ({ ...json, [key]: next }) };
    }
    if (typeof json["input"] === "string") {
      throw new FormatError('"input" is a plain string, not a list of messages; there are no tool results to manage');
    }
  }
  throw new FormatError('expected a JSON array of messages, or an object with a "messages" or "input" array');
}

/**
 * Which provider format `json` (a message array or a request body) is in. Decided by the first
 * unambiguous signal: Responses item types, Chat Completions tool fields, AI SDK part types,
 * Anthropic block types. Plain text-only conversations are the same in every format; they are
 * reported as the format their wrapper suggests (`input` → Responses), else "openai-chat".
 */
export function detectFormat(json: unknown): Format {
  const conversation = unwrapConversation(json);
  return formatSignal(conversation.items) ?? (conversation.key === "input" ? "openai-responses" : "openai-chat");
}

/**
 * Refuses a conversation that is plainly in another format than `format` (its first format-specific
 * field says so). Reading it as `format` would parse, find no tool calls, and change nothing, silently.
 * A text-only conversation has no signal and is accepted in any format.
 */
export function assertFormat(json: unknown, format: Format): void {
  const detected = formatSignal(unwrapConversation(json).items);
  if (detected !== undefined && detected !== format) throw new FormatMismatchError(format, detected);
}

function formatSignal(items: readonly unknown[]): Format | undefined {
  for (const item of items) {
    if (!isRecord(item)) throw new FormatError("a message is not an object");
    const type = item["type"];
    if (
      typeof type === "string" &&
      (type === "message" || type === "reasoning" || type.startsWith("function_call") || type.endsWith("_call") || type.endsWith("_call_output"))
    ) {
      return "openai-responses";
    }
    if ("tool_calls" in item || "tool_call_id" in item) return "openai-chat";
    const content = item["content"];
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (!isRecord(part)) continue;
      const t = part["type"];
      if (t === "tool-call" || t === "tool-result" || t === "reasoning" || t === "file") return "ai-sdk";
      if (t === "tool_use" || t === "tool_result" || t === "thinking" || t === "redacted_thinking") return "anthropic";
      if (t === "input_text" || t === "output_text" || t === "input_image") return "openai-responses";
      if (t === "image_url") return "openai-chat";
      if (t === "image" && "source" in part) return "anthropic";
      if (t === "image" && "image" in part) return "ai-sdk";
    }
  }
  return undefined;
}
