// Vercel AI SDK `ModelMessage` (v5+) ⇄ neutral. A tool message may hold several `tool-result`
// parts; each becomes a neutral tool message (`joined` for the way back). Results carry a typed
// `output` (text / json / error-text / error-json / content); the type is kept so JSON stays JSON.
import { FormatError } from "../errors.js";
import type { AssistantPart, ContentPart, Hints, ImagePart, Message, TextPart, ToolCallPart, ToolResultMessage } from "../messages.js";
import { errorPrefix, markError, unmarkError } from "./error-marker.js";
import { build, extraOf, isRecord, kindOf, record, str, withOptional, type Json } from "./shape.js";

const OUTPUT_KEY = "aisdk:output";
const LEGACY_MEDIA = "aisdk:media";
/** The deprecated AI SDK 7 part an image came in (`image-data`, or `file-data` of an image type), to go back as it came. */
const DEPRECATED_PART = "aisdk:partType";

export function fromAISDK(input: readonly unknown[]): Message[] {
  const out: Message[] = [];
  input.forEach((raw, i) => {
    const at = `messages[${i}]`;
    const msg = record(raw, at, "a message");
    const role = str(msg, "role", at);
    const content = msg["content"];
    const extra = extraOf(msg, ["role", "content"]);
    const hints: Hints | undefined = typeof content === "string" ? { content: "string" } : undefined;
    if (role === "system" || role === "user") {
      out.push(withOptional({ role, content: parts(content, at) } as Message, { extra, hints }));
      return;
    }
    if (role === "assistant") {
      out.push(withOptional({ role, content: assistantParts(content, at) } as Message, { extra, hints }));
      return;
    }
    if (role !== "tool") throw new FormatError(`unknown role ${JSON.stringify(role)}; ModelMessage roles are system, user, assistant and tool`, at);
    if (!Array.isArray(content)) throw new FormatError(`expected a tool message's "content" to be an array, got ${kindOf(content)}`, at);
    const start = out.length;
    content.forEach((rawPart, j) => {
      const pat = `${at}.content[${j}]`;
      const p = record(rawPart, pat, "a tool content part");
      const joined: Hints | undefined = out.length > start ? { joined: true } : out[out.length - 1]?.role === "tool" ? { joined: false } : undefined;
      if (p["type"] !== "tool-result") {
        // approval responses and future part kinds: carried, not interpreted
        out.push(
          withOptional({ role: "tool", toolCallId: "", isError: false, content: [{ type: "raw", value: p }], carried: true } as ToolResultMessage, {
            extra: { "aisdk:part": true, ...(out.length === start && extra ? { "aisdk:message": extra } : {}) },
            hints: joined,
          }),
        );
        return;
      }
      out.push(toolResultFrom(p, pat, out.length === start ? extra : undefined, joined));
    });
  });
  return out;
}

function toolResultFrom(p: Json, at: string, messageExtra: Json | undefined, hints: Hints | undefined): ToolResultMessage {
  const toolCallId = str(p, "toolCallId", at);
  const toolName = str(p, "toolName", at);
  const output = record(p["output"], `${at}.output`, "a tool result output");
  const kind = output["type"];
  let parts: ContentPart[];
  let flagged = false;
  let outputKind: string;
  if ((kind === "text" || kind === "error-text") && typeof output["value"] === "string") {
    parts = [{ type: "text", text: output["value"] }];
    flagged = kind === "error-text";
    outputKind = "text";
  } else if ((kind === "json" || kind === "error-json") && "value" in output) {
    parts = [{ type: "text", text: JSON.stringify(output["value"]) ?? "null" }];
    flagged = kind === "error-json";
    outputKind = "json";
  } else if (kind === "content" && Array.isArray(output["value"])) {
    parts = output["value"].map((raw, j): ContentPart => {
      const c = record(raw, `${at}.output.value[${j}]`, "a content item");
      if (c["type"] === "text" && typeof c["text"] === "string")
        return withOptional({ type: "text", text: c["text"] } as TextPart, { extra: extraOf(c, ["type", "text"]) });
      // AI SDK 7: { type: "file", mediaType, data: { type: "data", data } }; before 7: { type: "media", data, mediaType },
      // remembered so it goes back in the shape it came in.
      const fileData =
        isRecord(c["data"]) && c["data"]["type"] === "data" && typeof c["data"]["data"] === "string" && Object.keys(c["data"]).length === 2
          ? c["data"]["data"]
          : undefined;
      if (c["type"] === "file" && fileData !== undefined && typeof c["mediaType"] === "string") {
        return withOptional({ type: "image", data: fileData, mediaType: c["mediaType"] } as ImagePart, { extra: extraOf(c, ["type", "data", "mediaType"]) });
      }
      if (
        (c["type"] === "image-data" || (c["type"] === "file-data" && typeof c["mediaType"] === "string" && c["mediaType"].startsWith("image"))) &&
        typeof c["data"] === "string" &&
        typeof c["mediaType"] === "string"
      ) {
        return withOptional({ type: "image", data: c["data"], mediaType: c["mediaType"] } as ImagePart, {
          extra: { ...extraOf(c, ["type", "data", "mediaType"]), [DEPRECATED_PART]: c["type"] },
        });
      }
      if (c["type"] === "media" && typeof c["data"] === "string" && typeof c["mediaType"] === "string") {
        return withOptional({ type: "image", data: c["data"], mediaType: c["mediaType"] } as ImagePart, {
          extra: { ...extraOf(c, ["type", "data", "mediaType"]), [LEGACY_MEDIA]: true },
        });
      }
      return { type: "raw", value: c };
    });
    outputKind = "content";
  } else {
    parts = [{ type: "raw", value: output }];
    outputKind = "raw";
  }
  const unmarked = unmarkError(parts, flagged, false);
  const extra: Json = { ...extraOf(p, ["type", "toolCallId", "toolName", "output"]), [OUTPUT_KEY]: outputKind };
  const outputExtra = extraOf(output, ["type", "value"]);
  if (outputExtra && outputKind !== "raw") extra["aisdk:outputExtra"] = outputExtra;
  if (messageExtra) extra["aisdk:message"] = messageExtra;
  return withOptional({ role: "tool", toolCallId, toolName, isError: unmarked.isError, content: unmarked.parts } as ToolResultMessage, {
    errorCode: unmarked.errorCode,
    extra,
    hints,
  });
}

function parts(content: unknown, at: string): ContentPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new FormatError(`expected "content" to be a string or an array, got ${kindOf(content)}`, at);
  return content.map((raw, j) => part(record(raw, `${at}.content[${j}]`, "a content part"), `${at}.content[${j}]`));
}

function part(p: Json, at: string): ContentPart {
  if (p["type"] === "text" && typeof p["text"] === "string")
    return withOptional({ type: "text", text: p["text"] } as TextPart, { extra: extraOf(p, ["type", "text"]) });
  if (p["type"] === "image" && typeof p["image"] === "string") {
    const image = p["image"];
    const isUrl = /^(https?:|data:)/.test(image);
    return withOptional({ type: "image", ...(isUrl ? { url: image } : { data: image }) } as ImagePart, {
      mediaType: typeof p["mediaType"] === "string" ? p["mediaType"] : undefined,
      extra: extraOf(p, ["type", "image", "mediaType"]),
    });
  }
  if (typeof p["type"] !== "string") throw new FormatError(`a content part needs a string "type"`, at);
  return { type: "raw", value: p };
}

function assistantParts(content: unknown, at: string): AssistantPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new FormatError(`expected "content" to be a string or an array, got ${kindOf(content)}`, at);
  // calls this message asks the user to approve (AI SDK 6 tool approval)
  const approvals = new Set<string>();
  for (const raw of content)
    if (isRecord(raw) && raw["type"] === "tool-approval-request" && typeof raw["toolCallId"] === "string") approvals.add(raw["toolCallId"]);
  return content.map((raw, j): AssistantPart => {
    const pat = `${at}.content[${j}]`;
    const p = record(raw, pat, "a content part");
    // A provider-executed call (a server tool) is answered inside the assistant message by the provider:
    // it is carried as it is, never paired (a synthetic result for it would be a result without a pending call).
    if (p["type"] === "tool-call" && p["providerExecuted"] !== true) {
      const id = str(p, "toolCallId", pat);
      return withOptional({ type: "toolCall", id, name: str(p, "toolName", pat), input: p["input"] } as ToolCallPart, {
        approvalRequested: approvals.has(id) ? true : undefined,
        extra: extraOf(p, ["type", "toolCallId", "toolName", "input"]),
      });
    }
    return part(p, pat);
  });
}

export function toAISDK(messages: readonly Message[]): Json[] {
  const out: Json[] = [];
  let toolEnvelope: unknown[] | undefined;
  let envelopeHasExtra = false;
  let prevRole: Message["role"] | undefined;
  for (const message of messages) {
    if (message.role !== "tool") {
      toolEnvelope = undefined;
      prevRole = message.role;
      // A system message's content is always a string in ModelMessage.
      const content =
        message.role === "system" && message.content.every((p) => p.type === "text")
          ? textOfParts(message.content)
          : renderContent(message.content, message.hints);
      out.push(build(message.extra, { role: message.role, content }));
      continue;
    }
    const extra = (message.extra ?? {}) as Json;
    let partJson: Json;
    if (extra["aisdk:part"] === true && message.content[0]?.type === "raw") partJson = message.content[0].value as Json;
    else partJson = renderResult(message, extra);
    const joined = message.hints?.joined;
    const messageExtra = extra["aisdk:message"] as Json | undefined;
    if (toolEnvelope !== undefined && (joined === true || (joined === undefined && prevRole === "tool"))) {
      toolEnvelope.push(partJson);
      // The envelope's own fields (providerOptions) ride on the part that opened it; pairing repair can
      // put a synthetic result first (call order), and they must still reach the envelope.
      if (messageExtra !== undefined && !envelopeHasExtra) {
        out[out.length - 1] = build(messageExtra, { role: "tool", content: toolEnvelope });
        envelopeHasExtra = true;
      }
    } else {
      toolEnvelope = [partJson];
      envelopeHasExtra = messageExtra !== undefined;
      out.push(build(messageExtra, { role: "tool", content: toolEnvelope }));
    }
    prevRole = "tool";
  }
  return out;
}

function renderResult(message: ToolResultMessage, extra: Json): Json {
  const { [OUTPUT_KEY]: kind, "aisdk:outputExtra": outputExtra, "aisdk:message": _m, ...partExtra } = extra;
  const parts = markError(message.content, message.isError ? errorPrefix(message.errorCode, false) : "");
  let output: Json;
  if (kind === "raw" && parts.length === 1 && parts[0]!.type === "raw") output = parts[0]!.value as Json;
  else if (kind === "content" || parts.some((p) => p.type !== "text")) {
    output = {
      type: "content",
      value: parts.map((p) =>
        p.type === "text" ? build(p.extra, { type: "text", text: p.text }) : p.type === "image" ? renderImageResult(p) : (p.value as Json),
      ),
    };
  } else {
    const text = parts.map((p) => (p as TextPart).text).join("\n");
    let json: { value: unknown } | undefined;
    if (kind === "json") {
      try {
        json = { value: JSON.parse(text) as unknown };
      } catch {
        json = undefined;
      }
    }
    output = json ? { type: message.isError ? "error-json" : "json", value: json.value } : { type: message.isError ? "error-text" : "text", value: text };
  }
  if (isRecord(outputExtra)) output = build(outputExtra, output);
  return build(partExtra, { type: "tool-result", toolCallId: message.toolCallId, toolName: message.toolName ?? "unknown", output });
}

/** An image in a tool result: AI SDK 7's file part, or the `media` part it arrived as. */
function renderImageResult(p: ImagePart): Json {
  const { [LEGACY_MEDIA]: legacy, [DEPRECATED_PART]: deprecated, ...extra } = (p.extra ?? {}) as Json;
  const mediaType = p.mediaType ?? "image/png";
  const rest = Object.keys(extra).length > 0 ? extra : undefined;
  if (legacy === true) return build(rest, { type: "media", data: p.data ?? p.url ?? "", mediaType });
  if ((deprecated === "image-data" || deprecated === "file-data") && p.data !== undefined) return build(rest, { type: deprecated, data: p.data, mediaType });
  return build(rest, { type: "file", mediaType, data: p.data !== undefined ? { type: "data", data: p.data } : { type: "url", url: p.url ?? "" } });
}

function renderContent(parts: readonly AssistantPart[], hints: Hints | undefined): unknown {
  if (hints?.content === "string" && parts.every((p) => p.type === "text" && p.extra === undefined)) return parts.map((p) => (p as TextPart).text).join("\n");
  return parts.map((p): Json => {
    switch (p.type) {
      case "text":
        return build(p.extra, { type: "text", text: p.text });
      case "image":
        return build(p.extra, { type: "image", image: p.url ?? p.data ?? "", mediaType: p.mediaType });
      case "toolCall":
        return build(p.extra, { type: "tool-call", toolCallId: p.id, toolName: p.name, input: p.input ?? {} });
      case "raw":
        return p.value as Json;
    }
  });
}

/** What the AI SDK would reject (AI_MissingToolResultsError and friends). */
export function checkAISDK(wire: readonly unknown[]): string[] {
  const problems: string[] = [];
  let open: Set<string> | undefined;
  let approvals = new Set<string>();
  wire.forEach((m, i) => {
    if (!isRecord(m)) {
      problems.push(`messages[${i}] is not an object`);
      return;
    }
    const content = Array.isArray(m["content"]) ? m["content"].filter(isRecord) : [];
    if (m["role"] === "tool") {
      for (const p of content) {
        if (p["type"] !== "tool-result") continue;
        const id = String(p["toolCallId"]);
        if (!open?.has(id)) problems.push(`messages[${i}]: tool result ${id} has no pending tool call`);
        open?.delete(id);
      }
      return;
    }
    if (open && open.size > 0) problems.push(`messages[${i}]: tool results are missing for tool calls ${[...open].join(", ")}`);
    open = undefined;
    if (m["role"] === "assistant") {
      const ids = content.filter((p) => p["type"] === "tool-call" && p["providerExecuted"] !== true).map((p) => String(p["toolCallId"]));
      if (new Set(ids).size !== ids.length) problems.push(`messages[${i}]: duplicate tool call ids`);
      open = new Set(ids);
      approvals = new Set(content.filter((p) => p["type"] === "tool-approval-request").map((p) => String(p["toolCallId"])));
    }
  });
  // calls awaiting approval at the end: the SDK runs the approved ones (collectToolApprovals) before it sends
  if (open) for (const id of approvals) open.delete(id);
  if (open && open.size > 0) problems.push(`tool results are missing for tool calls ${[...open].join(", ")}`);
  return problems;
}

function textOfParts(parts: readonly AssistantPart[]): string {
  return parts.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}
