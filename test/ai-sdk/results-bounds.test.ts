// A long-lived spool under the AI SDK: the budget's result files (results/KEY.txt, named by absolute
// path in previews) are bounded by `context.archiveMaxBytes` like the archive — through the real
// `ai` and `@ai-sdk/openai-compatible` against the scripted server. Two agent tasks on one spool,
// eleven minutes apart: the second task's results evict the first task's, which no prompt names any
// more, and never a file the prompt being sent names. The clock is the only thing moved: Date is
// faked (and jumped past the archive's ten-minute "recently used" window); HTTP, processes and files are real.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount } from "ai";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, toolResult, type ChatMessage, type ChatStep } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

// ≈ 8 KB of output per command: over the 6000-char result limit (so the budget saves it under
// results/), under a quarter of the 40 000-byte cap (so it may be saved at all). The cap holds four.
const CAP = 40_000;
const rows = (task: string, n: number): string => `seq -f "${task} step ${n} row %05g" 1 360`;
const KEY = /<<ccr:([0-9a-f]{16})>>/;
const PATH = /read the file (\S+\/results\/[0-9a-f]{16}\.txt) by line range/;

/** The results/ files the previews and stubs of a request name as where the rest of a result is. */
function namedPaths(messages: ChatMessage[]): string[] {
  const paths: string[] = [];
  for (const m of messages) {
    if (m.role !== "tool") continue;
    const text = toolResult(messages, m.tool_call_id!);
    for (const match of text.matchAll(/(?:read the file (\S+) by line range|, or read (\S+)\])/g)) {
      const path = match[1] ?? match[2]!;
      if (/\/results\/[0-9a-f]{16}\.txt$/.test(path)) paths.push(path);
    }
  }
  return paths;
}

describe("results/ under the AI SDK is bounded by the archive limits", () => {
  it("a second task's cut results evict the first task's files, a recall or read of one is a clear miss, and no prompt names a missing file", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const dir = tempDir("spool-results-");
    const missing: string[] = [];
    /** Every step first checks the request it answers: each results/ file it names is there. */
    const checked =
      (step: ChatStep): ChatStep =>
      (m) => {
        for (const path of namedPaths(m)) if (!existsSync(path)) missing.push(path);
        return step(m);
      };
    let first: { key: string; path: string } | undefined;
    const server = await startFakeOpenAI(
      [
        // task 1 (requests 0-3): three cut results
        () => [{ name: "bash", args: { command: rows("first", 1) } }],
        () => [{ name: "bash", args: { command: rows("first", 2) } }],
        () => [{ name: "bash", args: { command: rows("first", 3) } }],
        (m: ChatMessage[]) => {
          const preview = toolResult(m, "call_0_0");
          first = { key: KEY.exec(preview)![1]!, path: PATH.exec(preview)![1]! };
          return "first task done";
        },
        // task 2 (requests 4-9), eleven minutes later: three more, then back to the first task's output
        () => [{ name: "bash", args: { command: rows("second", 1) } }],
        () => [{ name: "bash", args: { command: rows("second", 2) } }],
        () => [{ name: "bash", args: { command: rows("second", 3) } }],
        () => [{ name: "recall", args: { key: first!.key } }],
        () => [{ name: "read", args: { path: first!.path } }],
        () => "second task done",
      ].map(checked),
    );
    cleanups.push(() => server.close());
    const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir, context: { archiveMaxBytes: CAP, maxResultChars: 6_000 } });
    cleanups.push(() => spool.close());
    const model = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" }).chatModel("fake-model");
    const run = (prompt: string) => generateText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(10), prompt });
    const resultsDir = join(spool.sessionDir, "results");
    const files = (): string[] => readdirSync(resultsDir).sort();

    expect((await run("task one")).text).toBe("first task done");
    const firstFiles = files();
    expect(firstFiles).toHaveLength(3);
    expect(existsSync(first!.path)).toBe(true);

    vi.setSystemTime(Date.now() + 11 * 60_000);
    const second = await run("task two");
    expect(second.text).toBe("second task done");
    const requests = server.requests;
    expect(requests).toHaveLength(10);

    // The second task's three files are there; of the first task's, only as many as fit under the cap.
    const now = files();
    const bytes = now.reduce((sum, name) => sum + statSync(join(resultsDir, name)).size, 0);
    expect(bytes).toBeLessThanOrEqual(CAP);
    expect(now.filter((name) => !firstFiles.includes(name))).toHaveLength(3);
    expect(firstFiles.filter((name) => !now.includes(name))).toHaveLength(2);
    expect(existsSync(first!.path)).toBe(false);

    // The model asked for the evicted text both ways: each answer says it is gone, and why.
    expect(toolResult(requests[8]!.messages, "call_7_0")).toMatch(/not found \(it may have expired or been evicted/);
    expect(toolResult(requests[9]!.messages, "call_8_0")).toMatch(/is no longer saved — saved results are removed when they are old/);
    // Every prompt sent named only files that were there when it was sent.
    expect(requests.flatMap((r) => namedPaths(r.messages)).length).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });
});
