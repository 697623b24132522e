// Whether the results of a history may answer calls the provider keeps (PrepareOptions.externalCalls)
// when the caller did not say. An OpenAI Responses request that continues stored state
// (`previous_response_id`, `conversation`) sends outputs whose calls are not in its `input` — on every
// tool turn, the input is nothing but those outputs. The messages cannot show the body's fields, and
// treating such an output as an orphan removed it: `prepareHistory` sent the API an empty input (the
// stored call then has no output: a 400), and the model never saw the tool's result. So:
// an `item_reference` among the messages says so itself (continuesServerState counts it too); else, in
// the Responses format, an output that answers no call before it is a question only the caller can
// answer, and the error says how; every other format has no stored calls.
import type { Format } from "./adapters/index.js";
import { ConfigError } from "./errors.js";
import type { Message } from "./messages.js";

export function resolveExternalCalls(messages: readonly Message[], given: boolean | undefined, format: Format | undefined): boolean {
  if (given !== undefined) return given;
  if (referencesStoredItems(messages)) return true;
  if (format !== "openai-responses") return false;
  const id = outputWithoutCall(messages);
  if (id === undefined) return false;
  throw new ConfigError(
    "externalCalls",
    `the output for call ${id} answers no call in the history: pass externalCalls: continuesServerState(body) — true when the request continues stored state (previous_response_id, conversation) and the call is kept by OpenAI, false to remove such outputs as orphans.`,
  );
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

/** The id of the first result whose id no call before it made (what pairing would remove as an orphan, or keep as external). */
function outputWithoutCall(messages: readonly Message[]): string | undefined {
  const called = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant") {
      for (const part of m.content) if (part.type === "toolCall") called.add(part.id);
    } else if (m.role === "tool" && m.carried !== true && m.toolCallId !== "" && !called.has(m.toolCallId)) return m.toolCallId;
  }
  return undefined;
}
