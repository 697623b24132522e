// The shared-payload frame is byte for byte the frame a plain JSON.stringify of the subscriber's wire
// batch gives, whatever the ops, the path interning state of the encoder and the payload sizes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encoder, track, type Op } from "../../src/delta/index.js";
import { frameOf } from "../../src/wire/frame.js";

const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer({ min: 16 * 1024 - 4, max: 40_000 }).map((n) => 'é\n"x'.repeat(Math.ceil(n / 4)).slice(0, n)),
);
const step = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), key: fc.constantFrom("a", "b", "c"), v: text }),
  fc.record({ kind: fc.constant("append" as const), key: fc.constantFrom("a", "b", "c"), v: text }),
  fc.record({ kind: fc.constant("push" as const), v: text }),
  fc.record({ kind: fc.constant("delete" as const), key: fc.constantFrom("a", "b", "c") }),
  fc.record({ kind: fc.constant("replace" as const), v: text }),
);

describe("frameOf", () => {
  it("equals the plain frame of the subscriber's encoding for random batches and encoder histories", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(step, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 7 }),
        (batches, lateJoin) => {
          const t = track<{ m: Record<string, string>; l: string[] }>({ m: {}, l: [] });
          t.flush();
          const early = encoder();
          const late = encoder();
          batches.forEach((batch, i) => {
            for (const s of batch) {
              const st = t.state;
              if (s.kind === "set") st.m[s.key] = s.v;
              else if (s.kind === "append") st.m[s.key] = (st.m[s.key] ?? "") + s.v;
              else if (s.kind === "push") st.l.push(s.v);
              else if (s.kind === "delete") delete st.m[s.key];
              else t.state = { m: { a: s.v }, l: [] };
            }
            const ops: readonly Op[] = t.flush();
            if (ops.length === 0) return;
            const subscribers = i >= lateJoin ? [early, late] : [early];
            for (const enc of subscribers) {
              const wire = enc.encode(ops);
              const { chunks, bytes } = frameOf(i, ops, wire);
              const joined = Buffer.concat(chunks.map((c) => (typeof c === "string" ? Buffer.from(c, "utf8") : c)));
              const plain = `id: ${i}\nevent: ops\ndata: ${JSON.stringify(wire)}\n\n`;
              expect(joined.toString("utf8")).toBe(plain);
              expect(bytes).toBe(Buffer.byteLength(plain));
            }
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
