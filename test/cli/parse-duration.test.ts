// Command-line durations: decimal seconds or a number with a unit, nothing Number() would also take.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDuration } from "../../src/cli/parse-duration.js";

describe("parseDuration", () => {
  it("reads seconds and the units s, m, h, d, w", () => {
    expect(parseDuration("90")).toBe(90);
    expect(parseDuration("1.5")).toBe(1.5);
    expect(parseDuration(".5")).toBe(0.5);
    expect(parseDuration("2.")).toBe(2);
    expect(parseDuration("90s")).toBe(90);
    expect(parseDuration("5m")).toBe(300);
    expect(parseDuration("1.5h")).toBe(5400);
    expect(parseDuration("7d")).toBe(604_800);
    expect(parseDuration("2w")).toBe(1_209_600);
    expect(parseDuration("0")).toBe(0);
  });

  it("refuses what only Number() would read, and a bare number where a unit is required", () => {
    for (const text of ["", " 5", "5 ", "0x10", "1e3", "-1", "+1", "Infinity", "NaN", "5 m", "5M", "5ms", "1_000", "٣", "5m5s", "."]) {
      expect(parseDuration(text), text).toBeUndefined();
    }
    expect(parseDuration("7", "required")).toBeUndefined();
    expect(parseDuration("7d", "required")).toBe(604_800);
  });

  it("agrees with the number and unit it was built from, and never throws on any string", () => {
    const unit = fc.constantFrom(["", 1], ["s", 1], ["m", 60], ["h", 3600], ["d", 86_400], ["w", 604_800]);
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.nat(999), unit, (whole, frac, [u, k]) => {
        const text = `${whole}.${String(frac).padStart(3, "0")}${u}`;
        expect(parseDuration(text)).toBeCloseTo((whole + frac / 1000) * (k as number), 6);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        const s = parseDuration(text);
        expect(s === undefined || (Number.isFinite(s) && s >= 0)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });
});
