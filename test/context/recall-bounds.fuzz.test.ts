// recall's bounds under arbitrary arguments: keys, grep patterns, offsets, columns, limits and caps
// chosen at random over texts with very long lines (minified JSON, one-line logs, emoji) give an answer
// within the cap in bounded time or a clear RecallError; and following the advertised next calls
// through a text — by pages or by grep — reaches all of it: the bodies join to the exact original.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_RECALL_MAX_CHARS, MemoryArchive, MIN_RECALL_MAX_CHARS, recall, RecallError, type RecallOptions } from "../../src/context/index.js";

/** Pieces of text: runs long enough to make one line longer than any answer, and the characters that trip slicing. */
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("\n", "a", "ERROR", '{"k":"v"},', "😀", "\r", " ", "é", "<<ccr:0123456789abcdef>>") },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom("x", "😀", '{"id":1},', "ab\n", "ERROR "), fc.integer({ min: 1, max: 120_000 })).map(([s, n]) => s.repeat(n)),
  },
);
const text = fc.array(piece, { minLength: 1, maxLength: 30 }).map((parts) => parts.join(""));

const grepPiece = fc.constantFrom("a", "a+", "(a|aa)*", ".*", "$", "^", "ERROR", "[a-z]", "\\d+", "(", "|", "*", "x{2,5}", "😀", "/i", "", "\\n", "(?:k)");
const grep = fc.array(grepPiece, { maxLength: 6 }).map((p) => p.join(""));

interface Next {
  readonly offset: number;
  readonly column?: number;
  readonly limit?: number;
}

/** The next call an answer's header advertises (a page's or a grep's), or undefined at the end. */
function nextOf(answer: string): Next | undefined {
  const nl = answer.indexOf("\n");
  const header = nl < 0 ? answer : answer.slice(0, nl);
  const m = /Next: recall <<ccr:[0-9a-f]{16}>>(?: grep=(?:"(?:[^"\\]|\\.)*"|\(the same pattern\)))? offset=(\d+)(?: column=(\d+))?(?: limit=(\d+))?\./.exec(
    header,
  );
  if (!m) return undefined;
  return { offset: Number(m[1]), ...(m[2] ? { column: Number(m[2]) } : {}), ...(m[3] ? { limit: Number(m[3]) } : {}) };
}

function body(answer: string): string {
  const nl = answer.indexOf("\n");
  return nl < 0 ? "" : answer.slice(nl + 1);
}

/** Where line `offset` (1-based) column `column` is in `s`. */
function positionOf(s: string, offset: number, column: number): number {
  let at = 0;
  for (let line = 1; line < offset; line++) at = s.indexOf("\n", at) + 1;
  return at + column - 1;
}

describe("recall bounds fuzz", () => {
  it("arbitrary keys, patterns, offsets, columns, limits and caps over long-line texts: an answer within the cap in bounded time, or a clear error", () => {
    let max = 0;
    let answered = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        text,
        fc.oneof(fc.constant("key"), fc.constant("marker"), fc.constant("two"), fc.string({ maxLength: 40 })),
        fc.option(grep, { nil: undefined }),
        fc.option(fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 40 }) }, fc.integer({ min: -2, max: Number.MAX_SAFE_INTEGER }), fc.double()), {
          nil: undefined,
        }),
        fc.option(fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 400_000 }) }, fc.integer({ min: -2, max: Number.MAX_SAFE_INTEGER })), {
          nil: undefined,
        }),
        fc.option(fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 50 }) }, fc.integer({ min: -2, max: Number.MAX_SAFE_INTEGER })), {
          nil: undefined,
        }),
        fc.option(
          fc.oneof(
            { weight: 4, arbitrary: fc.integer({ min: MIN_RECALL_MAX_CHARS, max: 200_000 }) },
            { weight: 2, arbitrary: fc.constant(MIN_RECALL_MAX_CHARS) },
            { weight: 1, arbitrary: fc.integer({ min: 0, max: MIN_RECALL_MAX_CHARS - 1 }) },
          ),
          { nil: undefined },
        ),
        (t, which, g, offset, column, limit, maxChars) => {
          const store = new MemoryArchive();
          const key = store.put(t);
          const other = store.put(`${t}\nand more`);
          const payload = which === "key" ? key : which === "marker" ? `<<ccr:${key}>>` : which === "two" ? `${key} ${other}` : which;
          const options: RecallOptions = {
            ...(g !== undefined ? { grep: g } : {}),
            ...(offset !== undefined ? { offset } : {}),
            ...(column !== undefined ? { column } : {}),
            ...(limit !== undefined ? { limit } : {}),
            ...(maxChars !== undefined ? { maxChars } : {}),
          };
          const started = performance.now();
          try {
            const answer = recall(payload, store, options).text;
            expect(answer.length).toBeLessThanOrEqual(maxChars ?? DEFAULT_RECALL_MAX_CHARS);
            answered++;
          } catch (err) {
            if (!(err instanceof RecallError)) throw err;
            expect(err.message).toMatch(/^\S[^\n]*$/);
            refused++;
          }
          const ms = performance.now() - started;
          max = Math.max(max, ms);
          expect(ms).toBeLessThan(2_000);
        },
      ),
      { numRuns: 500 },
    );
    console.log(`recall bounds fuzz: ${answered} answered, ${refused} clear errors, max ${max.toFixed(1)} ms per call`);
    expect(answered).toBeGreaterThan(150);
  }, 120_000);

  it("following the advertised next calls from any line and column gives back the exact text from there on", () => {
    fc.assert(
      fc.property(
        text,
        fc.integer({ min: MIN_RECALL_MAX_CHARS, max: 60_000 }),
        fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
        fc.nat(),
        fc.nat(),
        (t, maxChars, limit, lineSeed, columnSeed) => {
          const store = new MemoryArchive();
          const key = store.put(t);
          const lines = t.split("\n");
          const count = t.endsWith("\n") ? lines.length - 1 : lines.length;
          const offset = 1 + (lineSeed % count);
          const column = 1 + (columnSeed % (lines[offset - 1]!.length + 1));
          // A few lines per page over 100,000 lines would be 100,000 calls: small limits on short texts only.
          const perPage = count <= 300 ? limit : undefined;
          let options: RecallOptions = { offset, column, maxChars, ...(perPage !== undefined ? { limit: perPage } : {}) };
          let rebuilt = "";
          // Every page shows at least one line or (of a long line) at least half its cap: paging ends.
          const maxCalls = (perPage !== undefined ? count : 0) + Math.ceil(t.length / (maxChars / 2)) + 2;
          for (let calls = 0; ; calls++) {
            expect(calls).toBeLessThanOrEqual(maxCalls);
            const answer = recall(key, store, options).text;
            expect(answer.length).toBeLessThanOrEqual(maxChars);
            rebuilt += body(answer);
            const next = nextOf(answer);
            if (next === undefined) break;
            options = { ...next, maxChars };
          }
          expect(rebuilt).toBe(t.slice(positionOf(t, offset, column)));
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);

  it("following grep's advertised next calls finds exactly the lines that contain the word, each answer within the cap", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: MIN_RECALL_MAX_CHARS, max: 40_000 }), fc.integer({ min: 1, max: 5 }), (t, maxChars, limit) => {
        const store = new MemoryArchive();
        const key = store.put(t);
        const lines = (t.endsWith("\n") ? t.slice(0, -1) : t).split("\n");
        const expected = lines.flatMap((line, i) => (line.includes("ERROR") ? [i + 1] : []));
        const found: number[] = [];
        let options: RecallOptions = { grep: "ERROR", limit, maxChars };
        for (let calls = 0; ; calls++) {
          expect(calls).toBeLessThan(2_000);
          const answer = recall(key, store, { ...options, grepBudgetMs: 60_000 }).text;
          expect(answer.length).toBeLessThanOrEqual(maxChars);
          for (const entry of body(answer).split("\n")) if (entry !== "") found.push(Number(/^(\d+): /.exec(entry)![1]));
          const next = nextOf(answer);
          if (next === undefined) break;
          options = { ...next, grep: "ERROR", maxChars };
        }
        expect(found).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
