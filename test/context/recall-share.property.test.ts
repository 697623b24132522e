// Property: any number of parallel recalls of one step, of any sizes and shapes (whole texts, pages
// from a line and column, line limits, grep, several keys), share the turn budget fairly: the turn's
// answers fit in it; each answer is whole when it fits in a fair share, otherwise at least its fair
// share less one line and the header; and following each answer's next calls with the recall tool
// reads every character of what it was answering exactly once, in order.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assistant,
  enforceToolResultBudget,
  MemoryArchive,
  recall,
  textOf,
  toolResult,
  userText,
  type Message,
  type RecallOptions,
} from "../../src/context/index.js";

interface CallCase {
  readonly kind: "whole" | "page" | "grep" | "keys";
  /** Lines, each 0..maxLine chars long (lengths drawn from `seed`). */
  readonly lines: number;
  readonly maxLine: number;
  readonly longLine: number;
  readonly at: number;
  readonly column: number;
  readonly limit: number | undefined;
}

const MAX_LINE = 300;
/** What a shared page may leave of its room unused to end on a whole line (SNAP_CHARS in src/context/recall-within.ts). */
const SNAP_CHARS = 1_000;
const callArb: fc.Arbitrary<CallCase> = fc.record({
  kind: fc.constantFrom("whole", "page", "grep", "keys"),
  lines: fc.integer({ min: 1, max: 4000 }),
  maxLine: fc.integer({ min: 0, max: MAX_LINE }),
  longLine: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 120_000 })),
  at: fc.nat(),
  column: fc.integer({ min: 1, max: 50_000 }),
  limit: fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
});
const caseArb = fc.record({
  calls: fc.integer({ min: 1, max: 16 }).chain((n) => fc.array(callArb, { minLength: n, maxLength: n })),
  budget: fc.integer({ min: 16_384, max: 200_000 }),
  cap: fc.integer({ min: 16_384, max: 120_000 }),
  seed: fc.nat(1000),
});

/** A text of the given line lengths (a line of `longLine` chars in the middle when not 0), with a surrogate pair now and then. */
function makeText(c: CallCase, seed: number): string {
  const lines = Array.from({ length: c.lines }, (_, i) => {
    const n = ((i + 1) * 2_654_435_761 + seed * 40_503) % (c.maxLine + 1);
    return (i % 7 === 3 && n > 2 ? "😀" : "") + `${seed}:${i}:`.padEnd(n, "abcdefghij".charAt(i % 10)).slice(0, n);
  });
  if (c.longLine > 0) lines.splice(Math.floor(lines.length / 2), 0, "L😀".repeat(c.longLine / 3));
  return `${lines.join("\n")}\n`;
}

/** Index in `text` of line `offset` (1-based), character `column` (1-based). */
function position(text: string, offset: number, column: number): number {
  let at = 0;
  for (let n = 1; n < offset; n++) at = text.indexOf("\n", at) + 1;
  return at + column - 1;
}

const NEXT_IN_HEADER = /Next: recall <<ccr:[0-9a-f]{16}>> offset=\d+(?: column=\d+)?(?: limit=\d+)?\.\]$/;

/** Follows `Next: recall <<ccr:KEY>> offset=N [column=C] [limit=L]` with the recall tool; the page bodies joined. */
function readOn(store: MemoryArchive, first: string, cap: number): string {
  let answer = first;
  let text = "";
  for (let i = 0; i < 10_000; i++) {
    const nl = answer.indexOf("\n");
    const header = nl < 0 ? answer : answer.slice(0, nl);
    if (nl >= 0) text += answer.slice(nl + 1);
    const next = /Next: recall <<ccr:([0-9a-f]{16})>> offset=(\d+)(?: column=(\d+))?(?: limit=(\d+))?\.\]$/.exec(header);
    if (!next) return text;
    const options: RecallOptions = {
      offset: Number(next[2]),
      maxChars: cap,
      ...(next[3] ? { column: Number(next[3]) } : {}),
      ...(next[4] ? { limit: Number(next[4]) } : {}),
    };
    answer = recall(next[1]!, store, options).text;
  }
  throw new Error("paging did not end");
}

describe("parallel recalls share the turn budget (property)", () => {
  it("any number of parallel recalls of any sizes: the turn fits, each gets at least min(its size, a fair share), and paging on reads every character once", () => {
    let refits = 0;
    fc.assert(
      fc.property(caseArb, ({ calls, budget, cap, seed }) => {
        // at least a page's worth each (header and a line): more recalls than that is the note case, tested on its own
        fc.pre(budget / calls.length >= 1_024);
        const store = new MemoryArchive();
        // per call: the text from where it asked to read, to the end (undefined for grep and several keys)
        const expected: (string | undefined)[] = [];
        const inputs = calls.map((c, i) => {
          const text = makeText(c, seed + i);
          const key = store.put(text);
          const lineCount = text.split("\n").length - 1;
          if (c.kind === "whole") {
            expected.push(text);
            return { key };
          }
          if (c.kind === "grep" || c.kind === "keys") expected.push(undefined);
          if (c.kind === "grep") return { key, grep: ":1", limit: 3000 };
          if (c.kind === "keys") return { key: `${key} ${store.put(makeText(c, seed + 100 + i))}` };
          const offset = 1 + (c.at % lineCount);
          const lineLength = text.indexOf("\n", position(text, offset, 1)) - position(text, offset, 1);
          const column = 1 + (c.column % (lineLength + 1));
          const start = position(text, offset, column);
          // a surrogate pair is never split by a page, so a column inside one is not where a page begins
          if (column > 1 && text.charCodeAt(start - 1) >= 0xd800 && text.charCodeAt(start - 1) < 0xdc00) {
            expected.push(text.slice(start - 1));
            return { key, offset, column: column - 1, ...(c.limit !== undefined ? { limit: c.limit } : {}) };
          }
          expected.push(text.slice(start));
          return { key, offset, column, ...(c.limit !== undefined ? { limit: c.limit } : {}) };
        });
        const ids = inputs.map((_, i) => `call_${i}`);
        const messages: Message[] = [
          userText("go"),
          assistant(
            "",
            inputs.map((input, i) => ({ id: ids[i]!, name: "recall", input })),
          ),
          ...inputs.map((input, i) => {
            const { key, ...paging } = input as { key: string } & RecallOptions;
            return toolResult(ids[i]!, recall(key, store, { ...paging, maxChars: cap }).text, { toolName: "recall" });
          }),
        ];
        const options = { turnBudgetChars: budget, toolCaps: { recall: cap }, archive: store };
        const { messages: out, report } = enforceToolResultBudget(messages, options);
        refits += report.recallsRefit;
        const before = messages.slice(2).map((m) => textOf(m));
        const after = out.slice(2).map((m) => textOf(m));
        expect(after.reduce((sum, a) => sum + a.length, 0)).toBeLessThanOrEqual(budget);
        const fair = Math.floor(budget / calls.length);
        for (const [i, answer] of after.entries()) {
          if (answer !== before[i]) {
            // short of its share by at most the part of a line a page leaves out to end on a line (SNAP_CHARS) and the header's room
            expect(answer.length).toBeGreaterThanOrEqual(Math.min(before[i]!.length, fair) - SNAP_CHARS - 400);
          }
          const plain = calls[i]!.kind === "whole" || calls[i]!.kind === "page";
          if (answer === before[i]) {
            // whole: nothing to read on; a grep or several-key answer reads on in its own way (tested elsewhere)
            if (!plain || !answer.startsWith("[recall ")) continue;
          }
          // a page reads on in its text to the end; an answer that is no page, in the answer as it was
          // (which, when recall had already paged it at the cap, is that page's text read on)
          const asItWas = NEXT_IN_HEADER.test(before[i]!.split("\n", 1)[0]!) ? readOn(store, before[i]!, cap) : before[i];
          expect(readOn(store, answer, cap)).toBe(plain ? expected[i] : asItWas);
        }
        // the same history again gives the same answers
        expect(enforceToolResultBudget(messages, options).messages).toEqual(out);
      }),
      { numRuns: 150 },
    );
    // the cases must reach the sharing, not only turns that fit
    expect(refits).toBeGreaterThan(200);
  }, 120_000);
});
