// Test images: a real PNG signature and IHDR chunk (so dimensions can be read) padded with
// pseudo-random bytes, which base64-encode like a real compressed screenshot does (no repetition).
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";

/** A PNG header (signature + IHDR) for width×height, padded with pseudo-random bytes to `bytes`; base64. */
export function png(width: number, height: number, bytes: number, seed = 1): string {
  const head = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head, 0);
  head.writeUInt32BE(13, 8);
  head.write("IHDR", 12, "latin1");
  head.writeUInt32BE(width, 16);
  head.writeUInt32BE(height, 20);
  const body: Buffer[] = [head];
  let have = head.length;
  for (let i = 0; have < bytes; i++) {
    const block = createHash("sha256").update(`${seed}:${i}`).digest();
    body.push(block);
    have += block.length;
  }
  return Buffer.concat(body).subarray(0, bytes).toString("base64");
}
