// Small fixtures that reproduce the shapes found by running `spool compact` over real public agent
// transcripts (Claude Code sessions, SWE-agent and mini-swe-agent trajectories, a Codex rollout):
// what must not change, how repairs stay local, and what the provider APIs would reject.
import { afterAll, describe, expect, it } from "vitest";
import {
  adapters,
  archiveKey,
  assertFormat,
  createWorkspace,
  describePrepareReport,
  FormatMismatchError,
  fromAnthropic,
  fromOpenAIChat,
  MemoryArchive,
  prepareHistory,
  recall,
  textOf,
  toAnthropic,
  toOpenAIChat,
  validateForProvider,
  validateWire,
  type Format,
  type Message,
} from "../../src/context/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { lines } from "./helpers.js";

afterAll(removeTempDirs);

const bytes = (v: unknown) => JSON.stringify(v);
const opts = (extra: Record<string, unknown> = {}) => ({ archive: new MemoryArchive(), env: {}, assertValid: true, ...extra });

/** A Claude Code turn as its transcripts hold it: keys in the client's order, `caller` first, string results, a trailing is_error:false. */
const claudeCode = [
  { role: "user", content: "look at the repo" },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Let me look.", signature: "sig" },
      { type: "text", text: "Looking." },
      { caller: { type: "direct" }, type: "tool_use", id: "toolu_A", name: "Bash", input: { command: "ls", description: "List" } },
      { caller: { type: "direct" }, type: "tool_use", id: "toolu_B", name: "Read", input: { file_path: "/repo/README.md" } },
    ],
  },
  {
    role: "user",
    content: [
      { tool_use_id: "toolu_B", type: "tool_result", content: "# README\nhello\n" },
      { tool_use_id: "toolu_A", type: "tool_result", content: "README.md\nsrc\n", is_error: false },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "Done.", cache_control: { type: "ephemeral" } }] },
];

describe("never change bytes nobody asked to change", () => {
  it("Anthropic: every result of a multi-result message keeps its string form and key order (Claude Code shape)", () => {
    expect(bytes(toAnthropic(fromAnthropic(claudeCode)))).toBe(bytes(claudeCode));
    const { messages } = prepareHistory(fromAnthropic(claudeCode), opts({ format: "anthropic" }));
    expect(bytes(toAnthropic(messages))).toBe(bytes(claudeCode));
  });

  it("OpenAI Chat: a tool message and tool_calls keep the key order the client wrote (SWE-agent shape)", () => {
    const swe = [
      { role: "system", content: "You are SWE-agent." },
      {
        role: "assistant",
        content: "Let's list.",
        tool_calls: [{ function: { arguments: '{"command":"ls -F"}', name: "bash" }, id: "call_0", type: "function" }],
      },
      { role: "tool", content: "AUTHORS.rst\r\nsrc/\r\n", tool_call_id: "call_0" },
    ];
    expect(bytes(toOpenAIChat(fromOpenAIChat(swe)))).toBe(bytes(swe));
  });

  it("the issue's reproduction: results [B, A] stay as they are; C answered only by user text gets its result first, then the text, in one user message; a second pass changes nothing", () => {
    const wire = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "A", name: "Read", input: {} },
          { type: "tool_use", id: "B", name: "Read", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "B", content: "b" },
          { type: "tool_result", tool_use_id: "A", content: "a" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "C", name: "Bash", input: { command: "make" } }] },
      { role: "user", content: "stop, use the other target" },
    ];
    const first = toAnthropic(prepareHistory(fromAnthropic(wire), opts({ format: "anthropic" })).messages);
    expect(bytes(first.slice(0, 4))).toBe(bytes(wire.slice(0, 4)));
    expect(first).toHaveLength(5);
    const last = first[4] as { role: string; content: { type: string; tool_use_id?: string; text?: string; is_error?: boolean }[] };
    expect(last.role).toBe("user");
    expect(last.content.map((b) => b.type)).toEqual(["tool_result", "text"]);
    expect(last.content[0]!.tool_use_id).toBe("C");
    expect(last.content[0]!.is_error).toBe(true);
    expect(last.content[1]!.text).toBe("stop, use the other target");
    expect(validateWire(first, "anthropic")).toEqual([]);
    const second = toAnthropic(prepareHistory(fromAnthropic(JSON.parse(bytes(first)) as unknown[]), opts({ format: "anthropic" })).messages);
    expect(bytes(second)).toBe(bytes(first));
  });

  it("a repair in one turn leaves every other turn's messages as the same objects", () => {
    const h = fromAnthropic([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "A", name: "Read", input: {} },
          { type: "tool_use", id: "B", name: "Read", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "B", content: "b" },
          { type: "tool_result", tool_use_id: "A", content: [{ type: "text", text: "a" }] },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "C", name: "Read", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "C", content: "c" },
          { type: "tool_result", tool_use_id: "C", content: "c again" },
        ],
      },
    ]);
    const { messages, report } = prepareHistory(h, opts({ format: "anthropic" }));
    expect(report.pairing.duplicateResultsRemoved).toBe(1);
    for (let i = 0; i <= 5; i++) expect(messages[i]).toBe(h[i]);
  });

  it("results behind the user's text (Anthropic) come first in the same message, the text after them", () => {
    const wire = [
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "A", name: "Read", input: {} },
          { type: "tool_use", id: "B", name: "Read", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "A", content: "a" },
          { type: "text", text: "also:" },
          { type: "tool_result", tool_use_id: "B", content: "b" },
        ],
      },
    ];
    expect(validateWire(wire, "anthropic").map((p) => p.rule)).toContain("results_first");
    const out = toAnthropic(prepareHistory(fromAnthropic(wire), opts({ format: "anthropic" })).messages);
    expect(out).toEqual([
      wire[0],
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "A", content: "a" },
          { type: "tool_result", tool_use_id: "B", content: "b" },
          { type: "text", text: "also:" },
        ],
      },
    ]);
  });

  it("budget previews name saved text by key and a workspace-relative path: the same history gives the same prompt in two workspaces", () => {
    const log = lines(30_000, 3, "build");
    const wire = [
      { role: "user", content: "build" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "make" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: log }] },
    ];
    const prompts: string[] = [];
    for (const name of ["checkout-a", "elsewhere/checkout-b"]) {
      const tmp = tempDir("spool-context-");
      const ws = createWorkspace({ root: `${tmp}/${name}`, sessionId: "s", env: {} });
      const { messages } = prepareHistory(fromAnthropic(wire), { workspace: ws, env: {}, format: "anthropic" });
      const preview = textOf(messages[2]!);
      expect(preview).toContain(`read the file results/${archiveKey(log)}.txt by line range`);
      expect(preview).not.toContain(tmp);
      expect(ws.readText(`results/${archiveKey(log)}.txt`)).toBe(log);
      prompts.push(bytes(toAnthropic(messages)));
    }
    expect(prompts[0]).toBe(prompts[1]);
  });
});

describe("every provider rule, checked", () => {
  it("validateForProvider names each rule a history breaks, per format", () => {
    const call = (id: string) => ({ role: "assistant" as const, content: [{ type: "toolCall" as const, id, name: "bash", input: {} }] });
    const result = (id: string, text = "ok"): Message => ({ role: "tool", toolCallId: id, isError: false, content: [{ type: "text", text }] });
    const reused: Message[] = [call("call_0"), result("call_0"), call("call_0"), result("call_0")];
    expect(validateForProvider(reused, "anthropic").map((p) => p.rule)).toEqual(["unique_call_ids"]);
    expect(validateForProvider(reused, "ai-sdk").map((p) => p.rule)).toEqual(["unique_call_ids"]);
    expect(validateForProvider(reused, "openai-chat")).toEqual([]);
    expect(validateForProvider(reused, "openai-responses")).toEqual([]);
    const unanswered: Message[] = [call("x"), { role: "user", content: [{ type: "text", text: "hm" }] }];
    for (const format of ["anthropic", "openai-chat", "openai-responses", "ai-sdk"] as Format[]) {
      expect(
        validateForProvider(unanswered, format).map((p) => p.rule),
        format,
      ).toContain("call_answered_once");
      expect(
        validateForProvider([result("ghost")], format).map((p) => p.rule),
        format,
      ).toContain("result_has_call");
    }
    const twice: Message[] = [
      { role: "user", content: [{ type: "text", text: "a" }] },
      { role: "user", content: [{ type: "text", text: "b" }] },
    ];
    expect(validateForProvider(twice, "anthropic").map((p) => p.rule)).toEqual(["roles_alternate"]);
  });

  it("a call id reused across turns (SWE-agent replays, OpenAI-compatible servers) is renamed with its result, deterministically, for Anthropic; OpenAI keeps it", () => {
    const wire = [
      { role: "user", content: "fix it" },
      { role: "assistant", content: [{ type: "tool_use", id: "call_0", name: "bash", input: { command: "ls" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_0", content: "a" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "call_0", name: "bash", input: { command: "cat a" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_0", content: "b" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_0", name: "bash", input: { command: "pytest" } },
          { type: "tool_use", id: "call_0_2", name: "bash", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_0_2", content: "d" },
          { type: "tool_result", tool_use_id: "call_0", content: "c" },
        ],
      },
    ];
    expect(validateWire(wire, "anthropic").map((p) => p.rule)).toContain("unique_call_ids");
    const run = () => prepareHistory(fromAnthropic(wire), opts({ format: "anthropic" }));
    const first = run();
    const out = toAnthropic(first.messages) as { content: { id?: string; tool_use_id?: string; content?: string }[] }[];
    expect(first.report.idsRewritten.map((w) => `${w.from}→${w.to}`)).toEqual(["call_0→call_0_3", "call_0→call_0_4"]);
    expect(out[3]!.content[0]!.id).toBe("call_0_3");
    expect(out[4]!.content[0]).toMatchObject({ tool_use_id: "call_0_3", content: "b" });
    expect(out[5]!.content.map((b) => b.id)).toEqual(["call_0_4", "call_0_2"]);
    expect(out[6]!.content.map((b) => `${b.tool_use_id}=${b.content}`)).toEqual(["call_0_2=d", "call_0_4=c"]);
    expect(validateWire(out, "anthropic")).toEqual([]);
    expect(bytes(toAnthropic(run().messages))).toBe(bytes(out));
    const again = prepareHistory(fromAnthropic(JSON.parse(bytes(out)) as unknown[]), opts({ format: "anthropic" }));
    expect(again.report.idsRewritten).toEqual([]);
    expect(again.report.changed).toBe(false);
    expect(describePrepareReport(first.report, { format: "anthropic", messagesIn: 7, messagesOut: 7 })).toContain(
      "2 reused call ids renamed (call_0 → call_0_3, call_0 → call_0_4)",
    );

    const chat = adapters["openai-chat"].toProvider(fromAnthropic(wire));
    const kept = prepareHistory(adapters["openai-chat"].fromProvider(chat), opts({ format: "openai-chat" }));
    expect(kept.report.idsRewritten).toEqual([]);
    expect(bytes(adapters["openai-chat"].toProvider(kept.messages))).toBe(bytes(chat));
  });

  it("AI SDK: a provider-executed call (answered by the provider inside the assistant message) is carried, never paired", () => {
    const wire = [
      { role: "user", content: [{ type: "text", text: "search" }] },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "ws_1", toolName: "web_search", input: { query: "spool" }, providerExecuted: true },
          { type: "tool-result", toolCallId: "ws_1", toolName: "web_search", output: { type: "json", value: [{ url: "https://example.com" }] } },
          { type: "text", text: "Found it." },
        ],
      },
    ];
    const { messages, report } = prepareHistory(adapters["ai-sdk"].fromProvider(wire), opts({ format: "ai-sdk" }));
    expect(report.pairing.syntheticResultsInjected).toBe(0);
    expect(bytes(adapters["ai-sdk"].toProvider(messages))).toBe(bytes(wire));
    expect(validateWire(wire, "ai-sdk")).toEqual([]);
  });

  it("a file in one format read as another is refused with a named error", () => {
    expect(() => assertFormat(claudeCode, "openai-chat")).toThrow(FormatMismatchError);
    expect(() => assertFormat(claudeCode, "openai-chat")).toThrow(/anthropic format, not openai-chat: nothing was changed/);
    const caught = (() => {
      try {
        assertFormat({ input: [{ type: "function_call", call_id: "c", name: "x", arguments: "{}" }] }, "anthropic");
      } catch (err) {
        return err as FormatMismatchError;
      }
      return undefined;
    })();
    expect(caught?.code).toBe("SPOOL_CONTEXT_FORMAT_MISMATCH");
    expect(caught?.detected).toBe("openai-responses");
    expect(() => assertFormat(claudeCode, "anthropic")).not.toThrow();
    // text only: no format signal, any format is fine
    expect(() => assertFormat([{ role: "user", content: "hi" }], "ai-sdk")).not.toThrow();
  });
});

/** A mini-swe-agent session: every call is `bash`, outputs wrapped in <returncode>/<output>, some commands failing. */
function bashOnlySession(results: number): unknown[] {
  const wire: unknown[] = [
    { role: "system", content: "You are a helpful assistant that can interact with a computer." },
    { role: "user", content: "<pr_description>fix the bug</pr_description>" },
  ];
  for (let i = 0; i < results; i++) {
    const fails = i % 7 === 3;
    const size = [400, 1_200, 2_500, 6_000, 15_000][i % 5]!;
    const body = lines(size, i + 1, fails ? "E   AssertionError in test_case" : "src/module.py:120: def handler");
    wire.push({
      role: "assistant",
      content: `THOUGHT: step ${i}`,
      tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: `step ${i}` }) } }],
    });
    wire.push({ role: "tool", tool_call_id: `call_${i}`, content: `<returncode>${fails ? 1 : 0}</returncode>\n<output>\n${body}</output>` });
  }
  wire.push({ role: "assistant", content: "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" });
  return wire;
}

describe("compaction that pays for bash-only agents", () => {
  it("a bash-only session of 60 results loses at least 60% of its tool-result characters, and every cut text is recallable byte-identically", () => {
    const wire = bashOnlySession(60);
    const input = fromOpenAIChat(wire);
    const archive = new MemoryArchive();
    const { messages, report } = prepareHistory(input, { archive, env: {}, format: "openai-chat", assertValid: true });
    expect(report.resultsBefore).toBe(60);
    expect(1 - report.charsAfter / report.charsBefore).toBeGreaterThanOrEqual(0.6);
    expect(report.microcompact.failedKept).toBeGreaterThan(0);
    const out = messages.map(textOf).join("\n");
    let cut = 0;
    for (const m of input) {
      if (m.role !== "tool") continue;
      const original = textOf(m);
      if (messages.some((o) => o.role === "tool" && textOf(o) === original)) continue;
      cut++;
      expect(out).toContain(`<<ccr:${archiveKey(original)}>>`);
      expect(recall(`<<ccr:${archiveKey(original)}>>`, archive).text).toBe(original);
    }
    expect(cut).toBeGreaterThan(30);
    // the failures kept their error lines and their last lines
    const failed = messages.filter((m) => m.role === "tool" && textOf(m).startsWith("[Old failed tool result"));
    expect(failed.length).toBe(report.microcompact.failedKept);
    for (const m of failed) expect(textOf(m)).toMatch(/<returncode>1<\/returncode>[\s\S]*AssertionError[\s\S]*<\/output>$/);
  });
});

describe("late results and the report", () => {
  it("a result that arrives after the next assistant message: its call is told the output exists and where, and recall returns it", () => {
    const late = lines(5_000, 9, "pytest");
    const h = fromOpenAIChat([
      { role: "user", content: "run the tests" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: '{"command":"pytest"}' } }] },
      { role: "assistant", content: "While that runs, let me think." },
      { role: "tool", tool_call_id: "c1", content: late },
    ]);
    const archive = new MemoryArchive();
    const { messages, report } = prepareHistory(h, { archive, env: {}, format: "openai-chat", assertValid: true });
    expect(report.pairing.lateResults).toBe(1);
    expect(report.pairing.syntheticResultsInjected).toBe(0);
    const answer = textOf(messages[2]!);
    expect(answer).not.toContain("Do NOT retry");
    expect(answer).toContain(`recall <<ccr:${archiveKey(late)}>>`);
    expect(recall(`<<ccr:${archiveKey(late)}>>`, archive).text).toBe(late);
    expect(describePrepareReport(report, { format: "openai-chat", messagesIn: 4, messagesOut: 3 })).toContain(
      "1 late result removed; the call is answered with its recall marker (c1)",
    );
  });

  it("the report counts duplicates apart from orphans, never prints a negative saving, and measures chars as budgets do", () => {
    const h = fromAnthropic([
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "a", name: "Read", input: {} },
          { type: "tool_use", id: "b", name: "Read", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "a",
            content: [
              { type: "text", text: "one" },
              { type: "text", text: "two" },
            ],
          },
          { type: "tool_result", tool_use_id: "a", content: "dup" },
          { type: "tool_result", tool_use_id: "zzz", content: "orphan" },
        ],
      },
    ]);
    const { report } = prepareHistory(h, opts({ format: "anthropic" }));
    const text = describePrepareReport(report, { format: "anthropic", messagesIn: 2, messagesOut: 2 });
    expect(text).toContain("1 duplicate result removed (a)");
    expect(text).toContain("1 orphan result removed (zzz)");
    expect(text).toContain("1 call without any result answered with an error result (b)");
    // "one\ntwo" (7) + "dup" (3) + "orphan" (6) before; after: "one\ntwo" + the synthetic text
    expect(report.charsBefore).toBe(16);
    expect(report.resultsBefore).toBe(3);
    expect(report.resultsAfter).toBe(2);
    expect(text).toMatch(/tool-result chars: 16 before, \d+ after \(\d+ more: repairs added text\)/);
    expect(text).not.toMatch(/-\d+(\.\d+)?% less/);
  });
});

describe("many collisions", () => {
  it("an id reused in each of 20,000 turns gets 19,999 distinct new names (the last call_0_20000), and one pass is a fixed point", () => {
    const h: Message[] = [];
    for (let i = 0; i < 20_000; i++) {
      h.push({ role: "assistant", content: [{ type: "toolCall", id: "call_0", name: "bash", input: {} }] });
      h.push({ role: "tool", toolCallId: "call_0", isError: false, content: [{ type: "text", text: `out ${i}` }] });
    }
    const { messages, report } = prepareHistory(h, { archive: new MemoryArchive(), env: {}, format: "anthropic", assertValid: false });
    expect(report.idsRewritten).toHaveLength(19_999);
    expect(new Set(report.idsRewritten.map((w) => w.to)).size).toBe(19_999);
    expect(report.idsRewritten.at(-1)?.to).toBe("call_0_20000");
    expect(prepareHistory(messages, { archive: new MemoryArchive(), env: {}, format: "anthropic", assertValid: false }).report.changed).toBe(false);
  });
});
