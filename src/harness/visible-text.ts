// A tool result's text as a model is handed it: never empty or only whitespace. The Anthropic API
// refuses such a text block ("text content blocks must contain non-whitespace text"), and Bedrock's
// Converse a blank text field, so a client that forwarded the text as it is failed its next request
// after `mkdir x` (text "") or `echo` ("\n"). Both integration surfaces use it: MCP's result block and
// the AI SDK's model output (which sent "" to the provider for a silent command).
import { givenValue } from "../errors/index.js";

/** A command that printed nothing says so, as `spool run` does; whitespace is shown escaped. */
export function visibleText(text: string): string {
  if (text === "") return "(no output)";
  if (text.trim() !== "") return text;
  return `(only whitespace${text.length > 40 ? `, ${text.length} characters` : ""}: ${givenValue(text)})`;
}
