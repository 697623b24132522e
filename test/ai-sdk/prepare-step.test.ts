// spool's prepareStep over AI SDK histories the SDK itself builds: the debug assertion (the test suite
// sets SPOOL_DEBUG_CONTEXT=1) checks them against the AI SDK's rules, not those of every provider.
import { join } from "node:path";
import type { ModelMessage } from "ai";
import { afterAll, afterEach, expect, it } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

const call = (id: string) => ({ type: "tool-call" as const, toolCallId: id, toolName: "bash", input: { command: "echo" } });
const result = (id: string) => ({ type: "tool-result" as const, toolCallId: id, toolName: "bash", output: { type: "text" as const, value: `out ${id}` } });

it("two calls of one assistant message answered by two role:tool messages pass the debug assertion unchanged", async () => {
  expect(process.env["SPOOL_DEBUG_CONTEXT"]).toBe("1");
  const spool = await createSpool({ root: join(tempDir("spool-ai-sdk-prep-"), ".spool") });
  cleanups.push(() => spool.close());
  const messages: ModelMessage[] = [
    { role: "user", content: "go" },
    { role: "assistant", content: [call("a"), call("b")] },
    { role: "tool", content: [result("a")] },
    { role: "tool", content: [result("b")] },
  ];
  expect(spool.prepareStep({ messages }).messages).toBe(messages);
});
