// Where each line of a recalled text starts and ends, found with indexOf so a 10 MB text is scanned
// once and never split into an array. A trailing newline ends the last line; it does not start another.

export interface LineIndex {
  /** Number of lines (0 for the empty text). */
  readonly count: number;
  /** Offset of line n's first character (0-based n). */
  start(n: number): number;
  /** Offset just past line n's last character, its newline excluded. */
  end(n: number): number;
  /** Offset where line n starts, or the text's length for n = count: the end of a page ending before line n. */
  boundary(n: number): number;
  /** The largest n in [lo, hi] with boundary(n) ≤ offset, or undefined when boundary(lo) is already past it. */
  lastBoundaryAtOrBefore(offset: number, lo: number, hi: number): number | undefined;
}

export function indexLines(content: string): LineIndex {
  const starts: number[] = content.length === 0 ? [] : [0];
  let i = content.indexOf("\n");
  while (i >= 0 && i < content.length - 1) {
    starts.push(i + 1);
    i = content.indexOf("\n", i + 1);
  }
  const count = starts.length;
  const boundary = (n: number): number => (n < count ? starts[n]! : content.length);
  return {
    count,
    start: (n) => starts[n]!,
    end: (n) => (n + 1 < count ? starts[n + 1]! - 1 : content.endsWith("\n") ? content.length - 1 : content.length),
    boundary,
    lastBoundaryAtOrBefore(offset, lo, hi) {
      if (boundary(lo) > offset) return undefined;
      while (lo < hi) {
        const mid = lo + Math.ceil((hi - lo) / 2);
        if (boundary(mid) <= offset) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    },
  };
}
