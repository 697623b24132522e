// The viewer's slide detection: when a tail window drops lines at its head and gains lines at its end,
// the page edits its text in place and keeps a paused reader's lines still. A wrong answer would
// corrupt the shown text, so the property checked is that any answer is one the page can apply.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evicted } from "../../web/src/output-pane.js";

const line = fc.string({ maxLength: 30 }).map((s) => `${s.replace(/\n/g, " ")}\n`);

describe("evicted (tail window slide detection)", () => {
  it("returns 0 for a plain append and -1 for unrelated text", () => {
    expect(evicted("a\nb\n", "a\nb\nc\n")).toBe(0);
    expect(evicted("a\nb\n", "x\ny\n")).toBe(-1);
    expect(evicted("a\nb\nc\n", "b\nc\nd\n")).toBe(2);
  });

  it("finds the cut when whole distinct lines were evicted and others appended", () => {
    fc.assert(
      fc.property(fc.uniqueArray(line, { minLength: 2, maxLength: 40 }), fc.nat(), fc.array(line, { maxLength: 10 }), (lines, k, added) => {
        const cut = 1 + (k % (lines.length - 1));
        const old = lines.join("");
        const next = lines.slice(cut).join("") + added.join("");
        const at = evicted(old, next);
        expect(at).toBe(lines.slice(0, cut).join("").length);
      }),
      { numRuns: 2000 },
    );
  });

  it("never answers a cut that would not reproduce the new text, even for repetitive or unrelated input", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a\n", "b\n", "ab\n", "\n"), { maxLength: 40 }),
        fc.array(fc.constantFrom("a\n", "b\n", "ab\n", "\n", "a"), { maxLength: 40 }),
        (a, b) => {
          const old = a.join("");
          const next = b.join("");
          const at = evicted(old, next);
          if (at >= 0) expect(next.startsWith(old.slice(at))).toBe(true);
          else expect(next.startsWith(old)).toBe(false);
        },
      ),
    );
  });
});
