// createSpool's `session`: one conversation served over several requests (or process restarts) is one
// spool session. The second spool continues the first's session under the same root — its calls are
// recorded beside the earlier ones, the session keeps its first start, `spool sessions` lists one
// session — where a store passed in recorded nothing (calls without a command, the session still
// "succeeded" and ended while it ran again). Real provider package, scripted server, real processes.
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { isStepCount, streamText, type ModelMessage } from "ai";
import { afterAll, afterEach, expect, it } from "vitest";
import { createSpool, type Spool } from "../../dist/ai-sdk/index.js";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, toolResult, type ChatStep } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

/** One request of a chat server: the conversation so far plus the new user message, through spool. */
async function turn(spool: Spool, baseURL: string, messages: ModelMessage[]): Promise<ModelMessage[]> {
  const model = createOpenAICompatible({ name: "fake", baseURL, apiKey: "test-key" }).chatModel("fake-model");
  const result = streamText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(5), messages });
  for await (const part of result.fullStream) if (part.type === "error") throw part.error;
  return [...messages, ...(await result.responseMessages)];
}

interface Listed {
  id: string;
  status: string;
  startedAt: string;
}

it("createSpool({ session }) continues a session: its calls are recorded beside the earlier ones and it stays one finished session", async () => {
  const dir = tempDir("spool-ai-sdk-session-");
  const root = join(dir, ".spool");
  const spillIn = (text: string): string => /Full output: (\S+)\]/.exec(text)![1]!;
  const steps: ChatStep[] = [
    () => [{ name: "bash", args: { command: "seq 1 100000" } }],
    () => "counted",
    // The next request, in a later spool: the model reads the first call's spill, which is in the same session.
    (m) => [{ name: "read", args: { path: spillIn(toolResult(m, "call_0_0")), offset: 99_999 } }],
    (m) => (toolResult(m, "call_2_0").startsWith("99999\n100000\n") ? "read it" : "read failed"),
  ];
  const server = await startFakeOpenAI(steps);
  cleanups.push(() => server.close());

  const first = await createSpool({ root, cwd: dir });
  let history = await turn(first, server.baseURL, [{ role: "user", content: "count" }]);
  await first.close();
  const [before] = JSON.parse(runSpool(["sessions", "--root", root, "--json"], { cwd: dir }).stdout) as Listed[];

  const second = await createSpool({ root, cwd: dir, session: first.sessionId });
  cleanups.push(() => second.close());
  expect(second.sessionId).toBe(first.sessionId);
  expect(second.sessionDir).toBe(first.sessionDir);
  // Open in this process: a third writer on the same session is refused by the session's lock.
  await expect(createSpool({ root, session: first.sessionId })).rejects.toMatchObject({ code: "SPOOL_STORE_LOCKED" });
  history = await turn(second, server.baseURL, [...history, { role: "user", content: "show the end" }]);
  await second.close();

  expect(server.requests).toHaveLength(4);
  expect(history.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "read it" }] });
  const listed = JSON.parse(runSpool(["sessions", "--root", root, "--json"], { cwd: dir }).stdout) as Listed[];
  expect(listed).toMatchObject([{ id: first.sessionId, status: "succeeded", startedAt: before!.startedAt }]);
  const inspect = runSpool(["inspect", first.sessionId, "--root", root], { cwd: dir }).stdout;
  expect(inspect).toMatch(/call call-1 \(bash\): ok[^\n]*\n\s+\$ seq 1 100000 /);
  expect(inspect).toMatch(/call call-2 \(read\): ok[^\n]*\n\s+\$ read \{"path":"[^"]+\/spill\/call-1\.log","offset":99999\} /);
});

it("a bad session id, a session given with a store, or a session kept by the other backend is refused in one line", async () => {
  const root = join(tempDir("spool-ai-sdk-session-"), ".spool");
  const sqlite = await createSpool({ root, backend: "sqlite" });
  await sqlite.close();
  await expect(createSpool({ root, session: sqlite.sessionId })).rejects.toMatchObject({
    code: "SPOOL_AI_SDK_OPTION",
    message: `createSpool: session ${sqlite.sessionId} is stored in SQLite; pass backend: "sqlite" to continue it.`,
  });
  await expect(createSpool({ root, session: "../elsewhere" })).rejects.toMatchObject({
    code: "SPOOL_AI_SDK_OPTION",
    message: expect.stringMatching(/^createSpool: session must be a session id \(.*\), got "\.\.\/elsewhere"\.$/),
  });
  await expect(createSpool({ root, session: "abc", store: {} as never })).rejects.toMatchObject({
    code: "SPOOL_AI_SDK_OPTION",
    message: "createSpool: session cannot be given with store: a store passed in is the session; give one or the other.",
  });
});
