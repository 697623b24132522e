// The provider-neutral message model. Four roles; an assistant's tool calls are parts of its content
// (so the order of text, reasoning and calls survives every adapter); one tool result per `tool`
// message. Anything a provider sends that we do not model rides along in `extra` (message, part and
// call level) so adapters are lossless both ways.
import { isImageStub } from "./image-stub.js";

/** Fields of the provider object we do not model, copied back verbatim on the way out. */
export type Extra = Readonly<Record<string, unknown>>;

export interface TextPart {
  readonly type: "text";
  readonly text: string;
  readonly extra?: Extra;
}

/** An image: inline base64 `data` with a media type, or a `url` (which may be a data: URL or a file id). */
export interface ImagePart {
  readonly type: "image";
  readonly mediaType?: string;
  readonly data?: string;
  readonly url?: string;
  readonly extra?: Extra;
}

export interface ToolCallPart {
  readonly type: "toolCall";
  readonly id: string;
  readonly name: string;
  /** Parsed arguments. When the provider sent a JSON string that does not re-serialise identically, `rawInput` keeps it. */
  readonly input: unknown;
  readonly rawInput?: string;
  /**
   * The call waits for the user's approval (AI SDK `tool-approval-request`): while the history ends
   * with it (nothing but tool messages after it), having no result yet is valid — it gets no synthetic one.
   */
  readonly approvalRequested?: true;
  readonly extra?: Extra;
}

/** A provider block or item we carry but do not interpret (thinking, reasoning, server tool blocks, documents, …). */
export interface RawPart {
  readonly type: "raw";
  readonly value: unknown;
}

export type ContentPart = TextPart | ImagePart | RawPart;
export type AssistantPart = TextPart | ImagePart | RawPart | ToolCallPart;

/**
 * How the provider envelope looked, so an adapter can rebuild it exactly:
 * - `content`: the provider sent a bare string, a parts array, `null`, or no content field (formats
 *   whose default for text-only content is a string need "parts" to give an array back);
 * - `joined`: this message shared one provider envelope with the previous neutral message (true), or
 *   explicitly did not (false). Unset means "adapter decides" (e.g. synthetic results join their run).
 */
export interface Hints {
  readonly content?: "string" | "parts" | "null" | "absent";
  readonly joined?: boolean;
}

export interface SystemMessage {
  readonly role: "system";
  readonly content: readonly ContentPart[];
  readonly extra?: Extra;
  readonly hints?: Hints;
}

export interface UserMessage {
  readonly role: "user";
  readonly content: readonly ContentPart[];
  /** Output of a sub-agent dressed as a user message: it ages and compacts like a tool result. */
  readonly agentFeedback?: boolean;
  readonly extra?: Extra;
  readonly hints?: Hints;
}

export interface AssistantMessage {
  readonly role: "assistant";
  readonly content: readonly AssistantPart[];
  readonly extra?: Extra;
  readonly hints?: Hints;
}

export interface ToolResultMessage {
  readonly role: "tool";
  readonly toolCallId: string;
  readonly toolName?: string;
  readonly isError: boolean;
  readonly errorCode?: string;
  readonly content: readonly ContentPart[];
  /** A file that already holds this result's full text (e.g. the capture layer's spill file). */
  readonly spillPath?: string;
  /**
   * Not a result: a provider part riding in a tool envelope (an AI SDK `tool-approval-response`), as one
   * raw part with `toolCallId` "". Pairing keeps it where it is (with its turn's results when next to
   * them), never counts it as an answer, and never removes it.
   */
  readonly carried?: true;
  readonly extra?: Extra;
  readonly hints?: Hints;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

export function toolCallsOf(message: Message): readonly ToolCallPart[] {
  if (message.role !== "assistant") return [];
  const calls: ToolCallPart[] = [];
  for (const part of message.content) if (part.type === "toolCall") calls.push(part);
  return calls;
}

/**
 * The text of a message's content: text parts joined by "\n". This is the unit budgets measure,
 * cuts preview, and the archive restores byte-identically. The stub of a cleared image
 * (image-stub.ts) stands where the image stood and is not text here: no budget counts or cuts it, and
 * no text stub swallows its marker.
 */
export function textOf(message: { readonly content: readonly AssistantPart[] }): string {
  let out: string | undefined;
  for (const part of message.content) {
    if (part.type !== "text" || isImageStub(part.text)) continue;
    out = out === undefined ? part.text : out + "\n" + part.text;
  }
  return out ?? "";
}

/**
 * Replace a message's text with `text`, keeping images, image stubs and raw parts in place. Several text parts
 * collapse into one at the position of the first; their extras merge so e.g. a cache_control mark survives.
 */
export function withText<M extends SystemMessage | UserMessage | ToolResultMessage>(message: M, text: string): M {
  const content: ContentPart[] = [];
  let extra: Record<string, unknown> | undefined;
  let placed = -1;
  for (const part of message.content) {
    if (part.type === "text" && !isImageStub(part.text)) {
      if (part.extra) extra = { ...extra, ...part.extra };
      if (placed < 0) {
        placed = content.length;
        content.push(part);
      }
    } else content.push(part);
  }
  const textPart: TextPart = extra ? { type: "text", text, extra } : { type: "text", text };
  if (placed < 0) content.unshift(textPart);
  else content[placed] = textPart;
  const next: { -readonly [K in keyof M]: M[K] } = { ...message, content };
  // "null"/"absent" described an empty content; the message now has text.
  const shape = message.hints?.content;
  if (shape === "null" || shape === "absent") {
    const { content: _shape, ...rest } = message.hints!;
    if (Object.keys(rest).length > 0) next.hints = rest;
    else delete next.hints;
  }
  return next;
}

export function toolResult(toolCallId: string, text: string, options: { isError?: boolean; errorCode?: string; toolName?: string } = {}): ToolResultMessage {
  const message: { -readonly [K in keyof ToolResultMessage]: ToolResultMessage[K] } = {
    role: "tool",
    toolCallId,
    isError: options.isError ?? false,
    content: [{ type: "text", text }],
  };
  if (options.errorCode !== undefined) message.errorCode = options.errorCode;
  if (options.toolName !== undefined) message.toolName = options.toolName;
  return message;
}

export function userText(text: string): UserMessage {
  return { role: "user", content: [{ type: "text", text }] };
}

export function systemText(text: string): SystemMessage {
  return { role: "system", content: [{ type: "text", text }] };
}

export function assistant(text: string, calls: readonly { id: string; name: string; input?: unknown }[] = []): AssistantMessage {
  const content: AssistantPart[] = [];
  if (text !== "") content.push({ type: "text", text });
  for (const call of calls) content.push({ type: "toolCall", id: call.id, name: call.name, input: call.input ?? {} });
  return { role: "assistant", content };
}
