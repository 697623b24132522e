// recall's grep: the pattern comes from the model, so it runs on re2js (a pure-JS port of RE2, no
// native build) whose matching is linear in the line length — `(a+)+$` cannot backtrack. RE2 syntax
// is JavaScript's minus backreferences and lookaround; such patterns get a clear error. The pattern
// length and the compiled program are bounded, so compiling is bounded too.
import { RE2JS } from "re2js";
import { RecallError } from "./errors.js";

/** Longer patterns are refused: a model has no use for one, and compile time grows with length. */
export const MAX_GREP_PATTERN = 1000;

export interface LineMatcher {
  /** The pattern as given, without `/…/flags` delimiters. */
  readonly source: string;
  /** The flags in effect (`i`, `m`, `s`). */
  readonly flags: string;
  test(line: string): boolean;
  /** The first match starting at or after `from` (anchors still see the whole line): [start, end), or undefined. */
  find(line: string, from: number): readonly [number, number] | undefined;
}

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL };
/** Flags that change nothing for a line-at-a-time test (global, sticky, unicode, indices). */
const IGNORED_FLAGS = "gyud";

/** Compiles `re` or `/re/flags`; throws RecallError (SPOOL_RECALL_OPTION) for anything it cannot run linearly. */
export function compileGrep(pattern: string): LineMatcher {
  if (pattern.length > MAX_GREP_PATTERN) {
    throw new RecallError("SPOOL_RECALL_OPTION", `grep pattern is ${pattern.length} characters; the limit is ${MAX_GREP_PATTERN}. Use a shorter pattern.`);
  }
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  const source = literal ? literal[1]! : pattern;
  let bits = 0;
  let flags = "";
  for (const f of literal ? literal[2]! : "") {
    if (FLAG_BITS[f] !== undefined) {
      if (!flags.includes(f)) flags += f;
      bits |= FLAG_BITS[f];
    } else if (!IGNORED_FLAGS.includes(f)) {
      throw new RecallError("SPOOL_RECALL_OPTION", `unknown grep flag "${f}" in ${JSON.stringify(pattern)}; use i, m or s.`);
    }
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, bits);
  } catch (err) {
    throw new RecallError(
      "SPOOL_RECALL_OPTION",
      `grep is not a valid regular expression here: ${JSON.stringify(clip(source))} (${(err as Error).message}). ` +
        "grep uses RE2 syntax (no backreferences or lookaround); escape special characters or pass a plain word.",
    );
  }
  return {
    source,
    flags,
    test: (line) => re.test(line),
    find(line, from) {
      const m = re.matcher(line);
      return m.find(from) ? [m.start(), m.end()] : undefined;
    },
  };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}
