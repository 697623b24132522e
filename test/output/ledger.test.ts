// The sink's line ledger against recounting the text it describes, across FIFO compaction (which only
// happens past 1024 evicted lines, beyond what the sink's random sequences reach).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countLines, utf8Length } from "../../src/capture/index.js";
import { WindowLedger } from "../../src/output/ledger.js";

const check = (ledger: WindowLedger, text: string): void => {
  expect(ledger.length).toBe(text.length);
  expect(ledger.bytes).toBe(utf8Length(text));
  expect(ledger.lines).toBe(countLines(text));
  expect(ledger.open).toBe(text.length > 0 && !text.endsWith("\n"));
};

describe("WindowLedger", () => {
  it("drops whole lines by units and by eviction through several compactions of its FIFO", () => {
    const ledger = new WindowLedger();
    let text = "";
    for (let round = 0; round < 6; round++) {
      let add = "";
      for (let i = 0; i < 1500; i++) add += `r${round} line ${i} ${"é".repeat(i % 5)}\n`;
      ledger.add(add);
      text += add;
      check(ledger, text);
      // Drop 1200 whole lines by units, then 200 more one by one.
      const cut = text.split("\n").slice(0, 1200).join("\n").length + 1;
      expect(ledger.dropUnits(cut)).toBe(true);
      text = text.slice(cut);
      check(ledger, text);
      for (let k = 0; k < 200; k++) text = text.slice(ledger.dropFirst());
      check(ledger, text);
    }
  });

  it("a drop that ends inside a line is refused and changes nothing", () => {
    const ledger = new WindowLedger();
    ledger.add("abc\ndef\ngh");
    expect(ledger.dropUnits(2)).toBe(false);
    expect(ledger.dropUnits(6)).toBe(false);
    check(ledger, "abc\ndef\ngh");
    expect(ledger.dropUnits(8)).toBe(true);
    check(ledger, "gh");
  });

  it("random adds and line-boundary drops agree with a recount", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ unit: fc.constantFrom("a", "\n", "é", "😀", "\ud83d", "\ude00"), maxLength: 30 }), fc.nat(40)), { maxLength: 60 }),
        (steps) => {
          const ledger = new WindowLedger();
          let text = "";
          for (const [add, lines] of steps) {
            ledger.add(add);
            text += add;
            const parts = text.split("\n");
            const whole = Math.min(lines, parts.length - 1);
            const cut = whole === 0 ? 0 : parts.slice(0, whole).join("\n").length + 1;
            expect(ledger.dropUnits(cut)).toBe(true);
            text = text.slice(cut);
            check(ledger, text);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
