// recall under the AI SDK's own loop on a text that is one 1.5 MB line (minified JSON): each answer is
// within the recall tool's cap, prepareStep hands it to the model as it is (never cut back into a
// preview naming the same text to recall again), and the model, following the next call each answer
// advertises, reads back every character.
import { join } from "node:path";
import { generateText, isStepCount } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { DEFAULT_RECALL_MAX_CHARS } from "../../dist/context/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { scriptedModel } from "./mock-model.js";
import { promptResults, type Step } from "./script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

describe("recall through createSpool", () => {
  it("a 1.5 MB one-line text is read back whole by following each answer's next call; no answer is cut by prepareStep", async () => {
    const dir = tempDir("spool-ai-sdk-recall-");
    const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir });
    cleanups.push(() => spool.close());
    const line = JSON.stringify(Array.from({ length: 60_000 }, (_, i) => ({ id: i, name: `row-${i}`, ok: i % 3 === 0 })));
    expect(line.length).toBeGreaterThan(1_500_000);
    const key = spool.session.workspace.archive.put(line);

    // Each step reads the last recall answer as the model got it and makes the call it advertises.
    const step: Step = (prompt) => {
      const last = promptResults(prompt).at(-1);
      if (last === undefined) return [{ toolName: "recall", input: { key: `<<ccr:${key}>>` } }];
      const header = last.text.slice(0, last.text.indexOf("\n"));
      const next = /Next: recall <<ccr:[0-9a-f]{16}>> offset=(\d+) column=(\d+)\./.exec(header);
      if (!next) return "done";
      return [{ toolName: "recall", input: { key, offset: Number(next[1]), column: Number(next[2]) } }];
    };
    const { model, prompts } = scriptedModel(Array.from({ length: 40 }, () => step));
    const result = await generateText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(40), prompt: "Read it." });
    expect(result.text).toBe("done");

    const answers = result.steps.flatMap((s) => s.toolResults.map((r) => ({ id: r.toolCallId, text: (r.output as { text: string }).text })));
    expect(answers.length).toBeGreaterThan(10);
    let rebuilt = "";
    for (const { id, text } of answers) {
      expect(text.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
      // The prompt right after the call carries the answer exactly as the tool gave it.
      const seen = prompts.map((p) => promptResults(p).find((r) => r.toolCallId === id)).find((r) => r !== undefined);
      expect(seen?.text).toBe(text);
      rebuilt += text.slice(text.indexOf("\n") + 1);
    }
    expect(rebuilt).toBe(line);
  }, 60_000);
});
