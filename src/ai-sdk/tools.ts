// Each harness tool as an AI SDK tool: its description and JSON Schema as they are, and an
// async-iterable execute that yields a preview of the output while the call runs — at most one per
// PRELIMINARY_INTERVAL_MS, of the latest state only, so a slow consumer never makes it buffer — and the
// final model-facing output last. An abort from the SDK — or a consumer that stops iterating — aborts
// the call, which ends the command's process group; one from the SDK is reported (onAbortedBySignal).
import { jsonSchema, tool, type JSONSchema7, type Tool } from "ai";
import type { AgentSession, ToolDefinition } from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import { finalOutput, runningOutput, toModelOutput, type SpoolToolOutput } from "./tool-output.js";

/**
 * The harness publishes a growing output up to 10 times a second; a UI needs about 2. Each preliminary
 * reaches every UI message stream (and the SDK's fullStream). A command printing 20 lines of ~95 chars
 * a second for 60 s: its UI message stream was 24.2 MB in 615 preliminaries of the whole view; with the
 * tail preview at this pace, 0.37 MB in 133 (one of them the SDK's own copy of the final output, 52 KB:
 * it re-emits the last value a tool yields as a preliminary before the final result).
 */
export const PRELIMINARY_INTERVAL_MS = 500;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SpoolTool = Tool<any, SpoolToolOutput>;

export interface ToAiToolOptions {
  /**
   * Called when the SDK's `abortSignal` ended a call of this tool: it fired (or had fired) while the
   * call ran, and the call's record says "interrupted". With the harness's call id ("call-3"). The
   * SDK itself need not say so: a one-step generateText aborted while its tool ran returns normally.
   */
  readonly onAbortedBySignal?: (toolCallId: string) => void;
}

export function toAiTool(session: AgentSession, def: ToolDefinition<unknown>, options: ToAiToolOptions = {}): SpoolTool {
  return tool({
    description: def.description,
    inputSchema: jsonSchema<Record<string, unknown>>(def.parameters as JSONSchema7),
    async *execute(input, { abortSignal }) {
      const abort = new AbortController();
      let finished = false;
      // The SDK's signal reached the call before it ended (not a consumer that stopped reading).
      let signalled = false;
      const onAbort = (): void => {
        if (!finished) signalled = true;
        abort.abort(abortSignal?.reason);
      };
      abortSignal?.addEventListener("abort", onAbort, { once: true });
      if (abortSignal?.aborted) onAbort();
      let latest: ToolOutputState | undefined;
      // Resolves the current pause: on the call's end, or (a pause with no deadline) on new output.
      let wake: (() => void) | undefined;
      let wakeOnUpdate = false;
      const pause = (ms: number | undefined): Promise<void> =>
        new Promise<void>((resolve) => {
          const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
          wakeOnUpdate = ms === undefined;
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      const call = session.call(def.name, input, {
        signal: abort.signal,
        onUpdate: (state) => {
          latest = state;
          if (wakeOnUpdate) wake?.();
        },
      });
      void call
        .finally(() => {
          finished = true;
          wake?.();
        })
        .catch(() => undefined);
      try {
        let nextAt = 0;
        // A preview left waiting when the call ends is not sent: the final output follows at once.
        while (!finished) {
          const wait = latest === undefined ? undefined : nextAt - performance.now();
          if (wait !== undefined && wait <= 0) {
            const state = latest!;
            latest = undefined;
            nextAt = performance.now() + PRELIMINARY_INTERVAL_MS;
            yield runningOutput(state);
          } else await pause(wait);
        }
        const outcome = await call;
        if (signalled && outcome.status === "interrupted") options.onAbortedBySignal?.(outcome.result.toolCallId);
        yield finalOutput(outcome);
      } finally {
        abortSignal?.removeEventListener("abort", onAbort);
        if (!finished) abort.abort(new Error("the tool's consumer stopped reading"));
      }
    },
    toModelOutput: ({ output }) => toModelOutput(output, session.workspace),
  });
}
