import { describe, expect, it } from "vitest";
import {
  archiveKey,
  assistant,
  countPendingToolCalls,
  lateResultText,
  ensureToolResultPairing,
  hasRepairs,
  SYNTHETIC_ERROR_CODE,
  SYNTHETIC_RESULT_TEXT,
  systemText,
  toolCallsOf,
  validatePairing,
  type Message,
  type ToolResultMessage,
} from "../../src/context/index.js";
import { A, T, U, say } from "./helpers.js";

const tool = (m: Message | undefined): ToolResultMessage => {
  expect(m?.role).toBe("tool");
  return m as ToolResultMessage;
};
const call = (id: string, q: string) => ({ id, name: "bash", input: { q } });
const text = (m: Message | undefined): string => (m?.content[0]?.type === "text" ? m.content[0].text : "");

describe("ensureToolResultPairing — repairs", () => {
  it("ValidHistoryUnchanged: a valid history comes back as the same array with no repairs", () => {
    const h = [systemText("sys"), U("go"), A("wf:0", "wf:1"), T("wf:0", "a"), T("wf:1", "b"), say("done")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(messages).toBe(h);
    expect(hasRepairs(report)).toBe(false);
    expect(validatePairing(h)).toEqual([]);
  });

  it("DuplicateIDsAcrossTurns_SecondBlockDangling: a reused id in a later block gets its own synthetics", () => {
    const h = [U("go"), A("wf:0", "wf:1"), T("wf:0", "a"), T("wf:1", "b"), A("wf:0", "wf:1"), U("[batch feedback]")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.syntheticResultsInjected).toBe(2);
    expect(report.orphanResultsRemoved).toBe(0);
    expect(messages).toHaveLength(8);
    expect(tool(messages[5]).toolCallId).toBe("wf:0");
    expect(tool(messages[6]).toolCallId).toBe("wf:1");
    expect(text(messages[5])).toBe(SYNTHETIC_RESULT_TEXT);
    expect(text(messages[6])).toBe(SYNTHETIC_RESULT_TEXT);
    expect(messages[7]!.role).toBe("user");
    expect(text(messages[2])).toBe("a");
    expect(text(messages[3])).toBe("b");
  });

  it("DanglingFirstBlock_LaterBlockAnswered: the earlier block never steals the later block's results", () => {
    const h = [A("wf:0", "wf:1"), U("interrupted"), A("wf:0", "wf:1"), T("wf:0", "fresh-a"), T("wf:1", "fresh-b")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.syntheticResultsInjected).toBe(2);
    expect(messages).toHaveLength(7);
    expect(text(messages[1])).toBe(SYNTHETIC_RESULT_TEXT);
    expect(text(messages[2])).toBe(SYNTHETIC_RESULT_TEXT);
    expect(messages[3]!.role).toBe("user");
    expect(text(messages[5])).toBe("fresh-a");
    expect(text(messages[6])).toBe("fresh-b");
  });

  it("InterposedMessageRelocatesResults: results behind prose move up next to their call", () => {
    const h = [A("wf:0", "wf:1"), U("SECURITY BLOCK: denied"), T("wf:0", "a"), T("wf:1", "b")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.resultsRelocated).toBe(2);
    expect(report.syntheticResultsInjected).toBe(0);
    expect(messages).toHaveLength(4);
    expect(messages.map((m) => m.role)).toEqual(["assistant", "tool", "tool", "user"]);
    expect(text(messages[1])).toBe("a");
    expect(text(messages[2])).toBe("b");
  });

  it("OrphanResultRemoved: a result without a call is dropped and reported by id", () => {
    const h = [U("go"), T("ghost:0", "boo"), say("ok")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.orphanResultsRemoved).toBe(1);
    expect(report.orphanToolResultIds).toEqual(["ghost:0"]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(report.removedResults.map((m) => m.toolCallId)).toEqual(["ghost:0"]);
  });

  it("PartialResultsGetSynthetics: missing results are synthesised in call order", () => {
    const h = [A("wf:0", "wf:1", "park:2"), T("wf:0", "real")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.syntheticResultsInjected).toBe(2);
    expect(new Set(report.missingToolUseIds)).toEqual(new Set(["wf:1", "park:2"]));
    expect(messages).toHaveLength(4);
    expect(texts3(messages)).toEqual(["real", SYNTHETIC_RESULT_TEXT, SYNTHETIC_RESULT_TEXT]);
  });

  it("a repeated id within one message: the second call is renamed and the results answer the calls in order", () => {
    const h = [U("go"), assistant("", [call("dup:0", "ls"), call("dup:0", "pwd")]), T("dup:0", "ls output"), T("dup:0", "pwd output")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.duplicateToolUsePruned).toBe(0);
    expect(report.callIdsRenamed).toEqual([{ from: "dup:0", to: "dup:0_2", index: 1 }]);
    expect(report.removedResults).toEqual([]);
    expect(toolCallsOf(messages[1]!).map((c) => [c.id, (c.input as { q: string }).q])).toEqual([
      ["dup:0", "ls"],
      ["dup:0_2", "pwd"],
    ]);
    expect(messages.slice(2).map((m) => [tool(m).toolCallId, text(m)])).toEqual([
      ["dup:0", "ls output"],
      ["dup:0_2", "pwd output"],
    ]);
    expect(validatePairing(messages)).toEqual([]);
    const again = ensureToolResultPairing(messages);
    expect(again.messages).toBe(messages);
    expect(hasRepairs(again.report)).toBe(false);
  });

  it("a repeated id with one result: the first call keeps it, the renamed one is answered as missing; a third result is a duplicate", () => {
    const one = ensureToolResultPairing([A("d", "d"), T("d", "only")]);
    expect(one.messages.slice(1).map((m) => [tool(m).toolCallId, text(m)])).toEqual([
      ["d", "only"],
      ["d_2", SYNTHETIC_RESULT_TEXT],
    ]);
    expect(one.report.missingToolUseIds).toEqual(["d_2"]);
    const three = ensureToolResultPairing([A("d", "d"), T("d", "1"), T("d", "2"), T("d", "3")]);
    expect(three.messages.slice(1).map((m) => [tool(m).toolCallId, text(m)])).toEqual([
      ["d", "1"],
      ["d_2", "2"],
    ]);
    expect(three.report.duplicateResultIds).toEqual(["d"]);
    expect(three.report.removedResults.map(text)).toEqual(["3"]);
  });

  it("a renamed call takes a name no call or result of the history uses, the same one every time", () => {
    // d_2 is a later turn's call, d_3 an orphan result's id: the repeat becomes d_4
    const h = [A("d", "d", "d"), T("d", "a"), T("d", "b"), T("d", "c"), A("d_2"), T("d_2", "x"), T("d_3", "ghost")];
    const first = ensureToolResultPairing(h);
    expect(first.report.callIdsRenamed.map((r) => r.to)).toEqual(["d_4", "d_5"]);
    expect(first.messages.slice(1, 4).map((m) => tool(m).toolCallId)).toEqual(["d", "d_4", "d_5"]);
    expect(ensureToolResultPairing(h).messages).toEqual(first.messages);
  });

  it("ResultBeyondNextAssistantNotClaimed: a result past the next assistant is not claimed; its call is told where the late text is", () => {
    const h = [A("wf:0"), say("interleaved"), T("wf:0", "late")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.syntheticResultsInjected).toBe(0);
    expect(report.orphanResultsRemoved).toBe(0);
    expect(report.lateResults).toBe(1);
    expect(report.lateResultIds).toEqual(["wf:0"]);
    expect(report.removedResults.map(text)).toEqual(["late"]);
    expect(messages.map((m) => m.role)).toEqual(["assistant", "tool", "assistant"]);
    expect(text(messages[1])).toBe(lateResultText("late"));
    expect(text(messages[1])).toContain(`recall <<ccr:${archiveKey("late")}>>`);
    expect(text(messages[1])).not.toContain("Do NOT retry");
    expect(tool(messages[1]).isError).toBe(false);
    expect(text(messages[2])).toBe("interleaved");
  });

  it("several late results of one turn each point at their own text; a later turn reusing the id keeps its own result", () => {
    const h = [A("x", "y"), say("meanwhile"), T("y", "late y"), T("x", "late x")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(report.lateResults).toBe(2);
    expect(texts3(messages)).toEqual([lateResultText("late x"), lateResultText("late y")]);
    const reused = [A("x"), say("meanwhile"), A("x"), T("x", "fresh")];
    const second = ensureToolResultPairing(reused);
    expect(second.report.lateResults).toBe(0);
    expect(second.report.syntheticResultsInjected).toBe(1);
    expect(texts3(second.messages)).toEqual([SYNTHETIC_RESULT_TEXT, "fresh"]);
  });

  it("SyntheticsAreErrorMarked: synthetic results are errors with code missing_result and the call's tool name", () => {
    const { messages } = ensureToolResultPairing([A("wf:0")]);
    const synthetic = tool(messages[1]);
    expect(synthetic.isError).toBe(true);
    expect(synthetic.errorCode).toBe(SYNTHETIC_ERROR_CODE);
    expect(synthetic.errorCode).toBe("missing_result");
    expect(synthetic.toolName).toBe("web_fetch");
    expect(SYNTHETIC_RESULT_TEXT).toContain("Do NOT retry this tool call");
    expect(SYNTHETIC_RESULT_TEXT).toContain("—");
  });

  it("EmptyIDCallPruned: a call with an empty id is dropped, and a second pass is a no-op", () => {
    const h = [A("", "wf:1"), T("wf:1", "ok")];
    const first = ensureToolResultPairing(h);
    expect(first.report.duplicateToolUsePruned).toBe(1);
    expect(toolCallsOf(first.messages[0]!).map((c) => c.id)).toEqual(["wf:1"]);
    const second = ensureToolResultPairing(first.messages);
    expect(hasRepairs(second.report)).toBe(false);
    expect(second.messages).toBe(first.messages);
  });

  it("OutOfOrderAdjacentIsValid: adjacent results in another order than the calls are left alone", () => {
    const h = [A("0", "1"), T("1", "b"), T("0", "a")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(hasRepairs(report)).toBe(false);
    expect(messages).toBe(h);
  });

  it("an intact turn keeps its order when another turn is repaired, an output answering a call kept by the provider among its results", () => {
    const h = [U("go on"), A("c2"), T("c1", "stored call's output"), T("c2", "21C"), U("and now?"), A("c3"), U("never mind")];
    const { messages, report } = ensureToolResultPairing(h, { externalCalls: true });
    expect(report.syntheticResultsInjected).toBe(1);
    // the first turn is copied message for message (its bytes, and the prompt cache behind them, stay the same)
    expect(messages.slice(0, 5)).toEqual(h.slice(0, 5));
    for (let i = 0; i < 5; i++) expect(messages[i]).toBe(h[i]);
    expect(validatePairing(messages, { externalCalls: true })).toEqual([]);
  });

  it("CountPendingToolCalls_LastBlockScoped: only the last block's unanswered calls count", () => {
    const h: Message[] = [A("0", "1"), T("0", "a")];
    expect(countPendingToolCalls(h)).toBe(1);
    h.push(T("1", "b"));
    expect(countPendingToolCalls(h)).toBe(0);
  });
});

describe("ensureToolResultPairing — more behaviour", () => {
  it("never mutates its input", () => {
    const h = [A("wf:0", "wf:0"), U("x"), T("wf:0", "r"), T("ghost", "g")];
    const snapshot = JSON.stringify(h);
    ensureToolResultPairing(h);
    expect(JSON.stringify(h)).toBe(snapshot);
  });

  it("a duplicate result for one call keeps the first and is counted as a duplicate, not an orphan", () => {
    const h = [A("x"), T("x", "first"), T("x", "second")];
    const { messages, report } = ensureToolResultPairing(h);
    expect(texts3(messages)).toEqual(["first"]);
    expect(report.orphanResultsRemoved).toBe(0);
    expect(report.duplicateResultsRemoved).toBe(1);
    expect(report.duplicateResultIds).toEqual(["x"]);
  });

  it("a repaired history is reported valid by validatePairing and a second pass reports nothing", () => {
    const h = [U("go"), T("pre", "orphan"), A("a", "b", "a", ""), U("prose"), T("b", "B"), say("mid"), T("a", "late"), A("c")];
    const first = ensureToolResultPairing(h);
    expect(validatePairing(first.messages)).toEqual([]);
    const second = ensureToolResultPairing(first.messages);
    expect(second.messages).toBe(first.messages);
    expect(hasRepairs(second.report)).toBe(false);
  });

  it("validatePairing names each kind of problem with its message index", () => {
    const h = [T("o", "orphan"), A("a", "a", "b", ""), U("prose"), T("b", "B"), say("x")];
    const kinds = validatePairing(h).map((p) => `${p.kind}@${p.index}:${p.toolCallId}`);
    expect(kinds).toContain("orphan_result@0:o");
    expect(kinds).toContain("duplicate_call_id@1:a");
    expect(kinds).toContain("empty_call_id@1:");
    expect(kinds).toContain("displaced_result@3:b");
    expect(kinds).toContain("missing_result@1:a");
  });
});

function texts3(messages: readonly Message[]): string[] {
  return messages.filter((m) => m.role === "tool").map(text);
}
