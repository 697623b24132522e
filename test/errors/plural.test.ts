// The count-and-noun wording: singular for exactly 1, the plural for every other count, and the count
// written as the caller asks when a sentence groups its digits.
import { describe, expect, it } from "vitest";
import { countOf } from "../../src/errors/index.js";

describe("countOf", () => {
  it("agrees with the count", () => {
    expect(countOf(1, "line")).toBe("1 line");
    expect(countOf(0, "line")).toBe("0 lines");
    expect(countOf(2, "session")).toBe("2 sessions");
    expect(countOf(1, "over-long line was", "over-long lines were")).toBe("1 over-long line was");
    expect(countOf(3, "over-long line was", "over-long lines were")).toBe("3 over-long lines were");
  });

  it("writes the count as given when asked, and still picks the noun from the number", () => {
    expect(countOf(1, "byte", "bytes", (1).toLocaleString("en-US"))).toBe("1 byte");
    expect(countOf(8_388_608, "byte", "bytes", (8_388_608).toLocaleString("en-US"))).toBe("8,388,608 bytes");
  });
});
