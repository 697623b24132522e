// A count of characters shown to a model agrees with its noun: "1 char", never "1 chars" (other counts
// keep "chars", pinned by the tests of each text). Each text that is read back (stubs, recall page
// headers) is recognised in both spellings, so a stub written before this change is still a stub and
// every pass stays idempotent.
import { describe, expect, it } from "vitest";
import {
  describeLinePart,
  describePrepareReport,
  lateResultText,
  MemoryArchive,
  MIN_RECALL_MAX_CHARS,
  parseStub,
  prepareHistory,
  recall,
  userText,
} from "../../src/context/index.js";
import { buildInputStub } from "../../src/context/call-inputs.js";
import { recallWithin } from "../../src/context/recall-within.js";
import { buildSummary } from "../../src/context/stubs.js";

const KEY = "0123456789abcdef";

describe("one character is '1 char'", () => {
  it("the summary of an old result, and it parses back", () => {
    const one = buildSummary({ lines: 1, chars: 1, kind: "text" }, { keys: [KEY] });
    expect(one).toBe(`[Old tool result cleared — 1 line, 1 char, text]\n[full content recoverable via recall <<ccr:${KEY}>>]`);
    expect(parseStub(one)).toEqual({ level: "cleared", lines: 1, chars: 1, kind: "text", keys: [KEY] });
  });

  it("a summary written with '1 chars' (before this change) or '1 char' is still recognised as a stub", () => {
    for (const chars of ["1 chars", "1 char"]) {
      expect(parseStub(`[Old tool result cleared — 3 lines, ${chars}, JSON]`)).toEqual({ level: "cleared", lines: 3, chars: 1, kind: "JSON", keys: [] });
    }
  });

  it("the stub of an old tool input", () => {
    expect(buildInputStub("x", KEY)).toBe(`[Old tool input cleared — 1 char, 1 line, first line "x"; recall <<ccr:${KEY}>> for all of it]`);
  });

  it("the part of a line an answer shows", () => {
    expect(describeLinePart(4, 1, 1, 2)).toBe("line 4 is 1 char, shown here as chars 1-1 (0 left out)");
  });

  it("a late result's answer", () => {
    expect(lateResultText("x")).toContain("The output exists (1 char): recall <<ccr:");
  });

  it("a recall page's header, and a column past the end of a one-character line", () => {
    const store = new MemoryArchive();
    const k = store.put("x");
    expect(recall(k, store, { offset: 1 }).text).toBe(`[recall <<ccr:${k}>>: lines 1-1 of 1 (1 char). This is the end.]\nx`);
    expect(recall(k, store, { offset: 1, column: 3 }).text).toBe(`[recall <<ccr:${k}>>: column 3 is past the end of line 1 — it has 1 char.]`);
  });

  it("a one-character text among many keys that leaves it no room", () => {
    const store = new MemoryArchive();
    const one = store.put("x");
    const keys = [one, ...Array.from({ length: 63 }, (_, i) => store.put(`${i} ${"z".repeat(50_000)}`))];
    const r = recall(keys.join(" "), store, { maxChars: MIN_RECALL_MAX_CHARS, offset: 1 }).text;
    expect(r).toContain(`[recall <<ccr:${one}>>: 1 char — no room for it beside the other keys in this answer; recall it alone.]`);
  });

  it("a recall answer given again with no room for a page", () => {
    const saved: string[] = [];
    const note = recallWithin("x", { key: KEY }, 0, (text) => (saved.push(text), "fedcba9876543210"));
    expect(note).toBe(`[recall <<ccr:${KEY}>>: 1 char, none shown: no room in this step's share of the turn. Next: recall <<ccr:${KEY}>> offset=1.]`);
    expect(saved).toEqual([]);
  });
});

describe("recall page headers with '1 char' or '1 chars' are read back as pages of the call's key", () => {
  // Read back, the answer is given again as a note on the call's own key; not read back, it would be saved under a new key.
  const given = (answer: string, input: Record<string, unknown>) => {
    const saved: string[] = [];
    const text = recallWithin(answer, { key: KEY, ...input }, 10, (t) => (saved.push(t), "fedcba9876543210"));
    return { text, saved };
  };

  it("the text's length in the header", () => {
    for (const chars of ["1 char", "1 chars"]) {
      const answer = `[recall <<ccr:${KEY}>>: lines 1-1 of 1 (${chars}). This is the end.]\nx`;
      const { text, saved } = given(answer, { offset: 1 });
      expect(saved).toEqual([]);
      expect(text).toBe(
        `[recall <<ccr:${KEY}>>: ${answer.length} chars, none shown: no room in this step's share of the turn. Next: recall <<ccr:${KEY}>> offset=1.]`,
      );
    }
  });

  it("the length of a line shown in part", () => {
    for (const chars of ["1 char", "1 chars"]) {
      const answer = `[recall <<ccr:${KEY}>>: lines 1-1 of 2 (3 chars); line 1 is ${chars}, shown here as chars 1-1 (0 left out). Next: recall <<ccr:${KEY}>> offset=1 column=2.]\nx`;
      const { saved } = given(answer, { offset: 1 });
      expect(saved).toEqual([]);
    }
  });
});

it("spool compact's report of a one-message history says '1 message in' (it read '1 messages in')", () => {
  const { report } = prepareHistory([userText("hi")], { archive: new MemoryArchive() });
  expect(describePrepareReport(report, { format: "anthropic", messagesIn: 1, messagesOut: 1 }).split("\n")[0]).toBe(
    "spool compact: anthropic, 1 message in, 1 out",
  );
  expect(describePrepareReport(report, { format: "anthropic", messagesIn: 2, messagesOut: 2 }).split("\n")[0]).toBe(
    "spool compact: anthropic, 2 messages in, 2 out",
  );
});
