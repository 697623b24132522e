// How an error result's code travels in providers that have no field for it: a text prefix
// "[ERROR:<code>] " (and, for OpenAI-style APIs that have no error flag at all, "[ERROR] " for an
// error without a code). Reading the prefix back makes the adapters lossless for errors too.
import type { ContentPart } from "../messages.js";

const CODE_RE = /^\[ERROR:([^\]\s]{1,64})\] /;

export function errorPrefix(code: string | undefined, flagless: boolean): string {
  if (code !== undefined && code !== "") return `[ERROR:${code}] `;
  return flagless ? "[ERROR] " : "";
}

/** Prefixes the first text part (inserting one if the content starts with something else). */
export function markError(parts: readonly ContentPart[], prefix: string): ContentPart[] {
  if (prefix === "") return [...parts];
  const first = parts[0];
  if (first?.type === "text") return [{ ...first, text: prefix + first.text }, ...parts.slice(1)];
  return [{ type: "text", text: prefix }, ...parts];
}

export interface Unmarked {
  readonly parts: ContentPart[];
  readonly isError: boolean;
  readonly errorCode?: string;
}

/**
 * Strips a leading error prefix. `flagless`: the provider has no error flag, so "[ERROR] " alone
 * marks an error. With a flag (Anthropic), only "[ERROR:code] " on an error result is a code.
 */
export function unmarkError(parts: readonly ContentPart[], flagged: boolean, flagless: boolean): Unmarked {
  const first = parts[0];
  if (first?.type === "text" && (flagged || flagless)) {
    const m = CODE_RE.exec(first.text);
    if (m) return { parts: [{ ...first, text: first.text.slice(m[0].length) }, ...parts.slice(1)], isError: true, errorCode: m[1]! };
    if (flagless && first.text.startsWith("[ERROR] ")) {
      return { parts: [{ ...first, text: first.text.slice(8) }, ...parts.slice(1)], isError: true };
    }
  }
  return { parts: [...parts], isError: flagged };
}
