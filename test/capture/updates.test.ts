import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyUpdate, deriveUpdate, type CaptureView } from "../../src/capture/index.js";

function view(text: string, totalLines = 1): CaptureView {
  return {
    text,
    binary: false,
    rawBytes: text.length,
    truncation: {
      truncated: false,
      truncatedBy: null,
      totalLines,
      totalBytes: text.length,
      outputLines: 1,
      outputBytes: text.length,
      maxLines: 2000,
      maxBytes: 51200,
      cutLines: 0,
      lastLinePartial: false,
    },
  };
}

describe("update kinds", () => {
  it("the first update is a replace", () => {
    expect(deriveUpdate(undefined, view("a"))?.kind).toBe("replace");
  });
  it("prefix growth is an append of only the new text", () => {
    expect(deriveUpdate(view("ab\n"), view("ab\ncd\n"))).toMatchObject({ kind: "append", text: "cd\n" });
  });
  it("a moving tail is a slide that drops from the front and appends", () => {
    const u = deriveUpdate(view("line 1\nline 2\nline 3\n"), view("line 2\nline 3\nline 4\n"));
    expect(u).toMatchObject({ kind: "slide", drop: 7, text: "line 4\n" });
  });
  it("same text with new totals is a metadata update; nothing new at all is no update", () => {
    expect(deriveUpdate(view("x", 1), view("x", 2))?.kind).toBe("metadata");
    expect(deriveUpdate(view("x"), view("x"))).toBeUndefined();
  });
  it("a complete turnover is a replace", () => {
    expect(deriveUpdate(view("aaaa\n"), view("zzzz\n"))?.kind).toBe("replace");
  });
  it("a non-first update with no previous view is rejected with a clear error", () => {
    expect(() => applyUpdate(undefined, { kind: "append", text: "x", metadata: view("").truncation as never })).toThrow(/needs a previous view/);
  });

  it("applying the derived update to the previous view gives the current view", () => {
    const text = fc.string({ maxLength: 200, unit: fc.constantFrom("a", "b", "\n", "é", "😀", "line ", "x") });
    fc.assert(
      fc.property(text, text, fc.nat(), fc.nat(), (a, b, dropSeed, mode) => {
        const prev = view(a);
        // Mix unrelated pairs with real slides and appends.
        const curText = mode % 3 === 0 ? b : mode % 3 === 1 ? a.slice(dropSeed % (a.length + 1)) + b : a + b;
        const cur = view(curText, 2);
        const u = deriveUpdate(prev, cur);
        expect(u).toBeDefined();
        expect(applyUpdate(prev, u!)).toEqual(cur);
        if (mode % 3 === 1 && dropSeed % (a.length + 1) < a.length && curText !== a && !curText.startsWith(a)) {
          expect(u!.kind).toBe("slide");
        }
      }),
      { numRuns: 1000 },
    );
  });
});
