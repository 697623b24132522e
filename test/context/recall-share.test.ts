// Parallel recalls of one step share the turn budget: each answer over its fair share is given again
// within it (a shorter page of the same text, from the same line, naming the next call), never cut to
// a preview that names the same text to recall again; an answer that is no page of one text (grep,
// several keys) is saved under its own key and paged from its first line.
import { describe, expect, it } from "vitest";
import {
  assistant,
  enforceToolResultBudget,
  MemoryArchive,
  prepareHistory,
  recall,
  textOf,
  toolResult,
  userText,
  type AssistantMessage,
  type ImagePart,
  type Message,
  type RecallOptions,
  type ToolCallPart,
  type ToolResultMessage,
} from "../../src/context/index.js";
import { imageCostChars } from "../../src/context/image-cost.js";
import { png } from "../support/png.js";

const BUDGET = 200_000;

function logText(size: number, seed: number): string {
  let s = "";
  for (let i = 0; s.length < size; i++) s += `worker ${seed} request ${i} handled in ${(i * 7919) % 997}ms\n`;
  return s.slice(0, size);
}

/** One step of recall calls and their answers as the recall tool gives them (cap 100,000). */
function step(store: MemoryArchive, inputs: readonly Record<string, unknown>[], extra: readonly Message[] = []): Message[] {
  const calls = inputs.map((input, i) => ({ id: `call_${i}`, name: "recall", input }));
  return [
    userText("Read them."),
    assistant("", [...calls, ...extra.map((m) => ({ id: (m as { toolCallId: string }).toolCallId, name: "bash" }))]),
    ...calls.map((c) => {
      const { key, ...paging } = c.input as unknown as { key: string } & RecallOptions;
      return toolResult(c.id, recall(key, store, { ...paging, maxChars: 100_000 }).text, { toolName: "recall" });
    }),
    ...extra,
  ];
}

/** Follows each answer's `Next: recall <<ccr:KEY>> offset=N [column=C]` with the recall tool; returns the page bodies joined. */
function readOn(store: MemoryArchive, first: string): string {
  let answer = first;
  let text = "";
  for (;;) {
    const nl = answer.indexOf("\n");
    text += answer.slice(nl + 1);
    const next = /Next: recall <<ccr:([0-9a-f]{16})>> offset=(\d+)(?: column=(\d+))?\.\]$/.exec(answer.slice(0, nl));
    if (!next) return text;
    answer = recall(next[1]!, store, { offset: Number(next[2]), ...(next[3] ? { column: Number(next[3]) } : {}) }).text;
  }
}

describe("parallel recalls share the turn budget", () => {
  it("three recalls of a 192.5K-char text in one step each get about a third of the turn, and read on from there", () => {
    const store = new MemoryArchive();
    const texts = [0, 1, 2].map((seed) => logText(192_500, seed));
    const keys = texts.map((t) => store.put(t));
    const messages = step(
      store,
      keys.map((key) => ({ key: `<<ccr:${key}>>` })),
    );
    const { messages: out, report } = enforceToolResultBudget(messages, { turnBudgetChars: BUDGET, toolCaps: { recall: 100_000 }, archive: store });
    const answers = out.slice(2).map((m) => textOf(m));
    const total = answers.reduce((sum, a) => sum + a.length, 0);
    expect(total).toBeLessThanOrEqual(BUDGET);
    for (const [i, answer] of answers.entries()) {
      // short of the share by at most a line (~45 chars) and the room kept for the longest header
      expect(answer.length).toBeGreaterThan(Math.floor(BUDGET / 3) - 400);
      expect(answer.startsWith(`[recall <<ccr:${keys[i]}>>: lines 1-`)).toBe(true);
      expect(readOn(store, answer)).toBe(texts[i]);
    }
    expect(report.recallsRefit).toBe(3);
    expect(report.resultsTruncated).toBe(0);
    // the same history again gives the same bytes (prompt caches stay warm)
    expect(enforceToolResultBudget(messages, { turnBudgetChars: BUDGET, toolCaps: { recall: 100_000 }, archive: store }).messages).toEqual(out);
  });

  it("a page asked for from a line and column is given again from the same line and column", () => {
    const store = new MemoryArchive();
    const long = `${"x".repeat(150_000)}\n${logText(150_000, 7)}`;
    const key = store.put(long);
    const other = store.put(logText(150_000, 8));
    const messages = step(store, [
      { key, offset: 1, column: 20_001 },
      { key: other, offset: 500, limit: 3000 },
    ]);
    const { messages: out } = enforceToolResultBudget(messages, { turnBudgetChars: 100_000, toolCaps: { recall: 100_000 }, archive: store });
    const [slice, page] = out.slice(2).map((m) => textOf(m));
    expect(slice!.length + page!.length).toBeLessThanOrEqual(100_000);
    expect(slice).toMatch(/^\[recall <<ccr:[0-9a-f]{16}>>: lines 1-1 of \d+ \(\d+ chars\); line 1 is 150000 chars, shown here as chars 20001-\d+ /);
    expect(readOn(store, slice!)).toBe(long.slice(20_000));
    expect(page).toMatch(/^\[recall <<ccr:[0-9a-f]{16}>>: lines 500-\d+ of \d+ .* Next: recall <<ccr:[0-9a-f]{16}>> offset=\d+ limit=3000\.\]\n/);
    const body = page!.slice(page!.indexOf("\n") + 1);
    const shownTo = Number(/lines 500-(\d+)/.exec(page!)![1]);
    expect(body.split("\n").length - 1).toBe(shownTo - 499);
    expect(page).toContain(`offset=${shownTo + 1} limit=3000.]`);
  });

  it("a grep or several-key answer over its share is saved under its own key and paged from line 1", () => {
    const store = new MemoryArchive();
    const keys = [0, 1, 2].map((seed) => store.put(logText(192_500, seed)));
    const messages = step(store, [{ key: keys[0], grep: "request", limit: 5000 }, { key: `${keys[1]} ${keys[2]}` }, { key: keys[0] }]);
    const originals = messages.slice(2).map((m) => textOf(m));
    const { messages: out, report } = enforceToolResultBudget(messages, { turnBudgetChars: BUDGET, toolCaps: { recall: 100_000 }, archive: store });
    const answers = out.slice(2).map((m) => textOf(m));
    expect(answers.reduce((sum, a) => sum + a.length, 0)).toBeLessThanOrEqual(BUDGET);
    for (const i of [0, 1]) {
      const header = answers[i]!.slice(0, answers[i]!.indexOf("\n"));
      const m =
        /^\[recall <<ccr:([0-9a-f]{16})>>: lines 1-(\d+) of (\d+) \((\d+) chars\); this answer stops at its cap of \d+ chars\. Next: recall <<ccr:\1>> offset=(\d+)\.\]$/.exec(
          header,
        );
      expect(m, header).not.toBeNull();
      expect(store.get(m![1]!)).toBe(originals[i]);
      // the lines shown are the ones the offset reads on after
      expect(Number(m![5])).toBe(Number(m![2]) + 1);
      expect(answers[i]!.slice(header.length + 1)).toBe(originals[i]!.split("\n").slice(0, Number(m![2])).join("\n") + "\n");
      expect(readOn(store, answers[i]!)).toBe(originals[i]);
    }
    expect(report.keysSaved).toHaveLength(2);
    expect(report.recallsRefit).toBe(3);
  });

  it("another result beside the recalls is cut only when it is above the fair share; the recalls share the rest", () => {
    const store = new MemoryArchive();
    const keys = [0, 1].map((seed) => store.put(logText(192_500, seed)));
    const bash = (id: string, size: number): Message => toolResult(id, logText(size, 9), { toolName: "bash" });
    const small = enforceToolResultBudget(step(store, [{ key: keys[0] }, { key: keys[1] }], [bash("b", 40_000)]), {
      turnBudgetChars: BUDGET,
      maxResultChars: 100_000,
      toolCaps: { recall: 100_000 },
      archive: store,
    });
    const [r0, r1, b] = small.messages.slice(2).map((m) => textOf(m).length);
    expect(b).toBe(40_000);
    expect(r0! + r1! + b!).toBeLessThanOrEqual(BUDGET);
    expect(Math.min(r0!, r1!)).toBeGreaterThan(40_000);
    const big = enforceToolResultBudget(step(store, [{ key: keys[0] }, { key: keys[1] }], [bash("b", 90_000)]), {
      turnBudgetChars: BUDGET,
      maxResultChars: 100_000,
      toolCaps: { recall: 100_000 },
      archive: store,
    });
    const sizes = big.messages.slice(2).map((m) => textOf(m).length);
    expect(big.report.resultsTruncated).toBe(1);
    expect(sizes[2]).toBeLessThan(6_000);
    for (const i of [0, 1]) expect(sizes[i]).toBeGreaterThan(Math.floor((BUDGET - sizes[2]!) / 2) - 400);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(BUDGET);
  });

  it("through prepareHistory, a recall answer over recall's own per-result limit is a shorter page, not a preview of itself", () => {
    const store = new MemoryArchive();
    const text = logText(192_500, 3);
    const key = store.put(text);
    const { messages: out } = prepareHistory(step(store, [{ key }]), { archive: store, config: { maxResultChars: 20_000 }, assertValid: true });
    const answer = textOf(out[2]!);
    expect(answer.length).toBeLessThanOrEqual(20_000);
    expect(answer.startsWith(`[recall <<ccr:${key}>>: lines 1-`)).toBe(true);
    expect(readOn(store, answer)).toBe(text);
  });

  it("a recall that gives an image back keeps it, and the image's model cost comes out of the turn before the others share it", () => {
    const store = new MemoryArchive();
    const keys = [0, 1].map((seed) => store.put(logText(192_500, seed)));
    const image: ImagePart = { type: "image", mediaType: "image/png", data: png(1280, 800, 300_000, 1) };
    const cost = imageCostChars(image);
    const messages = step(store, [{ key: keys[0] }, { key: keys[1] }]);
    messages[1] = assistant("", [
      ...(messages[1] as AssistantMessage).content
        .filter((p) => p.type === "toolCall")
        .map((p) => ({ id: (p as ToolCallPart).id, name: "recall", input: (p as ToolCallPart).input })),
      { id: "img", name: "recall", input: { key: "0123456789abcdef" } },
    ]);
    messages.push({
      role: "tool",
      toolCallId: "img",
      toolName: "recall",
      isError: false,
      content: [{ type: "text", text: "[recall <<ccr:0123456789abcdef>>: the image … is attached to this answer.]" }, image],
    });
    const { messages: out, report } = enforceToolResultBudget(messages, { turnBudgetChars: BUDGET, toolCaps: { recall: 100_000 }, archive: store });
    expect(report.imageChars).toBe(cost);
    expect((out[4] as ToolResultMessage).content[1]).toBe(image);
    const texts = out.slice(2).map((m) => textOf(m).length);
    expect(texts.reduce((a, b) => a + b, 0) + cost).toBeLessThanOrEqual(BUDGET);
    for (const i of [0, 1]) expect(texts[i]).toBeGreaterThan(Math.floor((BUDGET - cost - texts[2]!) / 2) - 400);
  });

  it("so many recalls in one step that a share holds no page: an answer is a one-line note naming the call that reads it", () => {
    const store = new MemoryArchive();
    const keys = Array.from({ length: 100 }, (_, i) => store.put(logText(30_000, i)));
    const messages = step(
      store,
      keys.map((key) => ({ key })),
    );
    const { messages: out } = enforceToolResultBudget(messages, { turnBudgetChars: 16_384, toolCaps: { recall: 100_000 }, archive: store });
    const answers = out.slice(2).map((m) => textOf(m));
    expect(answers.reduce((sum, a) => sum + a.length, 0)).toBeLessThanOrEqual(16_384);
    // what a note leaves unused goes to the answers after it, which may then hold a line or two
    const notes = answers.filter(
      (a, i) =>
        a === `[recall <<ccr:${keys[i]}>>: 30000 chars, none shown: no room in this step's share of the turn. Next: recall <<ccr:${keys[i]}>> offset=1.]`,
    );
    expect(notes.length).toBeGreaterThan(50);
    for (const [i, answer] of answers.entries()) expect(answer.split("\n", 1)[0]).toMatch(new RegExp(`Next: recall <<ccr:${keys[i]}>> offset=\\d+\\.\\]$`));
  });
});
