// How a createSpool session ends when the run around it did not succeed. spool sees tool calls, not
// model calls, so a generateText that threw on a provider's HTTP 500 after a tool step, or on its
// abort signal, left a session "succeeded" in `spool sessions` and `spool inspect`. close({ error })
// records it as failed, interrupted (an abort) or timed out (the SDK's `timeout`). Real provider
// package against the scripted server, real processes, the built CLI reading the session back.
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, streamText } from "ai";
import { afterAll, afterEach, expect, it } from "vitest";
import { createSpool, type Spool } from "../../dist/ai-sdk/index.js";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, type ChatStep } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

/** A spool and a model on a scripted server; the server answers 500 once the script runs out. */
async function setup(steps: ChatStep[]) {
  const dir = tempDir("spool-ai-sdk-outcome-");
  const root = join(dir, ".spool");
  const server = await startFakeOpenAI(steps);
  cleanups.push(() => server.close());
  const spool = await createSpool({ root, cwd: dir });
  cleanups.push(() => spool.close());
  const model = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" }).chatModel("fake-model");
  /** The session's status as `spool sessions --json` lists it, and `spool inspect`'s first line. */
  const recorded = (s: Spool) => {
    const [listed] = JSON.parse(runSpool(["sessions", "--root", root, "--json"], { cwd: dir }).stdout) as { id: string; status: string }[];
    const inspect = runSpool(["inspect", s.sessionId, "--root", root], { cwd: dir }).stdout;
    return { status: listed!.status, inspect };
  };
  return { spool, model, recorded };
}

it("generateText that throws on a provider's HTTP 500 after a tool step: close({ error }) records the session as failed", async () => {
  const { spool, model, recorded } = await setup([() => [{ name: "bash", args: { command: "echo built" } }]]);
  const error = await generateText({
    model,
    tools: spool.tools,
    prepareStep: spool.prepareStep,
    stopWhen: isStepCount(5),
    prompt: "build",
    maxRetries: 0,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toMatchObject({ name: "AI_APICallError", statusCode: 500 });
  await spool.close({ error });
  const { status, inspect } = recorded(spool);
  expect(status).toBe("failed");
  expect(inspect).toMatch(/^Session \S+ \(jsonl\) — failed\n/);
  // The tool call itself succeeded, and is recorded so.
  expect(inspect).toMatch(/call call-1 \(bash\): ok/);
});

it("generateText aborted while a command runs: close({ error }) records the session as interrupted, the command's call too", async () => {
  const { spool, model, recorded } = await setup([() => [{ name: "bash", args: { command: "sleep 30" } }]]);
  const abort = new AbortController();
  const started = Date.now();
  setTimeout(() => abort.abort(), 1000);
  const error = await generateText({
    model,
    tools: spool.tools,
    prepareStep: spool.prepareStep,
    stopWhen: isStepCount(5),
    prompt: "wait",
    abortSignal: abort.signal,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toMatchObject({ name: "AbortError" });
  expect(Date.now() - started).toBeLessThan(10_000);
  await spool.close({ error });
  const { status, inspect } = recorded(spool);
  expect(status).toBe("interrupted");
  expect(inspect).toMatch(/call call-1 \(bash\): error \(interrupted\)/);
});

it("generateText past its `timeout`: the session is recorded as timed out; an Error handed to close itself counts too (.catch(spool.close))", async () => {
  const { spool, model, recorded } = await setup([() => [{ name: "bash", args: { command: "sleep 30" } }]]);
  await generateText({ model, tools: spool.tools, stopWhen: isStepCount(5), prompt: "wait", timeout: 1000 }).catch(spool.close);
  expect(recorded(spool).status).toBe("timed out");
});

it("streamText: the error its onError saw, given to close, records the session as failed, onAbort's reason as interrupted; what .then passes is no error", async () => {
  const { spool, model, recorded } = await setup([() => [{ name: "bash", args: { command: "echo built" } }]]);
  let error: unknown;
  const result = streamText({
    model,
    tools: spool.tools,
    prepareStep: spool.prepareStep,
    stopWhen: isStepCount(5),
    prompt: "build",
    maxRetries: 0,
    onError: ({ error: e }) => void (error = e),
  });
  for await (const part of result.fullStream) void part;
  expect(error).toMatchObject({ statusCode: 500 });
  await spool.close({ error });
  expect(recorded(spool).status).toBe("failed");

  // The README's pattern for streamText: onAbort's reason, given to close, records an interruption.
  const aborted = await setup([() => [{ name: "bash", args: { command: "sleep 30" } }]]);
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 1000);
  let reason: unknown;
  const run = streamText({
    model: aborted.model,
    tools: aborted.spool.tools,
    stopWhen: isStepCount(5),
    prompt: "wait",
    abortSignal: abort.signal,
    onAbort: (e) => void (reason = e.reason),
  });
  for await (const part of run.fullStream) void part;
  await aborted.spool.close({ error: reason });
  expect(aborted.recorded(aborted.spool).status).toBe("interrupted");

  const ok = await setup([() => "done"]);
  await generateText({ model: ok.model, tools: ok.spool.tools, prompt: "hi" }).then(ok.spool.close as (result: unknown) => Promise<void>); // as JavaScript may write it
  expect(ok.recorded(ok.spool).status).toBe("succeeded");
});
