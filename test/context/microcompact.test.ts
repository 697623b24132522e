import { describe, expect, it } from "vitest";
import {
  applyMicrocompact,
  archiveKey,
  assistant,
  enforceToolResultBudget,
  extractKeys,
  MemoryArchive,
  recall,
  textOf,
  toolResult,
  userText,
  type Message,
  type UserMessage,
} from "../../src/context/index.js";
import { lines } from "./helpers.js";

/** The fixture: [user, assistant(call), tool(tc-1), then `age` × (user "next", assistant "ok")]. */
function fixture(content: Message, age: number, tool = "web_fetch"): Message[] {
  const h: Message[] = [userText("start"), assistant("", [{ id: "tc-1", name: tool }]), content];
  for (let i = 0; i < age; i++) h.push(userText("next"), assistant("ok"));
  return h;
}
const result = (text: string, opts: Parameters<typeof toolResult>[2] = {}) => toolResult("tc-1", text, opts);

describe("applyMicrocompact — ageing", () => {
  it("TruncatePreservesContentViaCCR: a 2-turn-old result becomes a preview with one marker that recalls the original", () => {
    const archive = new MemoryArchive();
    const original = "line of important tool output\n".repeat(300);
    const { messages, report } = applyMicrocompact(fixture(result(original), 2), { archive });
    expect(report.truncated).toBe(1);
    const stub = textOf(messages[2]!);
    expect(extractKeys(stub)).toHaveLength(1);
    expect(stub.match(/<<ccr:/g)).toHaveLength(1);
    expect(recall(stub, archive).text).toBe(original);
    expect(stub.length).toBeLessThan(original.length);
  });

  it("SummarizeCarriesEarlierMarker: level 2 keeps the same single key and still recalls the original", () => {
    const archive = new MemoryArchive();
    const original = "payload row 12345\n".repeat(400);
    const opts = { archive, headChars: 4_000, tailChars: 1_000 };
    const level1 = applyMicrocompact(fixture(result(original), 2), opts);
    const key = extractKeys(textOf(level1.messages[2]!));
    expect(key).toHaveLength(1);
    const later = [...level1.messages];
    for (let i = 0; i < 4; i++) later.push(userText("next"), assistant("ok"));
    const level2 = applyMicrocompact(later, { ...opts, turn: 6 + 1 });
    expect(level2.report.summarized).toBe(1);
    const summary = textOf(level2.messages[2]!);
    expect(extractKeys(summary)).toEqual(key);
    expect(recall(summary, archive).text).toBe(original);
  });

  it("NilCCRKeepsLegacyBehavior: without an archive the cut is lossy and carries no marker", () => {
    const { messages, report } = applyMicrocompact(fixture(result("x".repeat(9_000)), 2));
    expect(report.truncated).toBe(1);
    expect(textOf(messages[2]!)).not.toContain("<<ccr:");
  });

  it("AgentFeedbackAged: sub-agent feedback dressed as a user message ages like a tool result", () => {
    const archive = new MemoryArchive();
    const original = "--- Agent Results ---\n\n" + "[coder] finding line\n".repeat(400);
    const feedback: UserMessage = { role: "user", content: [{ type: "text", text: original }], agentFeedback: true };
    const { messages, report } = applyMicrocompact(fixture(feedback, 2), { archive });
    expect(report.truncated).toBe(1);
    expect(extractKeys(textOf(messages[2]!))).toHaveLength(1);
    expect(recall(textOf(messages[2]!), archive).text).toBe(original);
  });

  it("PlainUserMessageUntouched: a plain 16 KB user message at age 4+ is left alone", () => {
    const h = fixture(userText(lines(16_000, 1)), 5);
    const { messages, report } = applyMicrocompact(h, { archive: new MemoryArchive() });
    expect(messages).toBe(h);
    expect(report.truncated + report.summarized).toBe(0);
  });
});

describe("applyMicrocompact — exemptions and lossless steps", () => {
  it("results of the current and previous turn are never touched", () => {
    for (const age of [0, 1]) {
      const h = fixture(result(lines(9_000, 2)), age);
      expect(applyMicrocompact(h, { archive: new MemoryArchive() }).messages).toBe(h);
    }
  });

  it("results under 3,000 chars are never previewed; from 1,000 chars they are summarised at 4 turns; under 1,000 never touched", () => {
    const h = fixture(result(lines(2_999, 3)), 3);
    expect(applyMicrocompact(h, { archive: new MemoryArchive() }).messages).toBe(h);
    const archive = new MemoryArchive();
    const old = applyMicrocompact(fixture(result(lines(2_999, 3)), 4), { archive });
    expect(old.report.summarized).toBe(1);
    expect(recall(`<<ccr:${archiveKey(lines(2_999, 3))}>>`, archive).text).toBe(lines(2_999, 3));
    const tiny = fixture(result(lines(999, 3)), 9);
    expect(applyMicrocompact(tiny, { archive: new MemoryArchive() }).messages).toBe(tiny);
  });

  it("an old error result keeps a preview with its error lines and tail, and never drops to a summary", () => {
    const archive = new MemoryArchive();
    const log = lines(4_000, 4) + "src/app.ts:12:3 - error TS2322: Type 'string' is not assignable\n" + lines(4_000, 5) + "FAILED: 1 error\n";
    const h = fixture(result(log, { isError: true, errorCode: "EXIT_1" }), 6);
    const { messages, report } = applyMicrocompact(h, { archive });
    const text = textOf(messages[2]!);
    expect(report.failedKept).toBe(1);
    expect(report.summarized).toBe(0);
    expect(text.startsWith("[Old failed tool result — ")).toBe(true);
    expect(text).toContain("error TS2322");
    expect(text.endsWith("FAILED: 1 error\n")).toBe(true);
    expect(recall(`<<ccr:${archiveKey(log)}>>`, archive).text).toBe(log);
    // older still: the same preview, untouched
    const again = applyMicrocompact(messages, { archive, turn: 20 });
    expect(again.messages).toBe(messages);
  });

  it("bash, shell and exec output ages like a read: preview at 2 turns, summary at 4", () => {
    for (const tool of ["bash", "Bash", "shell", "@exec_command"]) {
      const archive = new MemoryArchive();
      const out = lines(9_000, 5);
      const young = applyMicrocompact(fixture(result(out), 2, tool), { archive });
      expect(young.report.truncated, tool).toBe(1);
      const old = applyMicrocompact(fixture(result(out), 4, tool), { archive });
      expect(old.report.summarized, tool).toBe(1);
      expect(textOf(old.messages[2]!)).toContain(`<<ccr:${archiveKey(out)}>>`);
    }
  });

  it("a failed command (mini-swe-agent returncode, Claude Code and Codex exit codes) keeps its error-line preview at any age", () => {
    const body = lines(3_000, 7) + "E   AssertionError: expected 3, got 4\n" + lines(3_000, 8) + "=== 1 failed, 41 passed ===\n";
    for (const [label, text] of [
      ["returncode", `<returncode>1</returncode>\n<output>\n${body}</output>`],
      ["Exit code N", `Exit code 1\n${body}`],
      ["codex json", JSON.stringify({ output: body, metadata: { exit_code: 1, duration_seconds: 2.5 } })],
    ] as const) {
      const { messages, report } = applyMicrocompact(fixture(result(text), 6, "bash"), { archive: new MemoryArchive() });
      expect(report.failedKept, label).toBe(1);
      expect(report.summarized, label).toBe(0);
      expect(textOf(messages[2]!), label).toContain("AssertionError: expected 3, got 4");
    }
    // exit status 0 is a success: it ages to a summary
    const ok = applyMicrocompact(fixture(result(`<returncode>0</returncode>\n<output>\n${body}</output>`), 6, "bash"), { archive: new MemoryArchive() });
    expect(ok.report.summarized).toBe(1);
  });

  it("write/edit acknowledgements stay whole (any case, with @); an echoed whole file and an editor 'view' age like reads", () => {
    for (const tool of ["Edit", "@apply_patch", "write_file"]) {
      const h = fixture(result(lines(5_000, 5)), 6, tool);
      const { messages, report } = applyMicrocompact(h, { archive: new MemoryArchive() });
      expect(messages, tool).toBe(h);
      expect(report.preserved).toBe(1);
    }
    const echo = applyMicrocompact(fixture(result(lines(25_000, 5)), 6, "Write"), { archive: new MemoryArchive() });
    expect(echo.report.summarized).toBe(1);
    const h: Message[] = [
      userText("start"),
      assistant("", [{ id: "tc-1", name: "str_replace_editor", input: { command: "view", path: "/repo/a.py" } }]),
      result(lines(5_000, 9)),
    ];
    for (let i = 0; i < 6; i++) h.push(userText("next"), assistant("ok"));
    expect(applyMicrocompact(h, { archive: new MemoryArchive() }).report.summarized).toBe(1);
  });

  it("a result 4+ turns old becomes the one-line summary, describing the original", () => {
    const archive = new MemoryArchive();
    const go = 'package main\n\nimport "fmt"\n\nfunc main() {\n' + '\tfmt.Println("hello")\n'.repeat(449) + "}\n";
    const { messages, report } = applyMicrocompact(fixture(result(go), 4), { archive });
    expect(report.summarized).toBe(1);
    const [line, how] = textOf(messages[2]!).split("\n");
    expect(line).toBe(`[Old tool result cleared — 455 lines, ${go.length} chars, Go source]`);
    expect(how).toBe(`[full content recoverable via recall <<ccr:${archiveKey(go)}>>]`);
  });

  it("with default sizes a level-1 preview is still summarised at level 2, with the original's numbers, not the preview's", () => {
    const archive = new MemoryArchive();
    const original = lines(9_000, 6);
    const h = fixture(result(original), 2);
    const level1 = applyMicrocompact(h, { archive });
    expect(textOf(level1.messages[2]!).length).toBeLessThan(3_000);
    const later = [...level1.messages, userText("a"), assistant("b"), userText("c"), assistant("d")];
    const level2 = applyMicrocompact(later, { archive });
    expect(level2.report.summarized).toBe(1);
    expect(textOf(level2.messages[2]!)).toContain(`${original.split("\n").length} lines, 9000 chars, `);
    expect(recall(textOf(level2.messages[2]!), archive).text).toBe(original);
  });

  it("a budget preview that ages past 4 turns is summarised with the same key and the original's size", () => {
    const archive = new MemoryArchive();
    const original = lines(50_000, 7);
    const budgeted = enforceToolResultBudget(fixture(result(original), 4), { archive });
    const key = budgeted.report.keysSaved[0]!;
    const { messages } = applyMicrocompact(budgeted.messages, { archive });
    const summary = textOf(messages[2]!);
    expect(summary).toContain("50000 chars");
    expect(extractKeys(summary)).toEqual([key]);
  });

  it("a text of exactly head + tail + 100 chars is left whole: its preview would not be shorter", () => {
    const text = lines(2_600, 11);
    const h = fixture(result(text), 2);
    const { messages, report } = applyMicrocompact(h, { archive: new MemoryArchive(), minContent: 100 });
    expect(messages).toBe(h);
    expect(report.truncated).toBe(0);
  });

  it("with minSavedChars, small savings are deferred and the history is left byte-identical until they add up", () => {
    const archive = new MemoryArchive();
    const h = fixture(result(lines(9_000, 12)), 2);
    const deferred = applyMicrocompact(h, { archive, minSavedChars: 50_000 });
    expect(deferred.messages).toBe(h);
    expect(deferred.report.truncated).toBe(0);
    expect(deferred.report.deferredChars).toBeGreaterThan(6_000);
    const acted = applyMicrocompact(h, { archive, minSavedChars: 5_000 });
    expect(acted.report.truncated).toBe(1);
  });

  it("a second pass over its own output changes nothing", () => {
    const archive = new MemoryArchive();
    const h: Message[] = [...fixture(result(lines(9_000, 8)), 2)];
    const first = applyMicrocompact(h, { archive });
    const second = applyMicrocompact(first.messages, { archive });
    expect(second.messages).toBe(first.messages);
    expect(second.report.keysArchived).toEqual([]);
  });

  it("a current turn below the truncate threshold is a no-op", () => {
    const h = fixture(result(lines(9_000, 9)), 3);
    expect(applyMicrocompact(h, { archive: new MemoryArchive(), turn: 1 }).messages).toBe(h);
  });

  it("when the archive refuses the text, the result stays whole — never a marker that cannot be recalled", () => {
    const archive = new MemoryArchive({ maxBytes: 8_000 });
    const h = fixture(result(lines(9_000, 10)), 2);
    const { messages, report } = applyMicrocompact(h, { archive });
    expect(messages).toBe(h);
    expect(report.errors[0]).toMatch(/left uncut/);
  });
});
