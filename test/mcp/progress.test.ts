// The progress pacer on its own: whatever the producer's rate, at most one notification per interval,
// the latest state winning, progress strictly growing, and nothing after stop().
import { describe, expect, it } from "vitest";
import { createProgressPacer, latestLine, type ProgressUpdate } from "../../dist/mcp/index.js";
import type { ToolOutputState } from "../../dist/output/index.js";

const state = (text: string, totalBytes: number) => ({ content: [{ type: "text", text }], truncation: { totalBytes } }) as unknown as ToolOutputState;

describe("progress pacer", () => {
  it("sends at most 10 a second under a flood of updates, the latest one last, progress growing", async () => {
    const sent: (ProgressUpdate & { at: number })[] = [];
    const t0 = performance.now();
    const pacer = createProgressPacer((u) => sent.push({ ...u, at: performance.now() - t0 }), 100);
    let bytes = 0;
    while (performance.now() - t0 < 1000) {
      bytes += 10;
      pacer.update(state(`line ${bytes}\n`, bytes));
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 150)); // on purpose: past the last 100 ms interval
    // Timers may fire late on a busy machine (fewer sends), never early (more). The count is the rate
    // check; a single gap is read in the callback, so a process descheduled between the pacer's clock
    // and the callback's (seen: 17 ms at load 6 on 2 cores) shortens that gap: only a floor is checked.
    const elapsed = performance.now() - t0;
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(sent.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1);
    for (let i = 1; i < sent.length; i++) {
      expect(sent[i]!.progress).toBeGreaterThan(sent[i - 1]!.progress);
      expect(sent[i]!.at - sent[i - 1]!.at).toBeGreaterThanOrEqual(50);
    }
    expect(sent.at(-1)).toMatchObject({ progress: bytes, message: `line ${bytes}` });
    pacer.stop();
  });

  it("never repeats a progress value: a redraw that adds no bytes counts one more, an unchanged state sends nothing", async () => {
    const sent: ProgressUpdate[] = [];
    const pacer = createProgressPacer((u) => sent.push(u), 10);
    const settle = () => new Promise((r) => setTimeout(r, 30)); // on purpose: past the 10 ms interval
    pacer.update(state("[#   ] 25%", 10));
    await settle();
    pacer.update(state("[##  ] 50%", 10)); // a `\r` frame of the same length
    await settle();
    pacer.update(state("[##  ] 50%", 10)); // nothing new
    await settle();
    pacer.update(state("[####] 100%\n", 12));
    await settle();
    pacer.update(state("[####] 100%\n\n", 13)); // a blank line: bytes grew, the same line
    await settle();
    expect(sent).toEqual([
      { progress: 10, message: "[#   ] 25%" },
      { progress: 11, message: "[##  ] 50%" },
      { progress: 12, message: "[####] 100%" },
      { progress: 13, message: "[####] 100%" },
    ]);
    pacer.stop();
  });

  it("sends nothing after stop, not even a pending update", async () => {
    const sent: ProgressUpdate[] = [];
    const pacer = createProgressPacer((u) => sent.push(u), 50);
    pacer.update(state("a\n", 5));
    pacer.update(state("a\nb\n", 9)); // pending: within the interval
    pacer.stop();
    await new Promise((r) => setTimeout(r, 100)); // on purpose: past the 50 ms interval the pending update was due in
    pacer.update(state("a\nb\nc\n", 12));
    expect(sent).toEqual([{ progress: 5, message: "a" }]);
  });

  it("the message is the latest non-empty line, shortened", () => {
    expect(latestLine("one\ntwo\n\n  \n")).toBe("two");
    expect(latestLine("")).toBe("");
    expect(latestLine(`${"x".repeat(500)}\n`)).toHaveLength(200);
  });
});
