// Reads a pipe might have made of some output: the tests that hold a view independent of read boundaries.

/** `bytes` cut at each of `points` (ascending, within it): the reads a pipe might have made. */
export function splitAt(bytes: Buffer, points: readonly number[]): Buffer[] {
  const reads: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    reads.push(bytes.subarray(prev, p));
    prev = p;
  }
  return reads;
}
