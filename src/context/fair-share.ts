// Sharing one budget among parts that each want some of it: the recall answers of one step (the
// turn budget, budget.ts) and the keys of one recall answer (its cap, recall.ts). Smallest first,
// each offered an equal share of what is left: a part that needs less than its share leaves the rest
// to the larger ones, and so does a part that takes a little less than offered (a page ends at a line
// boundary). No part is offered less than floor(budget / parts) unless it is smaller than that, and
// the parts never take more than the budget when each takes at most what it is offered.

/**
 * Calls `take(i, share)` once per part, smallest `sizes[i]` first (ties by index); `take` returns
 * what part i used (more than offered is taken from the parts after it).
 */
export function shareOut(sizes: readonly number[], budget: number, take: (index: number, share: number) => number): void {
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[a]! - sizes[b]! || a - b);
  let left = Math.max(0, budget);
  order.forEach((i, done) => {
    const share = Math.max(0, Math.floor(left / (order.length - done)));
    left -= take(i, share);
  });
}

/**
 * The level L at which the parts, each taking min(size, L), use exactly `budget` (Infinity when all
 * of them fit): the fair share of a part larger than L.
 */
export function fairLevel(sizes: readonly number[], budget: number): number {
  const sorted = [...sizes].sort((a, b) => a - b);
  let left = Math.max(0, budget);
  for (let i = 0; i < sorted.length; i++) {
    const even = left / (sorted.length - i);
    if (sorted[i]! > even) return even;
    left -= sorted[i]!;
  }
  return Number.POSITIVE_INFINITY;
}
