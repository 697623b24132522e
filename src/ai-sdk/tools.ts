// Each harness tool as an AI SDK tool: its description and JSON Schema as they are, and an
// async-iterable execute that yields the growing view while the call runs (latest state only, so a
// slow consumer never makes it buffer) and the final model-facing output last. An abort from the
// SDK — or a consumer that stops iterating — aborts the call, which ends the command's process group.
import { jsonSchema, tool, type JSONSchema7, type Tool } from "ai";
import type { AgentSession, ToolDefinition } from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import { finalOutput, runningOutput, toModelText, type SpoolToolOutput } from "./tool-output.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SpoolTool = Tool<any, SpoolToolOutput>;

export function toAiTool(session: AgentSession, def: ToolDefinition<unknown>): SpoolTool {
  return tool({
    description: def.description,
    inputSchema: jsonSchema<Record<string, unknown>>(def.parameters as JSONSchema7),
    async *execute(input, { abortSignal }) {
      const abort = new AbortController();
      const onAbort = (): void => abort.abort(abortSignal?.reason);
      abortSignal?.addEventListener("abort", onAbort, { once: true });
      if (abortSignal?.aborted) abort.abort(abortSignal.reason);
      let latest: ToolOutputState | undefined;
      let wake: (() => void) | undefined;
      let finished = false;
      const call = session.call(def.name, input, {
        signal: abort.signal,
        onUpdate: (state) => {
          latest = state;
          wake?.();
        },
      });
      void call
        .finally(() => {
          finished = true;
          wake?.();
        })
        .catch(() => undefined);
      try {
        for (;;) {
          if (latest !== undefined) {
            const state = latest;
            latest = undefined;
            yield runningOutput(state);
            continue;
          }
          if (finished) break;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
        yield finalOutput(await call);
      } finally {
        abortSignal?.removeEventListener("abort", onAbort);
        if (!finished) abort.abort(new Error("the tool's consumer stopped reading"));
      }
    },
    toModelOutput: ({ output }) => toModelText(output),
  });
}
