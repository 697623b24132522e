// Old tool-call inputs: long strings become recall stubs in place, once the call is as old as a
// truncated result; the input keeps its keys, the call its id, and the history stays paired.
import { describe, expect, it } from "vitest";
import {
  applyMicrocompact,
  assistant,
  contextConfigFromEnv,
  extractKeys,
  fromAISDK,
  fromOpenAIChat,
  MemoryArchive,
  prepareHistory,
  recall,
  toAISDK,
  toOpenAIChat,
  toolResult,
  userText,
  validateForProvider,
  type AssistantMessage,
  type Message,
  type ToolCallPart,
} from "../../src/context/index.js";
import { lines } from "./helpers.js";

const HEREDOC = `cat > src/app.py <<'EOF'\n${lines(20_000)}EOF`;

/** [user, assistant(call with `input`), result, then `age` × (user, assistant)]. */
function fixture(input: unknown, age: number, name = "bash"): Message[] {
  const h: Message[] = [userText("go"), assistant("", [{ id: "c1", name, input }]), toolResult("c1", "ok", { toolName: name })];
  for (let i = 0; i < age; i++) h.push(userText("next"), assistant("ok"));
  return h;
}
const callOf = (m: Message): ToolCallPart => (m as AssistantMessage).content.find((p) => p.type === "toolCall") as ToolCallPart;

describe("old tool-call inputs", () => {
  it("a 2-turn-old bash heredoc becomes a stub with its first line and a marker that recalls it exactly; younger calls stay", () => {
    const archive = new MemoryArchive();
    const input = { command: HEREDOC, timeout: 30 };
    expect(applyMicrocompact(fixture(input, 1), { archive }).report.inputsCleared).toBe(0);
    const { messages, report } = applyMicrocompact(fixture(input, 2), { archive });
    expect(report.inputsCleared).toBe(1);
    const call = callOf(messages[1]!);
    expect(call.id).toBe("c1");
    expect(call.name).toBe("bash");
    expect(Object.keys(call.input as object)).toEqual(["command", "timeout"]);
    const stub = (call.input as { command: string }).command;
    expect(stub).toMatch(
      /^\[Old tool input cleared — \d+ chars, \d+ lines, first line "cat > src\/app.py <<'EOF'"; recall <<ccr:[0-9a-f]{16}>> for all of it\]$/,
    );
    expect((call.input as { timeout: number }).timeout).toBe(30);
    expect(recall(stub, archive).text).toBe(HEREDOC);
    expect(report.keysArchived).toEqual(extractKeys(stub));
    expect(report.charsSaved).toBe(HEREDOC.length - stub.length);
    // the caller's input object is not mutated, and a second pass is a fixed point
    expect(input.command).toBe(HEREDOC);
    expect(applyMicrocompact(messages, { archive }).messages).toBe(messages);
  });

  it("a one-line input (a minified file in a write) says '1 line' (it read '1 lines')", () => {
    const content = `{"data":[${Array.from({ length: 3_000 }, (_, i) => i).join(",")}]}`;
    const { messages } = applyMicrocompact(fixture({ path: "data.json", content }, 2, "write"), { archive: new MemoryArchive() });
    const stub = (callOf(messages[1]!).input as { content: string }).content;
    expect(stub).toMatch(/^\[Old tool input cleared — \d+ chars, 1 line, first line "\{\\"data\\":\[0,1,2,/);
  });

  it("nested strings (a multi-edit's edits) are stubbed in place; short strings, numbers and strings under the limit stay", () => {
    const archive = new MemoryArchive();
    const input = {
      path: "a.ts",
      edits: [
        { old_string: lines(9_000, 2), new_string: lines(9_000, 3) },
        { old_string: "x", new_string: "y" },
      ],
    };
    const { messages, report } = applyMicrocompact(fixture(input, 3, "multi_edit"), { archive });
    expect(report.inputsCleared).toBe(2);
    const out = callOf(messages[1]!).input as typeof input;
    expect(out.path).toBe("a.ts");
    expect(out.edits[1]).toBe(input.edits[1]);
    expect(recall(out.edits[0]!.old_string, archive).text).toBe(input.edits[0]!.old_string);
    expect(recall(out.edits[0]!.new_string, archive).text).toBe(input.edits[0]!.new_string);
    const small = { content: lines(7_000) };
    expect(applyMicrocompact(fixture(small, 5, "write"), { archive }).report.inputsCleared).toBe(0);
    expect(applyMicrocompact(fixture(small, 5, "write"), { archive, inputMaxChars: 5_000 }).report.inputsCleared).toBe(1);
  });

  it("a call waiting for approval, a string input and an unparsed one are never touched", () => {
    const archive = new MemoryArchive();
    const waiting = fixture({ command: HEREDOC }, 3);
    (waiting[1] as unknown as { content: ToolCallPart[] }).content[0] = { ...callOf(waiting[1]!), approvalRequested: true };
    const freeform = fixture(HEREDOC, 3, "apply_patch");
    const unparsed = fixture(undefined, 3);
    (unparsed[1] as unknown as { content: ToolCallPart[] }).content[0] = { ...callOf(unparsed[1]!), rawInput: `{"command": ${JSON.stringify(HEREDOC)}` };
    for (const h of [waiting, freeform, unparsed]) expect(applyMicrocompact(h, { archive }).messages[1]).toBe(h[1]);
  });

  it("a call whose provider spelling was kept (rawInput) goes out as the stubbed object", () => {
    const archive = new MemoryArchive();
    // spaces after the colons: the parsed object does not re-serialise to these bytes
    const args = `{"command": ${JSON.stringify(HEREDOC)}, "timeout": 30}`;
    const wire = [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: args } }] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "user", content: "next" },
      { role: "assistant", content: "ok" },
      { role: "user", content: "next" },
      { role: "assistant", content: "ok" },
    ];
    const neutral = fromOpenAIChat(wire);
    expect(callOf(neutral[1]!).rawInput).toBe(args);
    const { messages } = prepareHistory(neutral, { archive, format: "openai-chat" });
    const sent = toOpenAIChat(messages) as { tool_calls?: { function: { arguments: string } }[] }[];
    const parsed = JSON.parse(sent[1]!.tool_calls![0]!.function.arguments) as { command: string; timeout: number };
    expect(parsed.timeout).toBe(30);
    expect(recall(parsed.command, archive).text).toBe(HEREDOC);
  });

  it("through prepareHistory in the AI SDK shape: valid in every format, smaller, and a fixed point", () => {
    const archive = new MemoryArchive();
    const history: Message[] = [userText("build it")];
    for (let i = 0; i < 6; i++) {
      history.push(assistant("", [{ id: `w${i}`, name: "process_write", input: { id: "p1", data: lines(30_000, i) } }]));
      history.push(toolResult(`w${i}`, "written", { toolName: "process_write" }));
    }
    const wire = toAISDK(history);
    const { messages, report } = prepareHistory(fromAISDK(wire), { archive, format: "ai-sdk", assertValid: true });
    expect(report.microcompact.inputsCleared).toBe(4);
    for (const f of ["anthropic", "openai-chat", "openai-responses", "ai-sdk"] as const) expect(validateForProvider(messages, f)).toEqual([]);
    expect(JSON.stringify(toAISDK(messages)).length).toBeLessThan(JSON.stringify(wire).length / 2);
    expect(prepareHistory(messages, { archive, format: "ai-sdk" }).messages).toBe(messages);
  });

  it("SPOOL_MICROCOMPACT_INPUT_MAX_CHARS sets the limit", () => {
    expect(contextConfigFromEnv({}).inputMaxChars).toBe(8_000);
    expect(contextConfigFromEnv({ SPOOL_MICROCOMPACT_INPUT_MAX_CHARS: "2000" }).inputMaxChars).toBe(2_000);
    expect(() => contextConfigFromEnv({ SPOOL_MICROCOMPACT_INPUT_MAX_CHARS: "big" })).toThrow(/SPOOL_MICROCOMPACT_INPUT_MAX_CHARS/);
  });
});
