// Shapes real clients send that the provider accepts or that a repair must not make worse: results split
// across consecutive user messages (Claude Code), removals that would leave two assistant messages in a
// row, tool outputs answering calls kept server-side (OpenAI Responses), and AI SDK tool approvals.
import { describe, expect, it } from "vitest";
import { adapters, MemoryArchive, prepareHistory, validateForProvider, validateWire, type Format } from "../../src/context/index.js";

/** One pass of `spool compact` in `format`, with every provider rule asserted on the output. */
function compact(format: Format, wire: unknown[]) {
  const adapter = adapters[format];
  const archive = new MemoryArchive();
  const { messages, report } = prepareHistory(adapter.fromProvider(wire), { archive, format, assertValid: true });
  return { wire: adapter.toProvider(messages) as Record<string, unknown>[], report, archive, messages };
}

describe("Anthropic: results split across consecutive user messages (the Claude Code shape)", () => {
  const split = [
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "t1", name: "bash", input: {} },
        { type: "tool_use", id: "t2", name: "bash", input: {} },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "out t1" }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "out t2" }] },
    { role: "assistant", content: "done" },
  ];

  it("is judged as the API judges it (one user turn): no pairing problem, and it comes back byte-identical", () => {
    const problems = validateWire(split, "anthropic");
    expect(problems.filter((p) => p.rule !== "roles_alternate")).toEqual([]);
    const out = compact("anthropic", split);
    expect(out.report.changed).toBe(false);
    expect(JSON.stringify(out.wire)).toBe(JSON.stringify(split));
  });

  it("a result after other content of the combined turn still breaks results_first, and the repair puts the results first", () => {
    const wire = [split[0], split[1], { role: "user", content: [split[2]!.content[0], { type: "text", text: "note" }] }, split[3], split[4]];
    expect(validateWire(wire, "anthropic").map((p) => p.rule)).toContain("results_first");
    const out = compact("anthropic", wire);
    expect(out.wire[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t1", content: "out t1" },
        { type: "tool_result", tool_use_id: "t2", content: "out t2" },
        { type: "text", text: "note" },
      ],
    });
    expect(validateForProvider(out.messages, "anthropic")).toEqual([]);
  });

  it("a result in a user message after the next assistant message is still no answer", () => {
    const wire = [split[0], split[1], split[2], { role: "assistant", content: "hm" }, split[3]];
    const rules = validateWire(wire, "anthropic").map((p) => p.rule);
    expect(rules).toContain("call_answered_once");
    expect(rules).toContain("result_has_call");
  });
});
