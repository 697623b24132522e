import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_RECALL_MAX_CHARS, extractRecallKeys, isRecallTool, isValidKey, MemoryArchive, recall, RecallError } from "../../src/context/index.js";

const K = "aaaabbbbccccdddd";

describe("recall key extraction", () => {
  it.each([
    ["canonical marker in JSON", `{"key":"<<ccr:${K}>>"}`],
    ["bare key", K],
    ["ccr: prefix", `ccr:${K}`],
    ["single brackets", `<ccr:${K}>`],
    ["upper case", `<<CCR:${K.toUpperCase()}>>`],
    ["spaces inside the marker", `<< ccr : ${K} >>`],
    ["marker alias", `{"marker":"${K}"}`],
    ["id alias", `{"id":"${K}"}`],
    ["backticked", "`" + K + "`"],
    ["bare ccr: payload", ` ccr:${K} `],
    ["naked hex payload", `  ${K}\n`],
    ["marker inside prose", `please recall <<ccr:${K}>> for me`],
    ["marker in an unknown field", `{"whatever":"see <<ccr:${K}>>"}`],
  ])("%s", (_name, payload) => {
    expect(extractRecallKeys(payload)).toEqual([K]);
  });

  it.each([
    ["empty", ""],
    ["15 hex chars", K.slice(1)],
    ["non-hex", "zzzzbbbbccccdddd"],
    ["naked hex inside prose", `the key is ${K} I think`],
  ])("no key in %s", (_name, payload) => {
    expect(extractRecallKeys(payload)).toEqual([]);
  });

  it.each([
    ["space-separated", (a: string, b: string) => `${a} ${b}`],
    ["comma-separated", (a: string, b: string) => `${a},${b}`],
    ["comma and space", (a: string, b: string) => ` ${a}, ${b} `],
    ["one per line", (a: string, b: string) => `${a}\n${b}\n`],
    ["a JSON array", (a: string, b: string) => JSON.stringify([a, b])],
    ["a JSON field with two bare keys", (a: string, b: string) => JSON.stringify({ key: `${a} ${b}` })],
    ["quoted, backticked and upper case", (a: string, b: string) => `"${a}" \`${b.toUpperCase()}\``],
  ])("several bare keys: %s", (_name, join) => {
    const other = "0123456789abcdef";
    expect(extractRecallKeys(join(K, other))).toEqual([K, other]);
  });

  it("JSON strings are judged one by one: a field or entry that is not a key does not hide one that is", () => {
    expect(extractRecallKeys(JSON.stringify({ id: "call_1", key: K }))).toEqual([K]);
    expect(extractRecallKeys(JSON.stringify(["see", K, 3]))).toEqual([K]);
  });

  it.each([
    ["as a preview names it", `results/${K}.txt`],
    ["saved as JSON", `results/${K}.json`],
    ["absolute", `/home/u/.spool/sessions/20260101-000000-abcde/results/${K}.txt`],
    ["next to a key", `results/${K}.txt 0123456789abcdef`],
  ])("the result file path %s gives its key", (_name, payload) => {
    expect(extractRecallKeys(payload)[0]).toBe(K);
  });

  it.each([
    ["another directory", `spill/${K}.txt`],
    ["a parent segment", `../results/${K}.txt`],
    ["an absolute parent segment", `/a/../results/${K}.txt`],
    ["a relative prefix", `x/results/${K}.txt`],
    ["another extension", `results/${K}.log`],
    ["a suffix", `results/${K}.txt.bak`],
    ["a longer name", `results/${K}0.txt`],
    ["a key and prose", `${K} please`],
  ])("no key in %s", (_name, payload) => {
    expect(extractRecallKeys(payload)).toEqual([]);
  });

  it("finds every key of several markers, deduped in order", () => {
    const other = "0123456789abcdef";
    expect(extractRecallKeys(`<<ccr:${other}>> and ccr:${K} and <<ccr:${other}>>`)).toEqual([other, K]);
  });

  it("never throws and only returns valid keys on arbitrary payloads", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.string({ unit: "binary" })), (s) => {
        for (const key of extractRecallKeys(s)) expect(isValidKey(key)).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });
});

describe("recall", () => {
  const store = new MemoryArchive();
  const original = "first line\nsecond line\n\tthird 😀\n";
  const key = store.put(original);

  it("returns the original byte-identical for a bare key, a marker, or a ccr: prefix", () => {
    for (const payload of [key, `<<ccr:${key}>>`, `ccr:${key}`]) expect(recall(payload, store).text).toBe(original);
  });

  it("several keys give labelled sections with a miss reported in place", () => {
    const second = store.put("second text");
    const missing = "ffffffffffffffff";
    const r = recall(`<<ccr:${key}>> <<ccr:${missing}>> <<ccr:${second}>>`, store);
    expect(r.text).toBe(
      `--- recall <<ccr:${key}>> ---\n${original}\n\n--- recall <<ccr:${missing}>> ---\n[not found — expired or evicted from the local store]\n\n--- recall <<ccr:${second}>> ---\nsecond text`,
    );
    expect(r.missing).toEqual([missing]);
  });

  it("a payload without a key is an error that says what a key looks like", () => {
    expect(() => recall("give me the thing", store)).toThrow(/16 hex chars/);
    try {
      recall("nothing", store);
    } catch (err) {
      expect(err).toBeInstanceOf(RecallError);
      expect((err as RecallError).code).toBe("SPOOL_RECALL_NO_KEY");
    }
  });

  it("an unknown key is an error naming it", () => {
    expect(() => recall("<<ccr:0000000000000000>>", store)).toThrow(/key "0000000000000000" not found/);
  });
});

describe("recall paging", () => {
  const store = new MemoryArchive();
  const text = Array.from({ length: 1_000 }, (_, i) => `line ${i + 1}: ${i % 7 === 0 ? "ERROR failed step" : "ok"}`).join("\n") + "\n";
  const key = store.put(text);

  it("offset and limit show a line range and say how to get the next one", () => {
    const page = recall(key, store, { offset: 11, limit: 3 }).text;
    const [header, ...rest] = page.split("\n");
    expect(header).toBe(`[recall <<ccr:${key}>>: lines 11-13 of 1000 (${text.length} chars). Next: recall <<ccr:${key}>> offset=14 limit=3.]`);
    expect(rest.join("\n")).toBe("line 11: ok\nline 12: ok\nline 13: ok\n");
  });

  it("the last page says it is the end, and an offset past the end says how long the text is", () => {
    expect(recall(key, store, { offset: 999 }).text.split("\n", 1)[0]).toContain("lines 999-1000 of 1000");
    expect(recall(key, store, { offset: 999 }).text.split("\n", 1)[0]).toContain("This is the end.");
    expect(recall(key, store, { offset: 5_000 }).text).toContain("the text has 1000 lines");
    expect(recall(key, store, { offset: 5_000, grep: "ERROR" }).text).toContain("offset 5000 is past the end — the text has 1000 lines");
  });

  it("grep shows matching lines with their numbers and where to continue", () => {
    const page = recall(key, store, { grep: "ERROR", limit: 2 }).text;
    const [header, a, b] = page.split("\n");
    expect(a).toBe("1: line 1: ERROR failed step");
    expect(b).toBe("8: line 8: ERROR failed step");
    expect(header).toContain("2 line(s) matching /ERROR/ in lines 1-8 of 1000");
    expect(header).toContain("Next: recall <<ccr:" + key + '>> grep="ERROR" offset=9 limit=2.');
    expect(recall(key, store, { grep: "/error/i", offset: 990 }).text.split("\n").slice(1)).toEqual(["995: line 995: ERROR failed step"]);
  });

  it("a bad regular expression or offset is a clear error", () => {
    expect(() => recall(key, store, { grep: "(" })).toThrow(/grep is not a valid regular expression/);
    expect(() => recall(key, store, { offset: 0 })).toThrow(/offset must be a line number/);
    expect(() => recall(key, store, { limit: 1.5 })).toThrow(/limit must be a whole number/);
  });

  it("paging through a 10 MB output with the advertised next offsets rebuilds it exactly, each page within the answer cap", () => {
    const big = Array.from({ length: 200_000 }, (_, i) => `${i.toString(36)} ${"row of a very large build log ".repeat(1 + (i % 3))}`).join("\n");
    expect(big.length).toBeGreaterThan(10_000_000);
    const bigKey = store.put(big);
    let offset = 1;
    let rebuilt = "";
    // 60,000 lines are about 3 MB: each page stops at the 100,000-char cap, on a line boundary.
    for (let pages = 0; pages < 200; pages++) {
      const page = recall(bigKey, store, { offset, limit: 60_000 }).text;
      expect(page.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
      const nl = page.indexOf("\n");
      rebuilt += page.slice(nl + 1);
      const next = /offset=(\d+)/.exec(page.slice(0, nl));
      if (!next) break;
      offset = Number(next[1]);
    }
    expect(rebuilt).toBe(big);
  });
});

describe("isRecallTool", () => {
  it.each([
    ["recall", true],
    ["@RECALL", true],
    [" recall ", true],
    ["recalls", false],
    ["recal", false],
    ["", false],
  ])("%j → %s", (name, expected) => {
    expect(isRecallTool(name)).toBe(expected);
  });
});
