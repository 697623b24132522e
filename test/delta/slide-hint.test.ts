// A string assigned as a rolling window (old text minus its front, plus new text at the end) is found
// as `t` + `a`; the slot's last front-drop is tried first on the next flush, verified like any other
// candidate. Random drops and appends, with the drop changing from flush to flush, must replicate
// exactly; and where two front-drops both fit (periodic text), the hinted one is what is sent.
import { describe, expect, it } from "vitest";
import { apply, type Op, track } from "../../src/delta/index.js";
import { prng } from "./helpers.js";

const WORDS = ["alpha", "beta", "gamma", "delta", "\n", "é", "😀", "x"];

describe("slide hint", () => {
  it("a window slid by a changing amount replicates, and each slide is stated with its own drop", () => {
    const r = prng(7);
    const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]!).join(" ") + ` ${Math.floor(r() * 1e9).toString(36)}`;
    const t = track({ block: { text: words(2000) } });
    let replica = apply(undefined, t.flush()) as unknown as { block: { text: string } };
    let slides = 0;
    for (let i = 0; i < 300; i++) {
      const s = t.state.block;
      // Mostly the same drop as last time, now and then another one (or none).
      const drop = i % 9 === 0 ? Math.floor(r() * 40) : 24;
      const chunk = words(1 + Math.floor(r() * 5));
      s.text = s.text.slice(drop) + chunk;
      const ops: Op[] = t.flush();
      replica = apply(replica, ops) as typeof replica;
      expect(replica).toEqual(t.target);
      const cut = ops.find((op) => op[0] === "t");
      if (drop > 0) {
        slides++;
        // Varied text: the only front-drop that fits is the one made.
        expect(cut?.[2]).toBe(drop);
      }
    }
    expect(slides).toBeGreaterThan(250);
  });

  it("periodic text where two drops fit: the one the last slide had is sent", () => {
    const t = track({ s: "12xaa" });
    t.flush();
    // A first slide, by 2: the only drop that fits.
    t.state.s = "xaaaa";
    expect(t.flush()).toEqual([
      ["t", ["s"], 2],
      ["a", ["s"], "aa"],
    ]);
    // "xaaaa" → "aaaaT": drops 1 and 2 both fit. The search alone finds 1 (t 1, a "T"); the hint is 2.
    t.state.s = "aaaaT";
    expect(t.flush()).toEqual([
      ["t", ["s"], 2],
      ["a", ["s"], "aT"],
    ]);
    // "aaaaT" → "aTbc": the hint does not fit, the search finds 3.
    t.state.s = "aTbc";
    expect(t.flush()).toEqual([
      ["t", ["s"], 3],
      ["a", ["s"], "bc"],
    ]);
  });
});
