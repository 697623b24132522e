// Old tool-call inputs, bounded: a model's heredoc in a `bash` command or a whole file in a `write`
// input stayed in its assistant message in every later request. Once the call is as old as a result
// that gets truncated (truncateTurns), each string in its input longer than inputMaxChars (8,000) is
// replaced in place by a one-line stub carrying its recall marker; the input keeps its keys, nesting
// and every other value, and the call its id and name, so pairing is untouched.
// Why this is safe to send: the AI SDK passes a previous call's `input` through as it is (ModelMessage's
// schema types it `unknown`, and the SDK itself sends back a call whose input failed the tool's schema),
// the providers take any JSON object (Anthropic) or any arguments string (OpenAI) for a call in the
// history, and Anthropic's own server-side context editing can clear old tool inputs
// (`clear_tool_inputs` of clear_tool_uses_20250919), so its models are meant to read such histories.
// Never touched: a call waiting for approval (the SDK runs it from the history), an input that is not
// an object (OpenAI custom tools' free-form string), or one that could not be parsed (`rawInput` only).
import { countOf } from "../errors/index.js";
import { archiveKey, formatMarker } from "./archive-key.js";
import type { ArchiveStore } from "./archive-store.js";
import { countLines } from "./cut.js";
import type { AssistantMessage, AssistantPart, ToolCallPart } from "./messages.js";

export const DEFAULT_INPUT_MAX_CHARS = 8_000;
const LEAD = "[Old tool input cleared — ";
const FIRST_LINE_CHARS = 120;
/** Deeper than any real tool input; past it strings are left as they are. */
const MAX_DEPTH = 8;

export interface InputReport {
  inputsCleared: number;
  charsSaved: number;
  keysArchived: string[];
  errors: string[];
}

/** The stub that replaces a long string of an old input. */
export function buildInputStub(text: string, key: string | undefined): string {
  const nl = text.indexOf("\n");
  const first = (nl < 0 ? text : text.slice(0, nl)).slice(0, FIRST_LINE_CHARS);
  const how = key !== undefined ? `recall ${formatMarker(key)} for all of it` : "it was not saved";
  return `${LEAD}${countOf(text.length, "char")}, ${countOf(countLines(text), "line")}, first line ${JSON.stringify(first)}; ${how}]`;
}

/** The message with the long strings of its calls' inputs stubbed; the same object when nothing changed. */
export function clearOldInputs(message: AssistantMessage, maxChars: number, archive: ArchiveStore | undefined, report: InputReport): AssistantMessage {
  let content: AssistantPart[] | undefined;
  message.content.forEach((part, j) => {
    if (part.type !== "toolCall" || part.approvalRequested === true) return;
    const input = part.input;
    if (input === null || typeof input !== "object" || Array.isArray(input)) return;
    let cleared = 0;
    const next = stubStrings(
      input,
      0,
      (text) => {
        const key = archive !== undefined ? archiveKey(text) : undefined;
        const stub = buildInputStub(text, key);
        if (stub.length >= text.length) return undefined;
        if (archive !== undefined) {
          try {
            archive.put(text);
          } catch (err) {
            report.errors.push(`could not archive a ${text.length}-char tool input (${(err as Error).message}); left whole`);
            return undefined;
          }
          if (!report.keysArchived.includes(key!)) report.keysArchived.push(key!);
        }
        cleared++;
        report.charsSaved += text.length - stub.length;
        return stub;
      },
      maxChars,
    );
    if (next === input) return;
    report.inputsCleared += cleared;
    // the provider's own spelling of the arguments no longer matches them
    const { rawInput: _raw, ...call } = part;
    content ??= message.content.slice();
    content[j] = { ...call, input: next } satisfies ToolCallPart;
  });
  return content !== undefined ? { ...message, content } : message;
}

/** `value` with each string longer than `maxChars` replaced by `replace`'s answer; the same value when none was. */
function stubStrings(value: unknown, depth: number, replace: (text: string) => string | undefined, maxChars: number): unknown {
  if (typeof value === "string") return value.length > maxChars ? (replace(value) ?? value) : value;
  if (value === null || typeof value !== "object" || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = stubStrings(item, depth + 1, replace, maxChars);
      if (next !== item) (out ??= value.slice())[i] = next;
    });
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = stubStrings(item, depth + 1, replace, maxChars);
    // defineProperty: a "__proto__" key of parsed JSON is data, and an assignment would set the prototype
    if (next !== item)
      Object.defineProperty((out ??= { ...(value as Record<string, unknown>) }), key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return out ?? value;
}
