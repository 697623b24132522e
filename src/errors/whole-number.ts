// The one rule for a whole-number option and the one way to say its range, shared by every layer
// (capture limits and terminal size, recall paging, the read tool, list reads, environment settings,
// CLI flags), so a user reads "a whole number from 2 to 1,000" or "a whole number of 1 or more"
// wherever the number came from. Each layer throws its own error class, with its own code.

/** True for a whole number within [min, max] (never NaN, ±Infinity or 1.5). */
export function isWholeNumberIn(value: unknown, min: number, max = Number.POSITIVE_INFINITY): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

const grouped = (n: number): string => n.toLocaleString("en-US");

/**
 * The range in words: "a whole number from 2 to 1,000", or "a whole number of 1 or more" without a
 * maximum (Number.MAX_SAFE_INTEGER counts as none: nobody should read "to 9,007,199,254,740,991").
 */
export function wholeNumberRange(min: number, max = Number.POSITIVE_INFINITY): string {
  return max >= Number.MAX_SAFE_INTEGER ? `a whole number of ${grouped(min)} or more` : `a whole number from ${grouped(min)} to ${grouped(max)}`;
}
