// What an AI SDK tool of spool yields: while a command runs, preliminary outputs carrying the last
// lines of its output so far and its totals (a UI on streamText shows them); at the end, the final
// output, whose `text` is the model-facing text. Only the final one reaches the model, as text — or as error-text when the call
// failed, so the history keeps the error flag that spool's context layer reads back.
import type { ToolResultPart } from "ai";
import { parseImageEntry, toAISDK, type KeyLookup } from "../context/index.js";
import { bashDetails, recalledImageKey, visibleText, type AgentCallOutcome } from "../harness/index.js";
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
  /** recall: the archive key of the old image this answer gives back; the model gets the image itself beside the text (toModelOutput). */
  readonly recalledImage?: string;
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
    ...(recalledImageKey(outcome.state?.details) !== undefined ? { recalledImage: recalledImageKey(outcome.state?.details)! } : {}),
  };
}

export function toModelText(output: SpoolToolOutput): { type: "text" | "error-text"; value: string } {
  return { type: output.isError ? "error-text" : "text", value: output.text };
}

/**
 * What the model is sent: the text, and for a recall that gives an old image back, the image itself
 * beside it, read from the archive by its key and written as the context layer's AI SDK adapter
 * writes an image in a tool result (the part as it was archived, in the shape it came in). The
 * image's bytes stay out of SpoolToolOutput, which a UI message stream carries to the browser.
 */
export function toModelOutput(output: SpoolToolOutput, archive: KeyLookup): ToolResultPart["output"] {
  const key = output.recalledImage;
  if (key === undefined || output.isError) return toModelText(output);
  const entry = archive.get(key);
  const image = entry !== undefined ? parseImageEntry(entry) : undefined;
  if (image === undefined)
    return { type: "text", value: `${output.text}\n[The image is no longer in the archive; run the tool that made it again to see it.]` };
  const [message] = toAISDK([
    { role: "tool", toolCallId: "recall", toolName: "recall", isError: false, content: [{ type: "text", text: output.text }, image] },
  ]);
  return (message!["content"] as { output: ToolResultPart["output"] }[])[0]!.output;
}
