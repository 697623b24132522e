// What an AI SDK tool of spool yields: while a command runs, preliminary outputs carrying the last
// lines of its output so far and its totals (a UI on streamText shows them); at the end, the final
// output, whose `text` is the model-facing text. Only the final one reaches the model, as text — or as error-text when the call
// failed, so the history keeps the error flag that spool's context layer reads back.
import { bashDetails, visibleText, type AgentCallOutcome } from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import { tailPreview } from "./tail-preview.js";

export interface SpoolToolOutput {
  /** running: a preliminary view; done / failed: final. */
  readonly status: "running" | "done" | "failed";
  /**
   * running: the last lines of the output so far (at most 20 lines and 2,048 chars; the totals below
   * count all of it); final: the model-facing text (the kept window and its footer).
   */
  readonly text: string;
  readonly isError: boolean;
  readonly totalBytes: number;
  readonly totalLines: number;
  readonly truncated: boolean;
  /** bash: exit code, signal, timed out, aborted, spill file. */
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  readonly timedOut?: boolean;
  readonly aborted?: boolean;
  readonly spillPath?: string | null;
}

function counts(state: ToolOutputState | undefined): Pick<SpoolToolOutput, "totalBytes" | "totalLines" | "truncated"> {
  const t = state?.truncation;
  return { totalBytes: t?.totalBytes ?? 0, totalLines: t?.totalLines ?? 0, truncated: t?.truncated === true };
}

export function runningOutput(state: ToolOutputState): SpoolToolOutput {
  return { status: "running", text: tailPreview(state.content[0].text), isError: false, ...counts(state) };
}

export function finalOutput(outcome: AgentCallOutcome): SpoolToolOutput {
  const d = bashDetails(outcome.state?.details);
  return {
    status: outcome.isError ? "failed" : "done",
    // What the provider is sent: a silent command's "" reached it as an empty tool message.
    text: visibleText(outcome.text),
    isError: outcome.isError,
    ...counts(outcome.state),
    ...(outcome.state?.details && "exitCode" in outcome.state.details ? { exitCode: d.exitCode ?? null } : {}),
    ...(d.signal !== undefined ? { signal: d.signal } : {}),
    ...(d.timedOut ? { timedOut: true } : {}),
    ...(d.aborted ? { aborted: true } : {}),
    ...(d.spillPath !== undefined ? { spillPath: d.spillPath } : {}),
  };
}

export function toModelText(output: SpoolToolOutput): { type: "text" | "error-text"; value: string } {
  return { type: output.isError ? "error-text" : "text", value: output.text };
}
