// The size of a batch for pacing, without serialising it: the publisher only needs bytes within a few
// percent to space flushes (~100 KB/s), and JSON.stringify of every batch was a tenth of a small flush.
// Text and small values are sized directly; structured payloads (a base, details objects) are serialised.
import type { Op } from "../delta/index.js";

const valueSize = (v: unknown): number => {
  if (typeof v === "string") return v.length + 2;
  if (typeof v !== "object" || v === null) return 8;
  return JSON.stringify(v).length;
};

/** Approximate JSON length of `ops` (exact for strings of ASCII without escapes, otherwise close). */
export function batchSize(ops: readonly Op[]): number {
  let n = 2;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    n += 6;
    if (op[0] === "r") {
      n += valueSize(op[1]);
      continue;
    }
    const path = op[1];
    for (let k = 0; k < path.length; k++) {
      const seg = path[k]!;
      n += typeof seg === "number" ? 4 : seg.length + 3;
    }
    if (op[0] === "p") n += 12 + valueSize(op[4]);
    else if (op.length > 2) n += valueSize(op[2]);
  }
  return n;
}
