// recall's size limits, in characters (JS string length, as every context budget counts). An answer
// is never longer than its cap: a page stops at it, a line longer than a page is shown as a slice, a
// grep match on a long line as a window around the match, and each says how to ask for the rest.
import { isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { RecallError } from "./errors.js";

/** The longest answer by default: half the default turn budget, so a recall and the turn's other results fit in one turn. */
export const DEFAULT_RECALL_MAX_CHARS = 100_000;
/** The smallest cap a caller may set: 64 keys' sections, each at least a one-line note, must fit in it. */
export const MIN_RECALL_MAX_CHARS = 16_384;
/** Room kept in a section for its header (numbers, two markers and a clipped grep pattern fit well within it). */
export const HEADER_RESERVE = 1_000;
/** A grep match on a line up to this long shows the whole line; a longer line shows a window around the match. */
export const GREP_LINE_MAX = 1_000;
/** A window around a match on a long line: this many characters before the match, this many in all. */
export const GREP_WINDOW_BEFORE = 200;
export const GREP_WINDOW = 600;
/** A section with less room than this shows a one-line note instead of a page (one grep entry always fits in a page). */
export const MIN_PAGE_CHARS = HEADER_RESERVE + GREP_LINE_MAX + 400;

/** Throws RecallError (SPOOL_RECALL_OPTION) unless `value` is a whole number ≥ MIN_RECALL_MAX_CHARS or Infinity; `name` is how the caller spells it. */
export function checkRecallMaxChars(value: unknown, name = "maxChars"): void {
  if (value === Number.POSITIVE_INFINITY || isWholeNumberIn(value, MIN_RECALL_MAX_CHARS)) return;
  throw new RecallError(
    "SPOOL_RECALL_OPTION",
    `${name} must be ${wholeNumberRange(MIN_RECALL_MAX_CHARS)} (characters in one recall answer) or Infinity, got ${String(value)}.`,
  );
}
