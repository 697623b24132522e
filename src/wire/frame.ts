// One SSE frame per batch per subscriber, with the heavy part shared. Subscribers' encoders differ only
// in how they name paths; the values they carry are the batch's own. Each op's value is serialised once
// per batch, and a large one becomes one Buffer that every subscriber's socket is handed, so a 20 MB
// batch costs 20 MB once, not once per subscriber (it was a JSON.stringify and a copy per subscriber).
import { Buffer } from "node:buffer";
import type { Op, WireOp } from "../delta/index.js";

/** Values at least this long (serialised) are shared as one Buffer; smaller ones are inlined. */
const SHARE_AT = 16 * 1024;

type Payload = string | Buffer;

/** Per batch (the ops array every subscriber is handed): serialised payloads by op index. */
const shared = new WeakMap<readonly Op[], Payload[]>();

const hasPayload = (verb: string): boolean => verb === "r" || verb === "s" || verb === "a" || verb === "p";

function payloadOf(ops: readonly Op[], index: number): Payload {
  let cache = shared.get(ops);
  if (cache === undefined) {
    cache = [];
    shared.set(ops, cache);
  }
  let p = cache[index];
  if (p === undefined) {
    const op = ops[index]!;
    const json = JSON.stringify(op[op.length - 1]) ?? "null";
    p = json.length >= SHARE_AT ? Buffer.from(json, "utf8") : json;
    cache[index] = p;
  }
  return p;
}

/**
 * The frame for `wire` (this subscriber's encoding of `ops`) as chunks to write in order, and its
 * length in bytes. Equal, byte for byte, to `id: seq\nevent: ops\ndata: JSON.stringify(wire)\n\n`.
 */
export function frameOf(seq: number, ops: readonly Op[], wire: readonly WireOp[]): { chunks: Payload[]; bytes: number; shared: Buffer[] } {
  const chunks: Payload[] = [];
  let text = `id: ${seq}\nevent: ops\ndata: [`;
  // The encoder emits one wire op per op, in order, with "#" definitions in between.
  let source = 0;
  for (let i = 0; i < wire.length; i++) {
    const w = wire[i]!;
    if (i > 0) text += ",";
    if (w[0] === "#" || !hasPayload(w[0])) {
      text += JSON.stringify(w);
      if (w[0] !== "#") source++;
      continue;
    }
    const head = JSON.stringify(w.slice(0, -1)); // at least the verb: ["s"
    text += `${head.slice(0, -1)},`;
    const p = payloadOf(ops, source++);
    if (typeof p === "string") text += p;
    else {
      chunks.push(text, p);
      text = "";
    }
    text += "]";
  }
  text += "]\n\n";
  chunks.push(text);
  let bytes = 0;
  const shared: Buffer[] = [];
  for (const c of chunks) {
    if (typeof c === "string") bytes += Buffer.byteLength(c, "utf8");
    else {
      bytes += c.length;
      shared.push(c);
    }
  }
  return { chunks, bytes, shared };
}
