// Byte stability, the property prompt caches depend on. For random valid histories in each format —
// parallel results written in the order they finished (not call order), string and array result
// forms, results followed by the user's text in one message, keys in the order a client happened to
// write them — prepareHistory on a history that needs nothing gives back the same bytes. And for any
// history, damaged or not, one pass reaches a fixed point: the bytes of a second pass equal the first.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  adapters,
  FORMATS,
  MemoryArchive,
  prepareHistory,
  validateForProvider,
  type Format,
  type Message,
  type ToolResultMessage,
} from "../../src/context/index.js";
import { damage, DAMAGES, history, rng } from "./gen.js";

const LONG = process.env["SPOOL_LONG"] === "1";
const TIMEOUT = LONG ? 3_600_000 : 240_000;
/** Limits no generated result reaches, so a valid history needs nothing at all. */
const roomy = { maxResultChars: 10_000_000, turnBudgetChars: 100_000_000, truncateTurns: 1_000, summarizeTurns: 1_000 };

/** Valid for `format`: unique call ids where the API requires them, results shuffled within their turn, mixed content forms. */
function validHistory(seed: number, turns: number, format: Format): Message[] {
  const rand = rng(seed ^ 0x5bd1e995);
  const h = history(seed, turns);
  const out: Message[] = [];
  let run: ToolResultMessage[] = [];
  const flush = () => {
    // parallel results arrive in the order they finish
    for (let i = run.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [run[i], run[j]] = [run[j]!, run[i]!];
    }
    out.push(...run);
    run = [];
  };
  h.forEach((m, i) => {
    if (m.role === "tool") {
      const form = rand();
      const hints = form < 0.4 ? { content: "string" as const } : form < 0.7 ? { content: "parts" as const } : undefined;
      run.push(hints ? { ...m, hints } : m);
      return;
    }
    flush();
    if (m.role === "assistant" && (format === "anthropic" || format === "ai-sdk")) {
      // ids unique request-wide (the generator reuses "web_fetch:0" like Kimi does)
      out.push({ ...m, content: m.content.map((p) => (p.type === "toolCall" ? { ...p, id: `${p.id}#${i}` } : p)) });
      return;
    }
    if (m.role === "user" && out[out.length - 1]?.role === "tool" && rand() < 0.5) {
      out.push({ ...m, hints: { ...m.hints, joined: true } });
      return;
    }
    out.push(m);
  });
  flush();
  // the id rename above must reach the results too
  if (format === "anthropic" || format === "ai-sdk") {
    let ids = new Map<string, string>();
    for (let i = 0; i < out.length; i++) {
      const m = out[i]!;
      if (m.role === "assistant") {
        ids = new Map();
        for (const p of m.content) if (p.type === "toolCall") ids.set(p.id.slice(0, p.id.lastIndexOf("#")), p.id);
      } else if (m.role === "tool") out[i] = { ...m, toolCallId: ids.get(m.toolCallId) ?? m.toolCallId };
    }
  }
  return out;
}

/** Rewrites every object with its keys in a random order, as different clients write them. */
function shuffleKeys(value: unknown, rand: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, rand));
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const out: Record<string, unknown> = {};
  for (const key of keys)
    Object.defineProperty(out, key, {
      value: shuffleKeys((value as Record<string, unknown>)[key], rand),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

const seen = { byteRuns: 0, outOfOrder: 0, stringForm: 0, fixedRuns: 0, repaired: 0, compacted: 0 };

describe("prepareHistory keeps bytes", () => {
  it(
    "an already-valid history that needs no compaction comes back byte-identical, in every format",
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.integer({ min: 1, max: 8 }),
          fc.constantFrom(...FORMATS),
          fc.boolean(),
          (seed, turns, format, shuffled) => {
            const adapter = adapters[format];
            let wire: unknown = adapter.toProvider(validHistory(seed, turns, format));
            if (shuffled) wire = shuffleKeys(wire, rng(seed));
            const bytes = JSON.stringify(wire);
            const input = adapter.fromProvider(JSON.parse(bytes) as unknown[]);
            expect(
              validateForProvider(input, format).filter((p) => p.rule !== "roles_alternate"),
              "the generated history is valid",
            ).toEqual([]);
            const { messages, report } = prepareHistory(input, { archive: new MemoryArchive(), env: {}, config: roomy, format, assertValid: true });
            expect(report.changed).toBe(false);
            expect(JSON.stringify(adapter.toProvider(messages))).toBe(bytes);
            seen.byteRuns++;
            if (/"tool_result","tool_use_id":"[^"]+","content":"/.test(bytes) || /"type":"tool_result"[^}]*"content":"/.test(bytes)) seen.stringForm++;
            const ids = input.filter((m): m is ToolResultMessage => m.role === "tool").map((m) => m.toolCallId);
            const order: string[] = [];
            for (const m of input) if (m.role === "assistant") for (const p of m.content) if (p.type === "toolCall") order.push(p.id);
            if (ids.join() !== order.filter((id) => ids.includes(id)).join()) seen.outOfOrder++;
          },
        ),
        { numRuns: LONG ? 10_000 : 800 },
      );
      expect(seen.outOfOrder / seen.byteRuns, "share of histories with out-of-order parallel results").toBeGreaterThan(0.1);
      expect(seen.stringForm / seen.byteRuns, "share of histories with string-form results").toBeGreaterThan(0.1);
    },
    TIMEOUT,
  );

  it(
    "any history, damaged or not, reaches a fixed point in one pass: the second pass gives the same bytes",
    () => {
      const small = { maxResultChars: 4_000, turnBudgetChars: 14_000, microHeadChars: 600, microTailChars: 200, minContent: 1_500, summarizeMinChars: 500 };
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.integer({ min: 1, max: 8 }),
          fc.constantFrom(...FORMATS),
          fc.array(fc.tuple(fc.constantFrom(...DAMAGES), fc.nat(1000), fc.nat(100_000)), { maxLength: 5 }),
          fc.boolean(),
          (seed, turns, format, damages, tight) => {
            const adapter = adapters[format];
            let h: Message[] = validHistory(seed, turns, format);
            for (const [kind, a, b] of damages) h = damage(h, kind, a, b, seed);
            const archive = new MemoryArchive();
            // whole histories (an output without its call is damage, not a call the provider keeps)
            const options = { archive, env: {}, config: tight ? small : {}, format, assertValid: true, externalCalls: false };
            const first = prepareHistory(adapter.fromProvider(JSON.parse(JSON.stringify(adapter.toProvider(h))) as unknown[]), options);
            const bytes1 = JSON.stringify(adapter.toProvider(first.messages));
            const second = prepareHistory(adapter.fromProvider(JSON.parse(bytes1) as unknown[]), options);
            expect(second.report.changed).toBe(false);
            expect(JSON.stringify(adapter.toProvider(second.messages))).toBe(bytes1);
            seen.fixedRuns++;
            if (first.report.pairing.removedResults.length + first.report.pairing.syntheticResultsInjected + first.report.pairing.resultsRelocated > 0)
              seen.repaired++;
            if (first.report.microcompact.truncated + first.report.microcompact.summarized + first.report.budget.resultsTruncated > 0) seen.compacted++;
          },
        ),
        { numRuns: LONG ? 10_000 : 800 },
      );
      expect(seen.repaired / seen.fixedRuns).toBeGreaterThan(0.2);
      expect(seen.compacted / seen.fixedRuns).toBeGreaterThan(0.2);
    },
    TIMEOUT,
  );
});
