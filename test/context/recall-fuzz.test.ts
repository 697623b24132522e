// Issue 11, must-show 3: 10,000 random recall payloads (keys, markers, garbage built from marker
// pieces) with random grep patterns (built from regex metacharacters, nested quantifiers included)
// each finish in bounded time with a result or a RecallError — never a hang, never another error.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryArchive, recall, RecallError } from "../../src/context/index.js";

const RUNS = 10_000;

describe("recall fuzz — model-controlled key and grep", () => {
  it(`${RUNS} random keys/markers and grep patterns each answer in bounded time`, () => {
    const store = new MemoryArchive();
    const text = Array.from({ length: 300 }, (_, i) => `${"a".repeat(i % 40)}${i % 3 === 0 ? "!" : ""} line ${i} error=${i % 11}`).join("\n");
    const key = store.put(text);
    const keyPiece = fc.constantFrom(
      key,
      key.toUpperCase(),
      key.slice(0, 15),
      "ccr",
      "CCR",
      ":",
      "<<",
      ">>",
      "<",
      " ",
      "\t",
      "\n",
      "{",
      "}",
      '"key":',
      '"',
      "`",
      "[",
      "0",
      "f",
      "z",
      "\u00a0",
    );
    const garbage = fc.array(keyPiece, { maxLength: 60 }).chain((pieces) =>
      fc.oneof(
        fc.constant(pieces.join("")),
        fc.integer({ min: 1, max: 20_000 }).map((n) => pieces.join("").repeat(Math.max(1, Math.floor(n / Math.max(1, pieces.join("").length))))),
      ),
    );
    // Half the calls name the key (sloppily) so their grep really runs over the text.
    const payload = fc.oneof(garbage, fc.constantFrom(`<<ccr:${key}>>`, key, ` ccr : ${key.toUpperCase()} `, `{"key":"${key}"}`));
    const grepPiece = fc.constantFrom(
      "a",
      "a+",
      "(a+)+",
      "(a|aa)*",
      "(.*)*",
      ".*",
      "$",
      "^",
      "!",
      "[a-z]",
      "\\d+",
      "{2,5}",
      "(",
      ")",
      "|",
      "?",
      "*",
      "+",
      "\\",
      "(?:",
      "(?=",
      "\\1",
      "[",
      "]",
      "/",
      "/i",
      "error=",
      "{1000}",
      "x",
    );
    const grep = fc.oneof(
      fc.constant(undefined),
      fc.array(fc.oneof(grepPiece, grepPiece, fc.constantFrom("a", "b", "line", " ", "(a)", "[0-9]")), { maxLength: 25 }).map((p) => p.join("")),
    );
    let max = 0;
    let answered = 0;
    let refused = 0;
    fc.assert(
      fc.property(payload, grep, fc.option(fc.integer({ min: 1, max: 400 }), { nil: undefined }), (p, g, offset) => {
        const t = performance.now();
        try {
          recall(p, store, { ...(g !== undefined ? { grep: g } : {}), ...(offset !== undefined ? { offset } : {}) });
          answered++;
        } catch (err) {
          if (!(err instanceof RecallError)) throw err;
          expect(err.message).toMatch(/^\S/);
          expect(err.message).not.toMatch(/\n\s+at /);
          refused++;
        }
        const ms = performance.now() - t;
        max = Math.max(max, ms);
        expect(ms).toBeLessThan(1000);
      }),
      { numRuns: RUNS },
    );
    console.log(`recall fuzz: ${RUNS} calls, ${answered} answered, ${refused} clear errors, max ${max.toFixed(1)} ms per call`);
    expect(answered + refused).toBe(RUNS);
  }, 120_000);
});
