// recall's answers are bounded by a cap the caller sees and pages past: a text, a page or a line too
// long for one answer comes back in parts whose headers name the exact next call, and a grep match on
// a long line shows a window around the match, not the line.
import { describe, expect, it } from "vitest";
import { DEFAULT_RECALL_MAX_CHARS, MemoryArchive, MIN_RECALL_MAX_CHARS, recall, RecallError, type RecallOptions } from "../../src/context/index.js";

/** A 5 MB single-line JSON document with one "needle" near its end. */
const minified = `{"rows":[${Array.from({ length: 130_000 }, (_, i) => `{"id":${i},"v":"${"x".repeat(20)}"}`).join(",")},{"needle":"found it"}]}`;

interface Next {
  offset: number;
  column?: number;
  limit?: number;
}

/** The header's advertised next call, or undefined at the end. */
function nextOf(header: string): Next | undefined {
  const m = /Next: recall <<ccr:[0-9a-f]{16}>> offset=(\d+)(?: column=(\d+))?(?: limit=(\d+))?\./.exec(header);
  if (!m) return undefined;
  return { offset: Number(m[1]), ...(m[2] ? { column: Number(m[2]) } : {}), ...(m[3] ? { limit: Number(m[3]) } : {}) };
}

/** Pages through `key` from `first` following each answer's Next; returns the bodies joined and the answers. */
function pageThrough(store: MemoryArchive, key: string, first: RecallOptions, max = 10_000): { text: string; answers: string[] } {
  let options: RecallOptions = first;
  let text = "";
  const answers: string[] = [];
  for (let i = 0; i < max; i++) {
    const answer = recall(key, store, options).text;
    answers.push(answer);
    const nl = answer.indexOf("\n");
    const header = nl < 0 ? answer : answer.slice(0, nl);
    if (nl >= 0) text += answer.slice(nl + 1);
    const next = nextOf(header);
    if (!next) return { text, answers };
    options = { ...next, ...(first.maxChars !== undefined ? { maxChars: first.maxChars } : {}) };
  }
  throw new Error("paging did not end");
}

describe("recall answers are bounded", () => {
  const store = new MemoryArchive();
  const key = store.put(minified);

  it("a 5 MB one-line text recalled without options comes back as its first slice, with how many chars were left out and the exact next call", () => {
    expect(minified.length).toBeGreaterThan(5_000_000);
    const answer = recall(key, store).text;
    expect(answer.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
    const [header] = answer.split("\n", 1);
    const shown = answer.length - header!.length - 1;
    expect(header).toContain(`line 1 is ${minified.length} chars, shown here as chars 1-${shown} (${minified.length - shown} left out)`);
    expect(header).toContain(`this answer stops at its cap of ${DEFAULT_RECALL_MAX_CHARS} chars`);
    expect(header).toContain(`Next: recall <<ccr:${key}>> offset=1 column=${shown + 1}.`);
    expect(answer.slice(header!.length + 1)).toBe(minified.slice(0, shown));
  });

  it("following the advertised next calls through the 5 MB line gives back every character, each answer within the cap", () => {
    const { text, answers } = pageThrough(store, key, {});
    expect(text).toBe(minified);
    for (const answer of answers) expect(answer.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
    expect(answers.at(-1)!.split("\n", 1)[0]).toContain("This is the end.");
  });

  it("a grep match on the 5 MB line shows a window around the match with the calls for the rest, not the line", () => {
    const answer = recall(key, store, { grep: "needle" }).text;
    expect(answer.length).toBeLessThan(2_000);
    const [header, entry] = answer.split("\n");
    expect(header).toContain("1 line(s) matching /needle/ in lines 1-1 of 1.");
    const at = minified.indexOf("needle");
    expect(entry).toContain(
      `1: [line of ${minified.length} chars, showing chars ${at + 1 - 200}-${minified.length} (${at - 200} left out) around the match at char ${at + 1}`,
    );
    expect(entry).toContain(`whole line: recall <<ccr:${key}>> offset=1 limit=1`);
    expect(entry!.endsWith(minified.slice(at - 200))).toBe(true);
  });

  it("the read-on call of a grep window continues the line right after the window", () => {
    const text = `short\n${"a".repeat(300_000)}MATCH${"b".repeat(300_000)}\ntail\n`;
    const k = store.put(text);
    const entry = recall(k, store, { grep: "MATCH" }).text.split("\n")[1]!;
    const m = /read on: recall <<ccr:[0-9a-f]{16}>> offset=(\d+) column=(\d+) limit=1/.exec(entry)!;
    expect(m).not.toBeNull();
    const window = entry.slice(entry.indexOf("] ") + 2);
    const lineStart = text.indexOf("\n") + 1;
    const page = recall(k, store, { offset: Number(m[1]), column: Number(m[2]), limit: 1 }).text;
    const body = page.slice(page.indexOf("\n") + 1);
    expect(text.slice(lineStart, lineStart + Number(m[2]) - 1).endsWith(window)).toBe(true);
    expect(text.slice(lineStart + Number(m[2]) - 1).startsWith(body)).toBe(true);
  });

  it("every match on one long line is reached through the advertised later-matches calls", () => {
    const positions = [10, 150_000, 150_003, 600_000];
    let line = "";
    for (const p of positions) line += "-".repeat(p - line.length) + "hit";
    line += "-".repeat(1000);
    const k = store.put(line);
    const found: number[] = [];
    let options: RecallOptions = { grep: "hit" };
    for (let i = 0; i < 10; i++) {
      const entry = recall(k, store, options).text.split("\n")[1];
      if (entry === undefined) break;
      found.push(Number(/around the match at char (\d+)/.exec(entry)![1]) - 1);
      const later = /later matches: recall <<ccr:[0-9a-f]{16}>> grep="hit" offset=1 column=(\d+)/.exec(entry);
      if (!later) break;
      options = { grep: "hit", offset: 1, column: Number(later[1]) };
    }
    expect(found).toEqual(positions);
  });

  it("a page of many normal lines stops at a line boundary at the cap and the next page starts on the next line", () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `${i} ${"y".repeat(80)}`).join("\n") + "\n";
    const k = store.put(lines);
    const answer = recall(k, store, { offset: 1, limit: 10_000 }).text;
    expect(answer.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
    const [header] = answer.split("\n", 1);
    const next = nextOf(header!)!;
    expect(header).toContain(`lines 1-${next.offset - 1} of 10000`);
    expect(next.column).toBeUndefined();
    expect(next.limit).toBe(10_000);
    expect(answer.endsWith("\n")).toBe(true);
    expect(pageThrough(store, k, { offset: 1, limit: 10_000 }).text).toBe(lines);
  });

  it("a surrogate pair is never split by a slice, and the slices still join to the original", () => {
    const line = "😀".repeat(60_000) + "\n";
    const k = store.put(line);
    const { text, answers } = pageThrough(store, k, { maxChars: MIN_RECALL_MAX_CHARS });
    expect(text).toBe(line);
    for (const answer of answers) {
      const body = answer.slice(answer.indexOf("\n") + 1);
      expect(body.length % 2 === 0 || body.endsWith("\n")).toBe(true);
    }
  });

  it("a caller's maxChars is the cap; Infinity gives the whole text", () => {
    const answer = recall(key, store, { maxChars: MIN_RECALL_MAX_CHARS }).text;
    expect(answer.length).toBeLessThanOrEqual(MIN_RECALL_MAX_CHARS);
    expect(recall(key, store, { maxChars: Number.POSITIVE_INFINITY }).text).toBe(minified);
    expect(recall(key, store, { offset: 1, maxChars: Number.POSITIVE_INFINITY }).text.endsWith(minified)).toBe(true);
  });

  it("several keys share one cap: short texts whole, the long one paged, the answer within the cap", () => {
    const small = store.put("small text");
    const r = recall(`${small} ${key}`, store).text;
    expect(r.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
    expect(r.startsWith(`--- recall <<ccr:${small}>> ---\nsmall text\n\n--- recall <<ccr:${key}>> ---\n[recall <<ccr:${key}>>: lines 1-1 of 1`)).toBe(true);
    expect(r).toContain(`Next: recall <<ccr:${key}>> offset=1 column=`);
  });

  it("64 long texts in one call each get a note saying to recall them alone, within the smallest cap", () => {
    const keys = Array.from({ length: 64 }, (_, i) => store.put(`${i} ${"z".repeat(50_000)}`));
    const r = recall(keys.join(" "), store, { maxChars: MIN_RECALL_MAX_CHARS }).text;
    expect(r.length).toBeLessThanOrEqual(MIN_RECALL_MAX_CHARS);
    expect(r).toContain(`[recall <<ccr:${keys[0]}>>: 50002 chars — no room for it beside the other keys in this answer; recall it alone.]`);
  });

  it("a column past the end of its line, a bad column and a cap below the minimum are clear", () => {
    const k = store.put("abc\ndef\n");
    expect(recall(k, store, { offset: 2, column: 4 }).text).toBe(
      `[recall <<ccr:${k}>>: lines 2-2 of 2 (8 chars); line 2 is shown from char 4. This is the end.]\n\n`,
    );
    expect(recall(k, store, { offset: 2, column: 5 }).text).toBe(`[recall <<ccr:${k}>>: column 5 is past the end of line 2 — it has 3 chars.]`);
    for (const options of [{ column: 0 }, { column: 1.5 }, { maxChars: 100 }, { maxChars: Number.NaN }] as RecallOptions[]) {
      let err: unknown;
      try {
        recall(k, store, options);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(RecallError);
      expect((err as RecallError).code).toBe("SPOOL_RECALL_OPTION");
    }
  });
});
