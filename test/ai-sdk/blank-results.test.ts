// A command that prints nothing, or only blank lines, through the real provider package: what the
// provider receives as its tool message is never empty or only whitespace (the Anthropic API refuses
// such a text block, Bedrock's Converse a blank text field), as over MCP: "(no output)", or the
// whitespace shown escaped. The final output's text is that same model-facing text.
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { isStepCount, streamText } from "ai";
import { afterAll, afterEach, expect, it } from "vitest";
import { createSpool, type SpoolToolOutput } from "../../dist/ai-sdk/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, toolResult } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

it("a silent command's result reaches the provider as '(no output)', a blank one as its escaped whitespace, never as empty text", async () => {
  const dir = tempDir("spool-blank-");
  const server = await startFakeOpenAI([
    () => [
      { name: "bash", args: { command: "true" } },
      { name: "bash", args: { command: "echo" } },
      { name: "bash", args: { command: "printf ' \\n\\t\\n'" } },
      { name: "bash", args: { command: "echo ok" } },
      { name: "bash", args: { command: "sleep 30 &" } },
    ],
    () => "done",
  ]);
  cleanups.push(() => server.close());
  const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir });
  cleanups.push(() => spool.close());
  const provider = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" });
  const result = streamText({
    model: provider.chatModel("fake-model"),
    tools: spool.tools,
    prepareStep: spool.prepareStep,
    stopWhen: isStepCount(5),
    prompt: "go",
  });
  const finals = new Map<string, string>();
  for await (const part of result.fullStream) {
    if (part.type === "error") throw part.error;
    if (part.type === "tool-result" && !part.preliminary) finals.set(part.toolCallId, (part.output as SpoolToolOutput).text);
  }
  const sent = server.requests[1]!.messages;
  expect(toolResult(sent, "call_0_0")).toBe("(no output)");
  expect(toolResult(sent, "call_0_1")).toBe('(only whitespace: "\\n")');
  expect(toolResult(sent, "call_0_2")).toBe('(only whitespace: " \\n\\t\\n")');
  expect(toolResult(sent, "call_0_3")).toBe("ok\n");
  // Only a note (what it left running was ended): the note, with no leading empty line.
  expect(toolResult(sent, "call_0_4")).toMatch(/^\[The command left processes running/);
  for (const id of ["call_0_0", "call_0_1", "call_0_2", "call_0_3", "call_0_4"]) expect(finals.get(id), id).toBe(toolResult(sent, id));
});
