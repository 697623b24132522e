// Base sharing: a burst of subscribers with no publish in between is sent one base (serialised once);
// any publish, or a moment with nobody watching, ends the sharing, so no subscriber gets a stale base.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createStateHost } from "../../src/harness/index.js";
import { createBaseSharing } from "../../src/wire/bases.js";
import { createWireServer, subscribe, type Subscription } from "../../src/wire/index.js";
import type { Op } from "../../src/delta/index.js";

const state = { subscribe: () => () => {} };
const base = (v: unknown): readonly Op[] => [["r", v]];

describe("base sharing", () => {
  it("a second subscriber with no publish in between gets the first one's base batch", () => {
    const b = createBaseSharing();
    b.watch(state);
    const first = base({ n: 1 });
    expect(b.batch(state, first, true)).toBe(first);
    b.watch(state);
    expect(b.batch(state, base({ n: 1 }), true)).toBe(first);
  });

  it("a publish in between ends the sharing", () => {
    const b = createBaseSharing();
    b.watch(state);
    const first = base({ n: 1 });
    b.batch(state, first, true);
    b.batch(state, [["s", ["n"], 2]], false);
    b.watch(state);
    const second = base({ n: 2 });
    expect(b.batch(state, second, true)).toBe(second);
  });

  it("a moment with nobody watching ends the sharing (a publish then reached no one)", () => {
    const b = createBaseSharing();
    const unwatch = b.watch(state);
    const first = base({ n: 1 });
    b.batch(state, first, true);
    unwatch();
    b.watch(state);
    const second = base({ n: 2 });
    expect(b.batch(state, second, true)).toBe(second);
  });

  it("over a real server, subscribers joining and leaving between changes all hold the current value", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom("join", "leave", "change"), { minLength: 1, maxLength: 25 }), async (steps) => {
        const host = createStateHost();
        const s = host.state("x", { n: 0, text: "" });
        const server = await createWireServer({ states: host, token: "t" });
        const subs: Subscription<{ n: number; text: string }>[] = [];
        try {
          for (const step of steps) {
            if (step === "join") subs.push(subscribe(`${server.url}/v1/state/x`, { token: "t" }));
            else if (step === "leave") subs.shift()?.close();
            else
              s.mutate((d) => {
                d.n++;
                d.text += "é".repeat(20_000); // large enough for a shared payload
              });
            await new Promise((r) => setTimeout(r, 5));
          }
          const deadline = Date.now() + 10_000;
          while (!subs.every((x) => x.value?.n === s.value.n) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
          for (const x of subs) expect(x.value).toEqual(s.value);
        } finally {
          subs.forEach((x) => x.close());
          await server.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
