// The rope is the string it stands for: any sequence of appends and front-drops leaves `value` equal
// to the same edits made on a plain string.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Rope } from "../../src/delta/index.js";

describe("Rope", () => {
  it("appends and front-drops give the plain string's value", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.array(fc.oneof(fc.record({ append: fc.string({ maxLength: 12 }) }), fc.record({ frac: fc.double({ min: 0, max: 1, noNaN: true }) })), {
          maxLength: 60,
        }),
        (initial, edits) => {
          const rope = new Rope(initial);
          let model = initial;
          for (const e of edits) {
            if ("append" in e) {
              rope.append(e.append);
              model += e.append;
            } else {
              const n = Math.floor(e.frac * model.length);
              rope.drop(n);
              model = model.slice(n);
            }
            expect(rope.value).toBe(model);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
