// String diffing for anchored string paths: append, front-drop, or both.

/**
 * Length of the longest suffix of `a` — searched only within `a`'s last `scan` chars — that is a prefix
 * of `b`. Probes `b`'s head of `probe` chars with native indexOf, then a 1-char head (a fixed-length probe
 * cannot find an overlap shorter than itself: "abcdefgh" → "defghxyz" overlaps by 5). Each head checks at
 * most `maxCandidates` positions: unbounded scanning cost 4.7 s against 93 ms on repetitive output, and a
 * hand-written KMP was 47× slower than indexOf. Giving up returns 0, which costs bytes, never correctness.
 */
export function overlap(a: string, b: string, scan: number, probe = 64, maxCandidates = 8): number {
  if (!(scan > 0) || a.length === 0 || b.length === 0) return 0;
  const start = Math.max(0, a.length - scan);
  const heads = probe > 1 && b.length > 1 ? [Math.min(probe, b.length), 1] : [1];
  for (const headLen of heads) {
    const head = b.slice(0, headLen);
    let from = start;
    for (let tried = 0; tried < maxCandidates; tried++) {
      const pos = a.indexOf(head, from);
      if (pos < 0) break;
      const len = a.length - pos;
      // The first verified candidate is the leftmost, hence the longest overlap.
      if (len <= b.length && (len === headLen || a.slice(pos + headLen) === b.slice(headLen, len))) return len;
      from = pos + 1;
    }
  }
  return 0;
}

export type StringEdit =
  | { readonly kind: "none" }
  | { readonly kind: "set"; readonly value: string }
  | { readonly kind: "append"; readonly text: string }
  | { readonly kind: "slide"; readonly drop: number; readonly text: string };

/**
 * How to turn `before` into `after` with the fewest bytes we can find cheaply. The append test uses
 * slice + === rather than startsWith: V8 walks a cons string char by char in startsWith (measured
 * 845 µs → 42 µs per flush on a 200 KB string growing by 8 chars).
 *
 * `hint`: a front-drop to try first — the one the same string's last slide had, since a rolling window
 * drops about what it appends, flush after flush. Verified like any candidate (one compare of the kept
 * text, which the search would make too), it saves the probe's search (~900 of the ~5,000
 * instructions a 50 KB W1 flush costs above reading the text). It may miss a longer overlap in
 * periodic text, which costs bytes, never correctness.
 */
export function diffString(before: string, after: string, scan: number, hint = 0): StringEdit {
  if (before === after) return { kind: "none" };
  const bl = before.length;
  if (after.length > bl && after.slice(0, bl) === before) return { kind: "append", text: after.slice(bl) };
  if (hint > 0 && hint < bl && bl - hint <= after.length && bl - hint <= scan) {
    const kept = bl - hint;
    if (before.slice(hint) === after.slice(0, kept)) return { kind: "slide", drop: hint, text: after.slice(kept) };
  }
  const shared = overlap(before, after, scan);
  if (shared === 0) return { kind: "set", value: after };
  return { kind: "slide", drop: bl - shared, text: after.slice(shared) };
}
