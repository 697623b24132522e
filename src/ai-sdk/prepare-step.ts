// prepareStep: the step's messages (AI SDK ModelMessage) through spool's context pipeline — pairing,
// result budgets, microcompaction — via the context layer's AI SDK adapter, with the session's
// workspace as the archive, so every cut is recallable with the `recall` tool. A pure function of the
// messages (cut decisions depend only on the text; keys are content hashes), so the same history
// gives the same prompt and provider prompt caches stay warm.
import type { ModelMessage } from "ai";
import { fromAISDK, prepareHistory, toAISDK, type ContextConfig, type PrepareReport, type Workspace } from "../context/index.js";

export interface PrepareStepOptions {
  readonly workspace: Workspace;
  readonly config?: Partial<ContextConfig>;
  readonly toolCaps?: Readonly<Record<string, number>>;
  readonly preserveTools?: readonly string[];
  /** The session's recall gives an archived image back (spool's own recall tool on the AI SDK): old images' stubs say so. */
  readonly imagesRecallable?: boolean;
  /** Called with each step's report (chars before and after, keys archived). */
  readonly onReport?: (report: PrepareReport, stepNumber: number | undefined) => void;
}

export type SpoolPrepareStep = (options: { readonly messages: ModelMessage[]; readonly stepNumber?: number }) => { messages: ModelMessage[] };

export function createPrepareStep(options: PrepareStepOptions): SpoolPrepareStep {
  return ({ messages, stepNumber }) => {
    const { messages: prepared, report } = prepareHistory(fromAISDK(messages), {
      workspace: options.workspace,
      // Checked (SPOOL_DEBUG_CONTEXT=1) against the AI SDK's rules: its providers regroup results per
      // their own API, so a history valid for the SDK need not already be in Anthropic's shape.
      format: "ai-sdk",
      // The model's `read` resolves relative paths against the tools' cwd, not the session directory.
      absolutePaths: true,
      ...(options.config !== undefined ? { config: options.config } : {}),
      ...(options.toolCaps !== undefined ? { toolCaps: options.toolCaps } : {}),
      ...(options.preserveTools !== undefined ? { preserveTools: options.preserveTools } : {}),
      ...(options.imagesRecallable === true ? { imagesRecallable: true } : {}),
    });
    options.onReport?.(report, stepNumber);
    // Nothing to change: hand back the very same objects.
    return { messages: report.changed ? (toAISDK(prepared) as unknown as ModelMessage[]) : messages };
  };
}
