// Shapes real clients send that the provider accepts or that a repair must not make worse: results split
// across consecutive user messages (Claude Code), removals that would leave two assistant messages in a
// row, tool outputs answering calls kept server-side (OpenAI Responses), and AI SDK tool approvals.
import { generateText, jsonSchema, modelMessageSchema, tool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import {
  adapters,
  continuesServerState,
  describePrepareReport,
  FORMATS,
  MemoryArchive,
  prepareHistory,
  SYNTHETIC_RESULT_TEXT,
  textOf,
  validateForProvider,
  validatePairing,
  validateWire,
  type Format,
  type PrepareOptions,
} from "../../src/context/index.js";

/** One pass of `spool compact` in `format`, with every provider rule asserted on the output. */
function compact(format: Format, wire: unknown[], options: PrepareOptions = {}) {
  const adapter = adapters[format];
  const archive = new MemoryArchive();
  const { messages, report } = prepareHistory(adapter.fromProvider(wire), { archive, format, assertValid: true, ...options });
  return { wire: adapter.toProvider(messages) as Record<string, unknown>[], report, archive, messages };
}

describe("Anthropic: results split across consecutive user messages (the Claude Code shape)", () => {
  const split = [
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "t1", name: "bash", input: {} },
        { type: "tool_use", id: "t2", name: "bash", input: {} },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "out t1" }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "out t2" }] },
    { role: "assistant", content: "done" },
  ];

  it("is judged as the API judges it (one user turn): no pairing problem, and it comes back byte-identical", () => {
    const problems = validateWire(split, "anthropic");
    expect(problems.filter((p) => p.rule !== "roles_alternate")).toEqual([]);
    const out = compact("anthropic", split);
    expect(out.report.changed).toBe(false);
    expect(JSON.stringify(out.wire)).toBe(JSON.stringify(split));
  });

  it("a result after other content of the combined turn still breaks results_first, and the repair puts the results first", () => {
    const wire = [split[0], split[1], { role: "user", content: [split[2]!.content[0], { type: "text", text: "note" }] }, split[3], split[4]];
    expect(validateWire(wire, "anthropic").map((p) => p.rule)).toContain("results_first");
    const out = compact("anthropic", wire);
    expect(out.wire[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t1", content: "out t1" },
        { type: "tool_result", tool_use_id: "t2", content: "out t2" },
        { type: "text", text: "note" },
      ],
    });
    expect(validateForProvider(out.messages, "anthropic")).toEqual([]);
  });

  it("a result in a user message after the next assistant message is still no answer", () => {
    const wire = [split[0], split[1], split[2], { role: "assistant", content: "hm" }, split[3]];
    const rules = validateWire(wire, "anthropic").map((p) => p.rule);
    expect(rules).toContain("call_answered_once");
    expect(rules).toContain("result_has_call");
  });
});

describe("a removal never leaves two assistant messages in a row", () => {
  it("an orphan result alone between two assistant messages is replaced by a user message naming it and its recall marker", () => {
    const wire = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "x" },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "zz", content: "orphan" }] },
      { role: "assistant", content: "y" },
    ];
    const out = compact("anthropic", wire);
    expect(out.wire.map((m) => m["role"])).toEqual(["user", "assistant", "user", "assistant"]);
    // the untouched messages keep their bytes
    for (const i of [0, 1, 3]) expect(JSON.stringify(out.wire[i])).toBe(JSON.stringify(wire[i]));
    const note = String(out.wire[2]!["content"]);
    const marker = /<<ccr:([0-9a-f]{16})>>/.exec(note);
    expect(note).toContain("call zz");
    expect(out.archive.get(marker![1]!)).toBe("orphan");
    expect(out.report.pairing.orphanResultsRemoved).toBe(1);
    expect(out.report.pairing.placeholdersInserted).toBe(1);
    expect(validateForProvider(out.messages, "anthropic")).toEqual([]);
    // a second pass changes nothing
    expect(compact("anthropic", out.wire).report.changed).toBe(false);
  });

  it("a late result moved to its call leaves a note where it was when it stood between two assistant messages", () => {
    const wire = [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: {} }] },
      { role: "user", content: "interrupt" },
      { role: "assistant", content: "hmm" },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "late output" }] },
      { role: "assistant", content: "done" },
    ];
    for (const format of ["anthropic", "ai-sdk"] as const) {
      const input = format === "anthropic" ? wire : adapters["ai-sdk"].toProvider(adapters.anthropic.fromProvider(wire));
      const out = compact(format, input);
      expect(out.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant", "user", "assistant"]);
      expect(out.report.pairing.lateResults).toBe(1);
      expect(validateForProvider(out.messages, "anthropic")).toEqual([]);
    }
  });

  it("a removal that leaves a user message next to an assistant one adds nothing", () => {
    const wire = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "x" },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "zz", content: "orphan" },
          { type: "text", text: "go on" },
        ],
      },
      { role: "assistant", content: "y" },
    ];
    const out = compact("anthropic", wire);
    expect(out.report.pairing.placeholdersInserted).toBe(0);
    expect(out.wire[2]).toEqual({ role: "user", content: [{ type: "text", text: "go on" }] });
  });
});

describe("OpenAI Responses: outputs answering calls the provider keeps", () => {
  const output = { type: "function_call_output", call_id: "call_1", output: '{"temp":21}' };

  it("previous_response_id, conversation and item_reference are recognised as continuing stored state", () => {
    expect(continuesServerState({ model: "gpt-5", previous_response_id: "resp_abc", input: [output] })).toBe(true);
    expect(continuesServerState({ model: "gpt-5", conversation: "conv_1", input: [output] })).toBe(true);
    expect(continuesServerState({ input: [{ type: "item_reference", id: "fc_1" }, output] })).toBe(true);
    expect(continuesServerState({ input: [output] })).toBe(false);
    expect(continuesServerState([output])).toBe(false);
  });

  it("an output of a previous_response_id request is kept untouched, and the rules accept it", () => {
    const wire = [output];
    const out = compact("openai-responses", wire, { externalCalls: true });
    expect(out.report.changed).toBe(false);
    expect(JSON.stringify(out.wire)).toBe(JSON.stringify(wire));
    expect(out.report.pairing.orphanResultsRemoved).toBe(0);
    expect(validateWire(wire, "openai-responses", { externalCalls: true })).toEqual([]);
    expect(validatePairing(out.messages, { externalCalls: true })).toEqual([]);
  });

  it("an output after an item_reference, then a new call and its output, is kept; a second output for a call in the input is still a duplicate", () => {
    const wire = [
      { type: "item_reference", id: "fc_1" },
      output,
      { role: "user", content: "and Paris?" },
      { type: "function_call", call_id: "call_2", name: "weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_2", output: "18" },
      { type: "function_call_output", call_id: "call_2", output: "18 again" },
    ];
    const out = compact("openai-responses", wire, { externalCalls: true });
    expect(out.wire).toEqual(wire.slice(0, 5));
    expect(out.report.pairing.duplicateResultsRemoved).toBe(1);
    expect(out.report.pairing.orphanResultsRemoved).toBe(0);
  });

  it("an item_reference between the calls of one model turn (a reasoning item sent by reference) leaves the request as it is", () => {
    const wire = [
      { role: "user", content: "weather in Oslo and Rome" },
      { type: "item_reference", id: "rs_1" },
      { type: "function_call", call_id: "c1", name: "weather", arguments: '{"city":"Oslo"}' },
      { type: "item_reference", id: "rs_2" },
      { type: "function_call", call_id: "c2", name: "weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "c1", output: "3C" },
      { type: "function_call_output", call_id: "c2", output: "21C" },
    ];
    expect(validateWire(wire, "openai-responses", { externalCalls: true })).toEqual([]);
    const out = compact("openai-responses", wire, { externalCalls: true });
    expect(out.report.pairing.lateResults).toBe(0);
    expect(out.report.changed).toBe(false);
    expect(JSON.stringify(out.wire)).toBe(JSON.stringify(wire));
  });

  it("an oversized kept output is still budgeted", () => {
    const big = { type: "function_call_output", call_id: "call_1", output: "line of output\n".repeat(3_000) };
    const out = compact("openai-responses", [big], { externalCalls: true, config: { maxResultChars: 4_000 } });
    expect(out.report.budget.resultsTruncated).toBe(1);
    expect(String(out.wire[0]!["output"])).toMatch(/^\[Partial tool result/);
    expect(out.wire[0]!["call_id"]).toBe("call_1");
  });

  it("without stored state (externalCalls: false) such an output is still an orphan", () => {
    const out = compact("openai-responses", [output], { externalCalls: false });
    expect(out.report.pairing.orphanResultsRemoved).toBe(1);
    expect(out.wire).toEqual([]);
  });

  it("a library caller that does not say: an input of outputs and no call is a turn on stored state, and its outputs stay", () => {
    // The second turn of an agent on previous_response_id: the input is the output alone. Removed as an
    // orphan it left an empty input (the stored call without its output: a 400) and a model that never saw it.
    const archive = new MemoryArchive();
    const wire = [output, { role: "user", content: "and?" }];
    const out = prepareHistory(adapters["openai-responses"].fromProvider(wire), { archive, format: "openai-responses", assertValid: true });
    expect(out.report.pairing.orphanResultsRemoved).toBe(0);
    expect(adapters["openai-responses"].toProvider(out.messages)).toEqual(wire);
  });

  it("not said, and nothing to ask: an item_reference keeps the output; a history whose outputs all have calls, or no format, repairs as before", () => {
    const referenced = compact("openai-responses", [{ type: "item_reference", id: "fc_1" }, output]);
    expect(referenced.wire).toEqual([{ type: "item_reference", id: "fc_1" }, output]);
    expect(referenced.report.changed).toBe(false);
    const whole = [
      { role: "user", content: "weather?" },
      { type: "function_call", call_id: "call_1", name: "weather", arguments: "{}" },
      output,
      { type: "function_call_output", call_id: "call_1", output: "again" },
    ];
    expect(compact("openai-responses", whole).report.pairing.duplicateResultsRemoved).toBe(1);
    const neutral = prepareHistory(adapters["openai-responses"].fromProvider([output]), { archive: new MemoryArchive() });
    expect(neutral.report.pairing.orphanResultsRemoved).toBe(1);
    // calls of its own, and an output whose call was lost (a window cut from the front): damage, repaired
    const cut = [
      { role: "user", content: "weather?" },
      { type: "function_call_output", call_id: "call_0", output: "lost its call" },
      { type: "function_call", call_id: "call_1", name: "weather", arguments: "{}" },
      output,
    ];
    const repaired = compact("openai-responses", cut);
    expect(repaired.report.pairing.orphanResultsRemoved).toBe(1);
    expect(repaired.wire).toEqual([cut[0], cut[2], output]);
  });
});

describe("AI SDK tool approval (v6+): requests and responses survive, a call awaiting approval is not 'missing'", () => {
  const call = { type: "tool-call", toolCallId: "a", toolName: "bash", input: { command: "rm -rf tmp" } };
  const request = { type: "tool-approval-request", approvalId: "ap1", toolCallId: "a" };
  const response = { type: "tool-approval-response", approvalId: "ap1", approved: true };
  const result = { type: "tool-result", toolCallId: "a", toolName: "bash", output: { type: "text", value: "ok" } };
  const base = [
    { role: "user", content: "delete tmp" },
    { role: "assistant", content: [call, request] },
  ];
  const cases: [string, unknown[]][] = [
    ["approval requested, no answer yet", base],
    ["approved, not run yet (the SDK runs it on the next call)", [...base, { role: "tool", content: [response] }]],
    ["approved and run, response and result in two tool messages", [...base, { role: "tool", content: [response] }, { role: "tool", content: [result] }]],
    ["approved and run, in one tool message", [...base, { role: "tool", content: [response, result] }]],
    ["approved, run, and the conversation went on", [...base, { role: "tool", content: [response, result] }, { role: "assistant", content: "done" }]],
  ];
  for (const [name, wire] of cases) {
    it(`${name}: byte-identical, nothing repaired, valid for the SDK`, () => {
      expect(() => modelMessageSchema.array().parse(wire)).not.toThrow();
      const out = compact("ai-sdk", wire);
      expect(JSON.stringify(out.wire)).toBe(JSON.stringify(wire));
      expect(out.report.changed).toBe(false);
      expect(out.report.pairing.syntheticResultsInjected + out.report.pairing.orphanResultsRemoved).toBe(0);
      expect(validatePairing(out.messages)).toEqual([]);
      expect(adapters["ai-sdk"].check(out.wire)).toEqual([]);
    });
  }

  it("the real SDK runs the approved call from the compacted history (a synthetic error result would stop it)", async () => {
    const out = compact("ai-sdk", [...base, { role: "tool", content: [response] }]);
    let ran = 0;
    let prompt: unknown;
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        prompt = options.prompt;
        return {
          content: [{ type: "text", text: "deleted" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
          warnings: [],
        } as never;
      },
    });
    const bash = tool({
      inputSchema: jsonSchema<{ command: string }>({ type: "object" }),
      needsApproval: true,
      execute: async () => {
        ran++;
        return "removed";
      },
    });
    await generateText({ model, messages: out.wire as unknown as ModelMessage[], tools: { bash } });
    expect(ran).toBe(1);
    expect(JSON.stringify(prompt)).toContain("removed");
    expect(JSON.stringify(prompt)).not.toContain("missing_result");
  });

  describe("a reused call id renamed for uniqueness takes its approval with it", () => {
    // The first turn used "a" for another call: the awaiting call becomes "a_2", and so must its approval request.
    const earlier = { type: "tool-call", toolCallId: "a", toolName: "bash", input: { command: "ls tmp" } };
    const reused = [
      { role: "user", content: "what is in tmp?" },
      { role: "assistant", content: [earlier] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "a", toolName: "bash", output: { type: "text", value: "x y" } }] },
      { role: "assistant", content: "x and y." },
      ...base,
    ];

    it("the request (before or after its call) names the renamed call, and the history stays valid and stable", () => {
      for (const content of [
        [call, request],
        [request, call],
      ]) {
        const wire = [...reused.slice(0, -1), { role: "assistant", content }, { role: "tool", content: [response] }];
        const out = compact("ai-sdk", wire);
        expect(out.report.idsRewritten.map((w) => `${w.from}→${w.to}`)).toEqual(["a→a_2"]);
        const turn = out.wire[5]!["content"] as Record<string, unknown>[];
        expect(turn.find((p) => p["type"] === "tool-call")).toMatchObject({ toolCallId: "a_2", input: call.input });
        expect(turn.find((p) => p["type"] === "tool-approval-request")).toEqual({ ...request, toolCallId: "a_2" });
        expect(out.wire[6]).toEqual({ role: "tool", content: [response] });
        expect(out.report.pairing.syntheticResultsInjected).toBe(0);
        // read back, the renamed call still awaits its approval: a second pass repairs nothing
        const again = compact("ai-sdk", out.wire);
        expect(again.report.changed).toBe(false);
        expect(again.report.pairing.syntheticResultsInjected).toBe(0);
      }
    });

    it("a response that names the call too is renamed with it, and the earlier turn keeps its own id", () => {
      const named = { ...response, toolCallId: "a" };
      const out = compact("ai-sdk", [...reused, { role: "tool", content: [named] }]);
      expect(out.wire[6]).toEqual({ role: "tool", content: [{ ...named, toolCallId: "a_2" }] });
      expect(out.wire[1]).toEqual(reused[1]);
      expect(out.wire[2]).toEqual(reused[2]);
    });

    it("the real SDK runs the approved call with its own input, not the earlier call's", async () => {
      // (without the provider-rule assertion, which would stop a wrong history before the SDK sees it)
      const out = compact("ai-sdk", [...reused, { role: "tool", content: [response] }], { assertValid: false });
      const ran: unknown[] = [];
      const model = new MockLanguageModelV4({
        doGenerate: async () =>
          ({
            content: [{ type: "text", text: "deleted" }],
            finishReason: { unified: "stop", raw: "stop" },
            usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } },
            warnings: [],
          }) as never,
      });
      const bash = tool({
        inputSchema: jsonSchema<{ command: string }>({ type: "object" }),
        needsApproval: true,
        execute: async (input) => {
          ran.push(input);
          return "removed";
        },
      });
      await generateText({ model, messages: out.wire as unknown as ModelMessage[], tools: { bash } });
      expect(ran).toEqual([call.input]);
    });
  });

  it("a call still unanswered after the conversation moved on gets a missing result (the SDK would throw), and the approval response stays", () => {
    const wire = [...base, { role: "tool", content: [response] }, { role: "user", content: "never mind" }];
    const out = compact("ai-sdk", wire);
    expect(out.report.pairing.syntheticResultsInjected).toBe(1);
    expect(out.report.pairing.orphanResultsRemoved).toBe(0);
    expect(out.wire[2]).toEqual({
      role: "tool",
      content: [response, expect.objectContaining({ type: "tool-result", toolCallId: "a", output: expect.objectContaining({ type: "error-text" }) })],
    });
    expect(out.wire[3]).toEqual(wire[3]);
  });
});

describe("two calls with one id in one assistant message (models and proxies emit it)", () => {
  /** The same turn in each format: `ls` and `pwd` both called `call_0`, with `results` results after them. */
  function turn(format: Format, results: number): unknown[] {
    const outputs = ["ls output", "pwd output"].slice(0, results);
    const args = [{ command: "ls" }, { command: "pwd" }];
    switch (format) {
      case "anthropic":
        return [
          { role: "user", content: "go" },
          { role: "assistant", content: args.map((input) => ({ type: "tool_use", id: "call_0", name: "bash", input })) },
          { role: "user", content: outputs.map((content) => ({ type: "tool_result", tool_use_id: "call_0", content })) },
        ];
      case "openai-chat":
        return [
          { role: "user", content: "go" },
          {
            role: "assistant",
            content: null,
            tool_calls: args.map((a) => ({ id: "call_0", type: "function", function: { name: "bash", arguments: JSON.stringify(a) } })),
          },
          ...outputs.map((content) => ({ role: "tool", tool_call_id: "call_0", content })),
        ];
      case "openai-responses":
        return [
          { role: "user", content: "go" },
          ...args.map((a) => ({ type: "function_call", call_id: "call_0", name: "bash", arguments: JSON.stringify(a) })),
          ...outputs.map((output) => ({ type: "function_call_output", call_id: "call_0", output })),
        ];
      case "ai-sdk":
        return [
          { role: "user", content: "go" },
          { role: "assistant", content: args.map((input) => ({ type: "tool-call", toolCallId: "call_0", toolName: "bash", input })) },
          {
            role: "tool",
            content: outputs.map((value) => ({ type: "tool-result", toolCallId: "call_0", toolName: "bash", output: { type: "text", value } })),
          },
        ];
    }
  }

  it("the provider would reject the turn as it is, in every format", () => {
    for (const format of FORMATS) {
      const rules = validateWire(turn(format, 2), format).map((p) => p.rule);
      expect(
        rules.some((r) => r === "unique_call_ids" || r === "call_answered_once"),
        format,
      ).toBe(true);
    }
  });

  it("the second call is renamed call_0_2 and keeps its input; the results answer the calls in order", () => {
    for (const format of FORMATS) {
      const out = compact(format, turn(format, 2));
      expect(validateWire(out.wire, format), format).toEqual([]);
      expect(
        out.report.idsRewritten.map((w) => `${w.from}→${w.to}`),
        format,
      ).toEqual(["call_0→call_0_2"]);
      const calls = out.messages.flatMap((m) => (m.role === "assistant" ? m.content.filter((p) => p.type === "toolCall") : []));
      expect(
        calls.map((c) => [c.id, c.input]),
        format,
      ).toEqual([
        ["call_0", { command: "ls" }],
        ["call_0_2", { command: "pwd" }],
      ]);
      const results = out.messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, textOf(m)]] : []));
      expect(results, format).toEqual([
        ["call_0", "ls output"],
        ["call_0_2", "pwd output"],
      ]);
      expect(out.report.pairing.removedResults, format).toEqual([]);
      expect(compact(format, out.wire).report.changed, format).toBe(false);
    }
  });

  it("with one result, the first call keeps it and the second is answered as missing", () => {
    for (const format of FORMATS) {
      const out = compact(format, turn(format, 1));
      expect(validateWire(out.wire, format), format).toEqual([]);
      expect(out.report.pairing.missingToolUseIds, format).toEqual(["call_0_2"]);
      const results = out.messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, textOf(m)]] : []));
      expect(results, format).toEqual([
        ["call_0", "ls output"],
        ["call_0_2", SYNTHETIC_RESULT_TEXT],
      ]);
    }
  });

  it("spool compact's report names the rename", () => {
    const out = compact("anthropic", turn("anthropic", 2));
    const printed = describePrepareReport(out.report, { format: "anthropic", messagesIn: 3, messagesOut: 3 });
    expect(printed).toContain("1 reused call id renamed (call_0 → call_0_2)");
  });
});
