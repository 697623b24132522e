import { describe, expect, it } from "vitest";
import { apply, decoder, encoder, isBase, type Op } from "../../src/delta/index.js";
import { createToolOutput, type ToolOutputState } from "../../src/output/index.js";

function collect(opts: Partial<Parameters<typeof createToolOutput>[0]> = {}) {
  const batches: { ops: readonly Op[]; base: boolean; forced: boolean }[] = [];
  const out = createToolOutput({ minIntervalMs: 1_000_000, onFlush: (ops, info) => batches.push({ ops, ...info }), ...opts });
  const fold = () => {
    const enc = encoder();
    const dec = decoder();
    let v: unknown;
    for (const b of batches) v = apply(v, dec.decode(JSON.parse(JSON.stringify(enc.encode(b.ops)))));
    return v as ToolOutputState;
  };
  return { out, batches, fold };
}

describe("ToolOutput sink", () => {
  it("the first batch is a base with one text block, empty details and the caps in truncation", () => {
    const { out, batches } = collect({ maxBytes: 1000, maxLines: 10 });
    out.write("hello\n");
    expect(batches).toHaveLength(1);
    expect(isBase(batches[0]!.ops)).toBe(true);
    const v = batches[0]!.ops[0]![1] as ToolOutputState;
    expect(v.content).toEqual([{ type: "text", text: "hello\n" }]);
    expect(v.details).toEqual({});
    expect(v.terminate).toBe(false);
    expect(v.truncation).toMatchObject({ maxBytes: 1000, maxLines: 10, totalLines: 1, totalBytes: 6 });
  });

  it("writes held back by pacing collapse into one append on the next flush", () => {
    const { out, batches, fold } = collect();
    out.write("a\n");
    for (let i = 0; i < 100; i++) out.write(`line ${i}\n`);
    out.flush({ force: true });
    expect(batches).toHaveLength(2);
    const textOps = batches[1]!.ops.filter((op) => op[0] === "a");
    expect(textOps).toHaveLength(1);
    expect(fold().content[0].text.split("\n")).toHaveLength(102);
  });

  it("retain tail: a window slide emits t then a on content[0].text", () => {
    const { out, batches, fold } = collect({ maxBytes: 40, maxLines: 100 });
    out.write("0123456789\n0123456789\n0123456789\n");
    out.flush({ force: true });
    out.write("abcdefghij\n");
    out.flush({ force: true });
    const onText = batches.at(-1)!.ops.filter((op) => JSON.stringify(op[1]) === '["content",0,"text"]');
    expect(onText.map((op) => op[0])).toEqual(["t", "a"]);
    expect(fold().content[0].text).toBe("0123456789\n0123456789\nabcdefghij\n");
    expect(fold().truncation).toMatchObject({ truncated: true, truncatedBy: "bytes", totalLines: 4, outputLines: 3 });
  });

  it("retain head: stops at the cap and keeps counting totals", () => {
    const { out, fold } = collect({ retain: "head", maxBytes: 1000, maxLines: 2 });
    out.write("one\ntwo\n");
    out.write("three\nfour\n");
    out.close();
    const v = fold();
    expect(v.content[0].text).toBe("one\ntwo\n");
    expect(v.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 4, outputLines: 2 });
  });

  it("text written after an image still lands in the single text block; images are never windowed", () => {
    const { out, fold } = collect({ maxBytes: 8, maxLines: 10 });
    out.write("abc\n");
    out.image({ data: "QUJD".repeat(100), mimeType: "image/png" });
    out.write("defgh\n");
    out.close();
    const v = fold();
    expect(v.content).toHaveLength(2);
    expect(v.content[0]).toEqual({ type: "text", text: "defgh\n" });
    expect(v.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
  });

  it("details mutations produce granular s, p and d ops", () => {
    const { out, batches } = collect();
    out.write("x");
    out.details.passed = 0;
    out.details.failures = [];
    out.details.current = "t1";
    out.flush({ force: true });
    (out.details.failures as string[]).push("t1");
    out.details.passed = 1;
    delete out.details.current;
    out.flush({ force: true });
    expect(batches.at(-1)!.ops).toEqual([
      ["p", ["details", "failures"], 0, 0, ["t1"]],
      ["s", ["details", "passed"], 1],
      ["d", ["details", "current"]],
    ]);
  });

  it("usage accumulates, addTools replaces, terminate can be set by a failing tool", () => {
    const { out, fold } = collect();
    out.usage({ input: 10, output: 2 });
    out.usage({ input: 5 });
    out.addTools(["a"]);
    out.addTools(["b", "c"]);
    out.terminate(true);
    out.close();
    const v = fold();
    expect(v.usage).toEqual({ input: 15, output: 2 });
    expect(v.addedTools).toEqual(["b", "c"]);
    expect(v.terminate).toBe(true);
  });

  it("close flushes once, forced, and nothing is emitted afterwards (writes throw)", async () => {
    const { out, batches, fold } = collect({ minIntervalMs: 20 });
    out.write("a");
    out.write("b"); // armed trailing timer
    out.close();
    const n = batches.length;
    expect(batches.at(-1)!.forced).toBe(true);
    // The held write (kept beside the tracker until a flush) is in the terminal batch.
    expect(fold().content[0].text).toBe("ab");
    expect(fold().truncation).toMatchObject({ totalBytes: 2, totalLines: 1, outputBytes: 2, outputLines: 1 });
    await new Promise((r) => setTimeout(r, 60)); // on purpose: past the 20 ms trailing timer, which must not fire
    expect(batches.length).toBe(n);
    expect(() => out.write("late")).toThrow(/closed/);
  });

  it("reading the state between flushes shows held writes without publishing them", () => {
    const { out, batches, fold } = collect();
    out.write("first\n");
    out.write("second\n");
    expect(out.state.content[0].text).toBe("first\nsecond\n");
    expect(out.state.truncation).toMatchObject({ totalBytes: 13, totalLines: 2 });
    expect(batches).toHaveLength(1);
    out.flush({ force: true });
    expect(fold().content[0].text).toBe("first\nsecond\n");
    expect(fold().truncation.totalBytes).toBe(13);
  });

  it("a capture's totals and limits are what later writes continue from", () => {
    const { out, fold } = collect({ maxBytes: 1000 });
    out.write("abc\n");
    out.capture({
      truncation: {
        truncated: false,
        truncatedBy: null,
        totalLines: 40,
        totalBytes: 400,
        outputLines: 1,
        outputBytes: 4,
        maxLines: 100,
        maxBytes: 10,
        cutLines: 0,
        lastLinePartial: false,
      },
      binary: false,
      rawBytes: 400,
    });
    out.write("defg\nhijk\n");
    out.close();
    const v = fold();
    expect(v.content[0].text).toBe("defg\nhijk\n");
    expect(v.truncation).toMatchObject({ totalBytes: 410, totalLines: 42, outputBytes: 10, outputLines: 2, maxBytes: 10, truncated: true });
  });

  it("every rebaseEvery-th flush is a base, so recovery replays at most that many batches", () => {
    const { out, batches } = collect({ rebaseEvery: 5 });
    for (let i = 0; i < 23; i++) {
      out.write(`line ${i}\n`);
      out.flush({ force: true });
    }
    const bases = batches.map((b, i) => (b.base ? i : -1)).filter((i) => i >= 0);
    expect(bases).toEqual([0, 5, 10, 15, 20]);
  });

  it("a sink seeded from a recovered state continues from it instead of starting empty", () => {
    const first = collect();
    first.out.write("before crash\n");
    first.out.usage({ input: 3 });
    first.out.addTools(["x"]);
    first.out.close();
    const recovered = first.fold();
    const second = collect({ initial: recovered });
    second.out.write("after\n");
    second.out.close();
    const v = second.fold();
    expect(v.content[0].text).toBe("before crash\nafter\n");
    expect(v.usage).toEqual({ input: 3 });
    expect(v.addedTools).toEqual(["x"]);
    expect(v.truncation.totalLines).toBe(2);
  });
});

describe("ToolOutput footer", () => {
  it("a footer follows the window outside its limits, and later writes extend it without moving the window", () => {
    const batches: { ops: readonly Op[] }[] = [];
    const out = createToolOutput({ minIntervalMs: 1_000_000, maxBytes: 1000, maxLines: 3, onFlush: (ops) => batches.push({ ops }) });
    out.write("1\n2\n3\n4\n");
    out.footer("\n[Showing the last 3 of 4 lines]");
    out.write("\nCommand exited with code 1");
    out.close();
    expect(out.state.content[0].text).toBe("2\n3\n4\n\n[Showing the last 3 of 4 lines]\nCommand exited with code 1");
    expect(out.state.truncation).toMatchObject({ totalLines: 4, outputLines: 3 });
  });
});
