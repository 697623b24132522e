// Parallel recalls in one step under the AI SDK's own loop, through a real provider package
// (@ai-sdk/openai-compatible) against the scripted chat-completions server: three recalls of a
// 192.5K-char text each get about a third of the turn budget in the next request (before, the
// largest-first cut left the first two 5,105-char previews naming the same text to recall again and
// the last 99,114), and a model that keeps following every answer's next call, three at a time,
// reads each text back exactly.
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { DEFAULT_TURN_BUDGET_CHARS } from "../../dist/context/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, toolText, type ChatMessage, type ChatStep } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

function logText(seed: number): string {
  let s = "";
  for (let i = 0; s.length < 192_500; i++)
    s += `2026-12-03T01:${String(i % 60).padStart(2, "0")} INFO worker.${seed} request ${i} handled in ${(i * 7919) % 997}ms\n`;
  return s.slice(0, 192_500);
}

/** The tool messages answering the last assistant message's calls, in call order. */
function lastAnswers(messages: ChatMessage[]): { id: string; text: string }[] {
  const last = messages.filter((m) => m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0).at(-1);
  if (last === undefined) return [];
  return last.tool_calls!.map((call) => ({ id: call.id, text: toolText(messages.find((m) => m.role === "tool" && m.tool_call_id === call.id)!) }));
}

describe("parallel recalls through createSpool and a real provider", () => {
  it("three recalls of a 192.5K-char text in one step each get a fair share of the turn, and following their next calls reads every text back", async () => {
    const dir = tempDir("spool-ai-sdk-share-");
    const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir });
    cleanups.push(() => spool.close());
    const texts = [0, 1, 2].map(logText);
    const keys = texts.map((t) => spool.session.workspace.archive.put(t));

    const read = texts.map(() => "");
    const done = texts.map(() => false);
    // Each step reads the answers to its last calls as the prompt gives them, keeps their text, and
    // makes the next call each one advertises — all in one step again.
    const step: ChatStep = (messages) => {
      const answers = lastAnswers(messages);
      if (answers.length === 0) return keys.map((key) => ({ name: "recall", args: { key: `<<ccr:${key}>>` } }));
      const calls: { name: string; args: Record<string, unknown> }[] = [];
      let k = 0;
      for (const [i] of texts.entries()) {
        if (done[i]) continue;
        const text = answers[k++]!.text;
        const nl = text.indexOf("\n");
        read[i] += text.slice(nl + 1);
        const next = /Next: recall <<ccr:([0-9a-f]{16})>> offset=(\d+)(?: column=(\d+))?\.\]$/.exec(text.slice(0, nl));
        if (!next) done[i] = true;
        else calls.push({ name: "recall", args: { key: next[1]!, offset: Number(next[2]), ...(next[3] ? { column: Number(next[3]) } : {}) } });
      }
      return calls.length > 0 ? calls : "done";
    };
    const server = await startFakeOpenAI(Array.from({ length: 12 }, () => step));
    cleanups.push(() => server.close());
    const provider = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" });
    const result = await generateText({
      model: provider.chatModel("fake-model"),
      tools: spool.tools,
      prepareStep: spool.prepareStep,
      stopWhen: isStepCount(12),
      prompt: "Read all three.",
    });
    expect(result.text).toBe("done");

    // The request after the three recalls: each answer at least its fair third less a line and the
    // header's room, all within the turn budget, each a page of its own text from line 1.
    const first = lastAnswers(server.requests[1]!.messages);
    expect(first).toHaveLength(3);
    const sizes = first.map((a) => a.text.length);
    console.log(`recall-share: answers ${sizes.join(" / ")} chars, ${sizes.reduce((a, b) => a + b, 0)} in all, ${server.requests.length} requests`);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(DEFAULT_TURN_BUDGET_CHARS);
    for (const [i, answer] of first.entries()) {
      expect(answer.text.length).toBeGreaterThan(Math.floor(DEFAULT_TURN_BUDGET_CHARS / 3) - 1_400);
      expect(answer.text.startsWith(`[recall <<ccr:${keys[i]}>>: lines 1-`)).toBe(true);
    }
    expect(read).toEqual(texts);
  }, 60_000);
});
