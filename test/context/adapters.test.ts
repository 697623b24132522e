import { modelMessageSchema } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  adapters,
  assertFormat,
  detectFormat,
  ensureToolResultPairing,
  FORMATS,
  FormatError,
  fromAISDK,
  fromAnthropic,
  fromOpenAIChat,
  getAdapter,
  textOf,
  toAISDK,
  toAnthropic,
  toolCallsOf,
  toolResult,
  toOpenAIChat,
  unwrapConversation,
  userText,
  assistant,
  systemText,
  type Format,
  type Message,
  type ToolResultMessage,
} from "../../src/context/index.js";
import { aiSdkTranscript, anthropicTranscript, openaiChatTranscript, openaiResponsesTranscript } from "./fixtures.js";

const transcripts: Record<Format, unknown[]> = {
  anthropic: anthropicTranscript,
  "openai-chat": openaiChatTranscript,
  "openai-responses": openaiResponsesTranscript,
  "ai-sdk": aiSdkTranscript,
};

describe("adapters: lossless round trips on realistic transcripts", () => {
  for (const format of FORMATS) {
    it(`${format}: provider → neutral → provider gives back every field`, () => {
      const wire = transcripts[format];
      const adapter = getAdapter(format);
      const neutral = adapter.fromProvider(structuredClone(wire));
      expect(adapter.toProvider(neutral)).toEqual(wire);
    });

    it(`${format}: neutral → provider → neutral is the identity`, () => {
      const adapter = adapters[format];
      const neutral = adapter.fromProvider(transcripts[format]);
      const again = adapter.fromProvider(JSON.parse(JSON.stringify(adapter.toProvider(neutral))) as unknown[]);
      expect(again).toEqual(neutral);
    });

    it(`${format}: detectFormat recognises the bare array and a request body`, () => {
      expect(detectFormat(transcripts[format])).toBe(format);
      const key = format === "openai-responses" ? "input" : "messages";
      expect(detectFormat({ model: "m", [key]: transcripts[format] })).toBe(format);
    });

    it(`${format}: the provider check accepts the transcript`, () => {
      expect(adapters[format].check(transcripts[format])).toEqual([]);
    });
  }

  it("anthropic: several results in one user message become one tool message each, text after them a user message", () => {
    const neutral = fromAnthropic(anthropicTranscript);
    expect(neutral.slice(2, 5).map((m) => m.role)).toEqual(["tool", "tool", "user"]);
    const [a, b] = neutral.slice(2, 4) as ToolResultMessage[];
    expect(a!.toolCallId).toBe("toolu_01A");
    expect(a!.isError).toBe(true);
    expect(b!.isError).toBe(false);
    expect(b!.extra?.["is_error"]).toBe(false);
    expect(neutral[1]!.content.map((p) => p.type)).toEqual(["raw", "text", "toolCall", "toolCall"]);
  });

  it("openai-chat: arguments that are not canonical JSON (or not JSON at all) survive verbatim", () => {
    const neutral = fromOpenAIChat(openaiChatTranscript);
    const calls = toolCallsOf(neutral[3]!);
    expect(calls.map((c) => c.input)).toEqual([{ path: "." }, { path: "README.md" }, undefined]);
    expect(calls[0]!.rawInput).toBeUndefined();
    expect(calls[1]!.rawInput).toBe('{ "path": "README.md" }');
    expect(calls[2]!.rawInput).toBe('{"pattern": "TODO"');
  });

  it("openai-responses: a model turn of reasoning and function_call items is one assistant block", () => {
    const neutral = adapters["openai-responses"].fromProvider(openaiResponsesTranscript);
    const block = neutral[2]!;
    expect(block.role).toBe("assistant");
    expect(toolCallsOf(block).map((c) => c.id)).toEqual(["call_1", "call_2"]);
    expect(neutral[3]!.role).toBe("tool");
    expect(neutral[4]!.role).toBe("tool");
  });

  it("ai-sdk: the AI SDK's own ModelMessage schema accepts the fixture, its round trip, and a repaired builder history", () => {
    const schema = modelMessageSchema.array();
    expect(schema.safeParse(aiSdkTranscript).success).toBe(true);
    expect(schema.safeParse(toAISDK(fromAISDK(aiSdkTranscript))).success).toBe(true);
    const built: Message[] = [
      systemText("sys"),
      userText("go"),
      assistant("", [
        { id: "a", name: "read", input: { p: 1 } },
        { id: "b", name: "bash" },
      ]),
      toolResult("a", "ok"),
      userText("interrupt"),
    ];
    const parsed = schema.safeParse(toAISDK(ensureToolResultPairing(built).messages));
    expect(parsed.success, JSON.stringify(parsed.error?.issues?.slice(0, 1))).toBe(true);
  });

  it("ai-sdk: an image in a tool result round-trips as AI SDK 7's file part, or as the media part of earlier versions", () => {
    const result = (value: unknown[]) => [
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "i", toolName: "shot", input: {} }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "i", toolName: "shot", output: { type: "content", value } }] },
    ];
    const v7 = result([{ type: "file", mediaType: "image/png", data: { type: "data", data: "iVBORw0KGgo=" }, filename: "a.png" }]);
    const v6 = result([{ type: "media", data: "iVBORw0KGgo=", mediaType: "image/png" }]);
    for (const wire of [v7, v6]) {
      const neutral = fromAISDK(wire);
      expect((neutral[1] as ToolResultMessage).content[0]).toMatchObject({ type: "image", data: "iVBORw0KGgo=", mediaType: "image/png" });
      expect(toAISDK(neutral)).toEqual(wire);
    }
    expect(modelMessageSchema.array().safeParse(v7).success).toBe(true);
    // An image the neutral model made itself goes out in the current shape.
    const made = toAISDK([
      ...fromAISDK(v7).slice(0, 1),
      { role: "tool", toolCallId: "i", toolName: "shot", isError: false, content: [{ type: "image", data: "AAAA", mediaType: "image/jpeg" }] },
    ]);
    expect(modelMessageSchema.array().safeParse(made).success).toBe(true);
  });

  it("ai-sdk: json output stays JSON and error-text carries the error code", () => {
    const neutral = adapters["ai-sdk"].fromProvider(aiSdkTranscript);
    const results = neutral.filter((m): m is ToolResultMessage => m.role === "tool");
    expect(JSON.parse(textOf(results[0]!))).toEqual({ name: "spool", version: "0.1.0", private: false, keywords: ["agent", "llm"] });
    expect(results[2]!.isError).toBe(true);
    expect(results[2]!.errorCode).toBe("ENOENT");
    expect(textOf(results[2]!)).toBe("no such file");
    expect(results.map((r) => r.toolName)).toEqual(["read", "fetch_image", "stat"]);
  });

  it("a synthetic result added by pairing joins its block's envelope on the way back", () => {
    const wire = [
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "a", name: "x", input: {} },
          { type: "tool_use", id: "b", name: "x", input: {} },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "ok" }] },
    ];
    expect(adapters.anthropic.check(wire)).not.toEqual([]);
    const repaired = ensureToolResultPairing(fromAnthropic(wire)).messages;
    const out = toAnthropic(repaired);
    expect(out).toHaveLength(2);
    expect((out[1]!["content"] as unknown[]).length).toBe(2);
    expect(adapters.anthropic.check(out)).toEqual([]);
  });

  it("every format converts a neutral history made with the builders and reads it back", () => {
    const neutral: Message[] = [
      systemText("sys"),
      userText("go"),
      assistant("calling", [
        { id: "c1", name: "read", input: { path: "a" } },
        { id: "c2", name: "bash", input: { command: "ls" } },
      ]),
      toolResult("c1", "file a", { toolName: "read" }),
      toolResult("c2", "boom", { isError: true, errorCode: "EXIT_1", toolName: "bash" }),
      assistant("done"),
    ];
    for (const format of FORMATS) {
      const adapter = adapters[format];
      const wire = adapter.toProvider(neutral);
      expect(adapter.check(wire), format).toEqual([]);
      const back = adapter.fromProvider(JSON.parse(JSON.stringify(wire)) as unknown[]);
      expect(
        back.map((m) => m.role),
        format,
      ).toEqual(neutral.map((m) => m.role));
      expect(back.map(textOf), format).toEqual(neutral.map(textOf));
      const err = back[4] as ToolResultMessage;
      expect(err.isError, format).toBe(true);
      expect(err.errorCode, format).toBe("EXIT_1");
    }
  });
});

describe("error markers on the wire", () => {
  const err = (text: string, errorCode?: string) => toolResult("t1", text, { isError: true, ...(errorCode ? { errorCode } : {}) });
  const call = assistant("", [{ id: "t1", name: "read" }]);
  const anthropicBlock = (m: ToolResultMessage) => (toAnthropic([call, m])[1]!["content"] as Record<string, unknown>[])[0]!;
  const chatContent = (m: ToolResultMessage) => toOpenAIChat([call, m])[1]!["content"];

  it("Claude: an error with code ENOENT is flagged and prefixed, keeping tool_use_id", () => {
    const block = anthropicBlock(err("could not open file", "ENOENT"));
    expect(block["is_error"]).toBe(true);
    expect(block["tool_use_id"]).toBe("t1");
    expect(block["content"]).toEqual([{ type: "text", text: "[ERROR:ENOENT] could not open file" }]);
  });
  it("Claude: a non-error has no is_error key and no prefix", () => {
    const block = anthropicBlock(toolResult("t1", "fine", { errorCode: "ENOENT" }));
    expect("is_error" in block).toBe(false);
    expect(block["content"]).toEqual([{ type: "text", text: "fine" }]);
  });
  it("Claude: an error without a code is flagged with its content unchanged", () => {
    const block = anthropicBlock(err("bad"));
    expect(block["is_error"]).toBe(true);
    expect(block["content"]).toEqual([{ type: "text", text: "bad" }]);
  });
  it("OpenAI-compatible: a non-error passes through", () => {
    expect(chatContent(toolResult("t1", "fine"))).toBe("fine");
  });
  it("OpenAI-compatible: an error with a code gets [ERROR:code]", () => {
    expect(chatContent(err("missing", "ENOENT"))).toBe("[ERROR:ENOENT] missing");
  });
  it("OpenAI-compatible: an error without a code gets [ERROR]", () => {
    expect(chatContent(err("bad"))).toBe("[ERROR] bad");
  });
  it("OpenAI-compatible: empty content with code Timeout is just the prefix", () => {
    expect(chatContent({ ...err("", "Timeout"), content: [] })).toBe("[ERROR:Timeout] ");
  });
  it("OpenAI-compatible: a non-error with a code stays unchanged", () => {
    expect(chatContent(toolResult("t1", "fine", { errorCode: "ENOENT" }))).toBe("fine");
  });
  it("Moonshot park history: after repair every tool_calls message is followed by results for all its ids", () => {
    const h: Message[] = [
      systemText("sys"),
      userText("monitor"),
      assistant("", [
        { id: "web_fetch:0", name: "web_fetch" },
        { id: "web_fetch:1", name: "web_fetch" },
      ]),
      toolResult("web_fetch:0", "a"),
      toolResult("web_fetch:1", "b"),
      assistant("report", [
        { id: "web_fetch:0", name: "web_fetch" },
        { id: "park:1", name: "park" },
      ]),
      userText("[@park completed] outcome=elapsed"),
    ];
    const broken = toOpenAIChat(h);
    expect(adapters["openai-chat"].check(broken).join()).toContain("did not have response messages");
    expect(broken[6]!["role"]).not.toBe("tool");
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.syntheticResultsInjected).toBe(2);
    expect(adapters["openai-chat"].check(toOpenAIChat(messages))).toEqual([]);
  });
});

describe("adapters under fuzzing: a clear FormatError or a result, never a crash", () => {
  const allowed = (err: unknown) => err instanceof FormatError;
  for (const format of FORMATS) {
    it(`${format}: arbitrary JSON arrays`, () => {
      fc.assert(
        fc.property(fc.array(fc.oneof(fc.jsonValue(), messageLike()), { maxLength: 8 }), (items) => {
          try {
            const neutral = adapters[format].fromProvider(items);
            adapters[format].toProvider(neutral);
          } catch (err) {
            if (!allowed(err)) throw err;
          }
        }),
        { numRuns: 300 },
      );
    });
  }

  it("detectFormat, assertFormat and unwrapConversation accept or reject any JSON with a FormatError", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.array(messageLike())), fc.constantFrom(...FORMATS), (json, format) => {
        try {
          const detected = detectFormat(json);
          expect(FORMATS).toContain(detected);
          unwrapConversation(json);
          // the detected format is never refused
          assertFormat(json, detected);
          assertFormat(json, format);
        } catch (err) {
          if (!allowed(err)) throw err;
        }
      }),
      { numRuns: 500 },
    );
  });

  it("a __proto__ field is carried as data and never pollutes a prototype", () => {
    const wire = JSON.parse(
      '[{"role":"user","content":[{"type":"text","text":"hi","__proto__":{"polluted":true}}],"__proto__":{"polluted":true}}]',
    ) as unknown[];
    for (const format of ["anthropic", "openai-chat", "ai-sdk"] as const) {
      const back = adapters[format].toProvider(adapters[format].fromProvider(wire));
      expect(back).toEqual(wire);
      expect(Object.keys(back[0]!).sort()).toEqual(["__proto__", "content", "role"]);
      expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
      expect(Object.getPrototypeOf(back[0])).toBe(Object.prototype);
    }
  });

  it("errors name the offending path", () => {
    expect(() => fromAnthropic([{ role: "user", content: [{ type: "tool_result" }] }])).toThrow(/messages\[0\]\.content\[0\]/);
    expect(() => fromOpenAIChat([{ role: "wizard", content: "hi" }])).toThrow(FormatError);
    expect(() => getAdapter("gemini")).toThrow(/unknown format "gemini"/);
  });
});

function messageLike(): fc.Arbitrary<unknown> {
  const part = fc.oneof(
    fc.record(
      {
        type: fc.constantFrom("text", "tool_use", "tool_result", "tool-call", "tool-result", "image", "input_text", "image_url"),
        text: fc.string(),
        id: fc.string(),
        tool_use_id: fc.string(),
        content: fc.jsonValue(),
      },
      { requiredKeys: ["type"] },
    ),
    fc.jsonValue(),
  );
  return fc.record(
    {
      role: fc.constantFrom("user", "assistant", "tool", "system", "developer"),
      type: fc.constantFrom("message", "function_call", "function_call_output", "reasoning"),
      content: fc.oneof(fc.string(), fc.array(part, { maxLength: 4 }), fc.constant(null)),
      tool_calls: fc.array(
        fc.record({ id: fc.string(), type: fc.constantFrom("function", "custom"), function: fc.record({ name: fc.string(), arguments: fc.string() }) }),
        { maxLength: 2 },
      ),
      tool_call_id: fc.string(),
      call_id: fc.string(),
      name: fc.string(),
      arguments: fc.string(),
      output: fc.oneof(fc.string(), fc.jsonValue()),
    },
    { requiredKeys: [] },
  );
}
