// The AI SDK's own mock model (ai/test MockLanguageModelV4) driven by a step script: it records every
// prompt it is sent and answers with the step's tool calls (or final text), for generate and stream.
import { MockLanguageModelV4 } from "ai/test";
import { promptResults, type Prompt, type PromptResult, type Step } from "./script.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

export interface ScriptedModel {
  readonly model: MockLanguageModelV4;
  /** The prompt of every model call, in order. */
  readonly prompts: Prompt[];
}

function answer(steps: readonly Step[], prompts: Prompt[], prompt: Prompt) {
  const i = prompts.length;
  prompts.push(prompt);
  const step = steps[i];
  if (!step) throw new Error(`the script has ${steps.length} steps; the model was called a ${i + 1}th time`);
  const results = promptResults(prompt);
  const find = (id: string): PromptResult => {
    const r = results.find((x) => x.toolCallId === id);
    if (!r) throw new Error(`step ${i}: no result ${id} in the prompt`);
    return r;
  };
  const out = step(prompt, find);
  if (typeof out === "string") return { text: out };
  return { calls: out.map((c, k) => ({ toolCallId: `s${i}-${k}`, toolName: c.toolName, input: JSON.stringify(c.input) })) };
}

export function scriptedModel(steps: readonly Step[]): ScriptedModel {
  const prompts: Prompt[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const a = answer(steps, prompts, prompt as Prompt);
      return {
        content: a.text !== undefined ? [{ type: "text", text: a.text }] : a.calls!.map((c) => ({ type: "tool-call" as const, ...c })),
        finishReason: { unified: a.text !== undefined ? "stop" : "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
    doStream: async ({ prompt }) => {
      const a = answer(steps, prompts, prompt as Prompt);
      const chunks: unknown[] = [{ type: "stream-start", warnings: [] }];
      if (a.text !== undefined) chunks.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: a.text }, { type: "text-end", id: "t" });
      else for (const c of a.calls!) chunks.push({ type: "tool-call", ...c });
      chunks.push({ type: "finish", finishReason: { unified: a.text !== undefined ? "stop" : "tool-calls", raw: undefined }, usage });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const c of chunks) controller.enqueue(c as never);
            controller.close();
          },
        }),
      };
    },
  });
  return { model, prompts };
}
