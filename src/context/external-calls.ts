// Whether the results of a history may answer calls the provider keeps (PrepareOptions.externalCalls)
// when the caller did not say. An OpenAI Responses request that continues stored state
// (`previous_response_id`, `conversation`) sends outputs whose calls are not in its `input` — on every
// tool turn, the input is nothing but those outputs. The messages cannot show the body's fields, and
// treating such an output as an orphan removed it: `prepareHistory` sent the API an empty input (the
// stored call then has no output: a 400), and the model never saw the tool's result. So:
// an `item_reference` among the messages says so itself (continuesServerState counts it too); else, in
// the Responses format, an input that holds results but not one call of its own is such a turn (a
// whole history always carries its calls); a history with calls of its own whose result lost its call
// is damage, and the orphan is removed as before. Every other format has no stored calls.
import type { Format } from "./adapters/index.js";
import type { Message } from "./messages.js";

export function resolveExternalCalls(messages: readonly Message[], given: boolean | undefined, format: Format | undefined): boolean {
  if (given !== undefined) return given;
  if (referencesStoredItems(messages)) return true;
  return format === "openai-responses" && resultsWithoutAnyCall(messages);
}

/** An OpenAI Responses `item_reference` item (carried as a raw part): the request names items the provider stores. */
function referencesStoredItems(messages: readonly Message[]): boolean {
  for (const m of messages) {
    if (m.role === "tool") continue;
    for (const part of m.content) {
      if (part.type === "raw" && typeof part.value === "object" && part.value !== null && (part.value as { type?: unknown }).type === "item_reference")
        return true;
    }
  }
  return false;
}

/** Results (not carried, with an id) and no call anywhere: the turn of a request that continues stored state. */
function resultsWithoutAnyCall(messages: readonly Message[]): boolean {
  let results = false;
  for (const m of messages) {
    if (m.role === "assistant") {
      for (const part of m.content) if (part.type === "toolCall") return false;
    } else if (m.role === "tool" && m.carried !== true && m.toolCallId !== "") results = true;
  }
  return results;
}
