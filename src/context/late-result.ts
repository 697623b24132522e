// What a call whose result came after the next assistant message is answered with. Pairing must move
// such a result out (the provider APIs want it right after its call, and the model has moved on), but
// the output exists: the answer says so and gives the recall marker of its text, which prepareHistory
// archives with every result pairing removes. Telling the model "missing … do NOT retry" while the
// text sat in the archive was the bug this replaces.
import { countOf } from "../errors/index.js";
import { archiveKey, formatMarker } from "./archive-key.js";
import type { ToolCallPart, ToolResultMessage } from "./messages.js";
import { textOf, toolResult } from "./messages.js";

export const LATE_RESULT_CODE = "late_result";

/**
 * What a call whose result came after the next assistant message is answered with: the output exists,
 * here is its recall marker (the text is archived under the key of its content by prepareHistory,
 * which archives every removed result). The model must not be told the output was lost.
 */
export function lateResultText(text: string): string {
  if (text === "") return "[This tool call's result arrived late (after the next assistant message) and was empty.]";
  return (
    `[This tool call's result arrived late (after the next assistant message), so it was moved out of the conversation to keep ` +
    `calls and results paired. The output exists (${countOf(text.length, "char")}): recall ${formatMarker(archiveKey(text))} to read it. ` +
    `Do not re-run the call just to see it.]`
  );
}

export function lateResult(call: ToolCallPart, late: ToolResultMessage): ToolResultMessage {
  return toolResult(call.id, lateResultText(textOf(late)), {
    isError: late.isError,
    ...(late.isError ? { errorCode: LATE_RESULT_CODE } : {}),
    toolName: call.name,
  });
}
