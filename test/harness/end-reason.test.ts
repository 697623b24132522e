// endReason: what a session record keeps of why its run ended — an error's message, perhaps a
// provider's whole error body — as one printable line of at most 300 chars. Property tests over text
// mixing what such bodies hold (newlines, tabs, escape sequences, C1 controls, bidi overrides, emoji,
// lone surrogates).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { endReason, MAX_REASON_CHARS } from "../../src/harness/index.js";

const unit = fc.constantFrom(
  "a",
  "Z",
  " ",
  "\n",
  "\r",
  "\t",
  "\x1b",
  "[",
  "\x07",
  "\x00",
  "\x7f",
  "\x85",
  "\u202e",
  "\u061c",
  "\u2028",
  "é",
  "😀",
  "\ud800",
  "\udc00",
  "\\",
  "…",
);
const text = fc.string({ unit, maxLength: 700 });
/** What endReason leaves out of its line: whitespace but the space, controls, bidi marks, lone surrogates. */
const UNPRINTABLE =
  /(?! )\s|[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("endReason", () => {
  it("is one printable line of at most 300 chars, absent only for blank text, and the same when cleaned again", () => {
    fc.assert(
      fc.property(text, (t) => {
        const r = endReason(t);
        if (t.trim() === "") {
          expect(r).toBeUndefined();
          return;
        }
        expect(r).toBeDefined();
        expect(r!.length).toBeLessThanOrEqual(MAX_REASON_CHARS);
        expect(r).not.toMatch(UNPRINTABLE);
        expect(r).not.toMatch(/^ | $| {2}/);
        expect(endReason(r!)).toBe(r);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps a printable line of up to 300 chars as it is; a longer one is its first 299 chars (a pair kept whole) and …", () => {
    const printable = fc.string({ unit: fc.constantFrom("a", "Z", "é", "😀", "[", "\\", "…"), minLength: 1, maxLength: 400 });
    fc.assert(
      fc.property(printable, (t) => {
        const r = endReason(t)!;
        if (t.length <= MAX_REASON_CHARS) {
          expect(r).toBe(t);
          return;
        }
        expect(r.endsWith("…")).toBe(true);
        const kept = r.slice(0, -1);
        expect(t.startsWith(kept)).toBe(true);
        expect([MAX_REASON_CHARS - 1, MAX_REASON_CHARS - 2]).toContain(kept.length);
      }),
    );
  });

  it("cuts a long line of controls between escapes, never inside one", () => {
    const controls = fc.string({ unit: fc.constantFrom("a", "\x1b", "\x07", "\u202e", "\u061c", "😀"), minLength: 100, maxLength: 600 });
    fc.assert(
      fc.property(controls, (t) => {
        const r = endReason(t)!;
        expect(r.length).toBeLessThanOrEqual(MAX_REASON_CHARS);
        expect(r.replace(/…$/, "")).toMatch(/^(?:a|😀|\\x[0-9a-f]{2}|\\u[0-9a-f]{4})*$/);
      }),
    );
    expect(endReason(`${"a".repeat(296)}\x1b[0m`)).toBe(`${"a".repeat(296)}…`);
  });

  it("shows control characters as escapes and folds whitespace runs into one space", () => {
    expect(endReason('  HTTP 500:\r\n\t{"error": "\x1b[31mquota\x1b[0m"}\n\n')).toBe('HTTP 500: {"error": "\\x1b[31mquota\\x1b[0m"}');
    expect(endReason("a\u202eb\x00c\x9bd")).toBe("a\\u202eb\\x00c\\x9bd");
    expect(endReason("lone \ud800 surrogate")).toBe("lone \ufffd surrogate");
    expect(endReason(" \n\t ")).toBeUndefined();
  });
});
