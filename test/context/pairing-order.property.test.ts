// Pairing repair answers missing calls in call order, in every provider format: for random call lists
// and random subsets of results, the repaired wire has exactly one result per call, the real results
// byte for byte as they came and in the order they came, each synthetic one before the first real
// result of a later call (so results given in call order come back wholly in call order), the
// envelope's own fields kept, and a second repair changes nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { adapters, ensureToolResultPairing, FORMATS, hasRepairs, SYNTHETIC_RESULT_TEXT, type Format } from "../../src/context/index.js";

type Json = Record<string, unknown>;

interface Case {
  readonly format: Format;
  /** Call ids of the one assistant message, in call order. */
  readonly calls: readonly string[];
  /** The calls that have a real result, in the order the results are written. */
  readonly answered: readonly string[];
  /** The results' envelope carries a field of its own (Anthropic: an unknown key; AI SDK: providerOptions). */
  readonly envelopeExtra: boolean;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    format: fc.constantFrom<Format>(...FORMATS),
    n: fc.integer({ min: 1, max: 7 }),
    keep: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
    shuffle: fc.boolean(),
    order: fc.array(fc.nat(1000), { minLength: 7, maxLength: 7 }),
    envelopeExtra: fc.boolean(),
  })
  .map(({ format, n, keep, shuffle, order, envelopeExtra }) => {
    const calls = Array.from({ length: n }, (_, i) => `call_${i}`);
    let answered = calls.filter((_, i) => keep[i]);
    // Parallel results are written in the order they finish: half the cases are not in call order.
    if (shuffle) answered = [...answered].sort((a, b) => order[calls.indexOf(a)]! - order[calls.indexOf(b)]! || a.localeCompare(b));
    return { format, calls, answered, envelopeExtra };
  });

const output = (id: string) => `output of ${id}`;

/** The wire history: a user turn, one assistant message with the calls, the real results, the user's next text. */
function wire({ format, calls, answered, envelopeExtra }: Case): Json[] {
  const user = (text: string): Json => ({ role: "user", content: text });
  switch (format) {
    case "openai-chat":
      return [
        user("go"),
        { role: "assistant", content: null, tool_calls: calls.map((id) => ({ id, type: "function", function: { name: "bash", arguments: `{"n":"${id}"}` } })) },
        ...answered.map((id) => ({ role: "tool", tool_call_id: id, content: output(id) })),
        user("next"),
      ];
    case "openai-responses":
      return [
        user("go"),
        ...calls.map((id) => ({ type: "function_call", call_id: id, name: "bash", arguments: `{"n":"${id}"}` })),
        ...answered.map((id) => ({ type: "function_call_output", call_id: id, output: output(id) })),
        user("next"),
      ];
    case "anthropic":
      return [
        user("go"),
        { role: "assistant", content: calls.map((id) => ({ type: "tool_use", id, name: "bash", input: { n: id } })) },
        {
          role: "user",
          ...(envelopeExtra ? { x_envelope: { kept: true } } : {}),
          content: [...answered.map((id) => ({ type: "tool_result", tool_use_id: id, content: output(id) })), { type: "text", text: "next" }],
        },
      ];
    case "ai-sdk":
      return [
        user("go"),
        { role: "assistant", content: calls.map((id) => ({ type: "tool-call", toolCallId: id, toolName: "bash", input: { n: id } })) },
        ...(answered.length === 0
          ? []
          : [
              {
                role: "tool",
                content: answered.map((id) => ({ type: "tool-result", toolCallId: id, toolName: "bash", output: { type: "text", value: output(id) } })),
                ...(envelopeExtra ? { providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } } : {}),
              },
            ]),
        user("next"),
      ];
  }
}

/** Every result in the wire, in order: its call id and its JSON as sent. */
function results(format: Format, items: readonly Json[]): { id: string; json: string }[] {
  const out: { id: string; json: string }[] = [];
  for (const item of items) {
    if (format === "openai-chat" && item["role"] === "tool") out.push({ id: item["tool_call_id"] as string, json: JSON.stringify(item) });
    if (format === "openai-responses" && item["type"] === "function_call_output") out.push({ id: item["call_id"] as string, json: JSON.stringify(item) });
    if ((format === "anthropic" || format === "ai-sdk") && Array.isArray(item["content"])) {
      for (const part of item["content"] as Json[]) {
        if (part["type"] === "tool_result") out.push({ id: part["tool_use_id"] as string, json: JSON.stringify(part) });
        if (part["type"] === "tool-result") out.push({ id: part["toolCallId"] as string, json: JSON.stringify(part) });
      }
    }
  }
  return out;
}

function repair(format: Format, items: readonly Json[]): { items: Json[]; repaired: boolean } {
  const adapter = adapters[format];
  const { messages, report } = ensureToolResultPairing(adapter.fromProvider(items));
  return { items: adapter.toProvider(messages), repaired: hasRepairs(report) };
}

describe("pairing repair keeps call order", () => {
  it("one result per call; real results unchanged and in their order; synthetic ones at their calls' places; idempotent", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const input = wire(c);
        const before = new Map(results(c.format, input).map((r) => [r.id, r.json]));
        const once = repair(c.format, input);
        expect(once.repaired).toBe(c.answered.length < c.calls.length);
        const after = results(c.format, once.items);
        const ids = after.map((r) => r.id);
        // exactly one result per call
        expect([...ids].sort()).toEqual([...c.calls].sort());
        // the real ones byte for byte, in the order they were written
        expect(after.filter((r) => before.has(r.id)).map((r) => r.json)).toEqual(c.answered.map((id) => before.get(id)));
        for (const r of after) if (!before.has(r.id)) expect(r.json).toContain(SYNTHETIC_RESULT_TEXT.slice(1, 40));
        // synthetic results in call order, each before the next real result when that one answers a later call
        const at = (id: string) => c.calls.indexOf(id);
        const synthetic = ids.filter((id) => !before.has(id));
        expect(synthetic).toEqual([...synthetic].sort((a, b) => at(a) - at(b)));
        ids.forEach((id, n) => {
          const next = ids.slice(n + 1).find((x) => before.has(x));
          if (!before.has(id) && next !== undefined) expect(at(next)).toBeGreaterThan(at(id));
        });
        // results written in call order come back wholly in call order
        if (c.answered.every((id, n) => n === 0 || at(c.answered[n - 1]!) < at(id))) expect(ids).toEqual(c.calls);
        // the envelope's own fields survive a synthetic result opening it
        const text = JSON.stringify(once.items);
        if (c.envelopeExtra && c.format === "anthropic") expect(text).toContain('"x_envelope":{"kept":true}');
        if (c.envelopeExtra && c.format === "ai-sdk" && c.answered.length > 0) expect(text).toContain('"providerOptions"');
        expect(adapters[c.format].check(once.items)).toEqual([]);
        // a second repair changes nothing
        const twice = repair(c.format, once.items);
        expect(twice.repaired).toBe(false);
        expect(twice.items).toEqual(once.items);
      }),
      { numRuns: 600 },
    );
  });

  it("calls A, B, C with only B answered: A (synthetic), B, C (synthetic), in every format", () => {
    for (const format of FORMATS) {
      const out = repair(format, wire({ format, calls: ["A", "B", "C"], answered: ["B"], envelopeExtra: false }));
      expect(results(format, out.items).map((r) => r.id)).toEqual(["A", "B", "C"]);
    }
  });
});
