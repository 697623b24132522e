// The shared whole-number rule and its wording: the rule is exactly "an integer within [min, max]",
// and the words name both ends (grouped digits) or say there is no maximum.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isWholeNumberIn, wholeNumberRange } from "../../src/errors/index.js";

describe("isWholeNumberIn", () => {
  it("accepts exactly the integers within [min, max]", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: -1000, max: 1000 }), fc.oneof(fc.double(), fc.integer()), (a, b, v) => {
        const [min, max] = a <= b ? [a, b] : [b, a];
        expect(isWholeNumberIn(v, min, max)).toBe(Number.isInteger(v) && v >= min && v <= max);
      }),
    );
  });

  it("refuses what is not a number, and has no maximum unless given one", () => {
    for (const v of ["3", null, undefined, 3n, [3], Number.NaN, Number.POSITIVE_INFINITY, 1.5]) expect(isWholeNumberIn(v, 1), String(v)).toBe(false);
    expect(isWholeNumberIn(2 ** 60, 1)).toBe(true);
    expect(isWholeNumberIn(0, 1)).toBe(false);
  });
});

describe("wholeNumberRange", () => {
  it("says both ends, digits grouped, or that there is no maximum", () => {
    expect(wholeNumberRange(2, 1000)).toBe("a whole number from 2 to 1,000");
    expect(wholeNumberRange(1, Number.MAX_SAFE_INTEGER)).toBe("a whole number of 1 or more");
    expect(wholeNumberRange(1)).toBe("a whole number of 1 or more");
    expect(wholeNumberRange(0, 65535)).toBe("a whole number from 0 to 65,535");
  });
});
