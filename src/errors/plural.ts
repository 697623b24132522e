// A count and its noun, agreeing: "1 line", "2 lines", "0 lines" — for every sentence spool shows a
// person or a model ("Showing all 1 lines" read as a mistake).

/**
 * `n` and `singular`, or `plural` (default: singular + "s") for any n other than 1. `shown` is how the
 * count is written (default: plain digits), for sentences that group digits ("10,485,760 bytes").
 */
export function countOf(n: number, singular: string, plural = `${singular}s`, shown = String(n)): string {
  return `${shown} ${n === 1 ? singular : plural}`;
}
