// How a createSpool session ends when the run around it did not succeed. spool sees tool calls, not
// model calls, so a generateText that threw on a provider's HTTP 500 after a tool step, or on its
// abort signal, left a session "succeeded" in `spool sessions` and `spool inspect`. close({ error })
// records it as failed, interrupted (an abort) or timed out (the SDK's `timeout`), with the error's
// text as its reason; a one-step generateText whose abort cut a tool call returns normally, and close()
// without an error records that as interrupted too. Real provider
// package against the scripted server, real processes, the built CLI reading the session back.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, streamText } from "ai";
import { afterAll, afterEach, expect, it } from "vitest";
import { createSpool, type Spool } from "../../dist/ai-sdk/index.js";
import { SESSION_RECORD } from "../../dist/harness/index.js";
import { openSessionRepo, sessionsDir, setValue } from "../../dist/store/index.js";
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
  /** The session's status and reason as `spool sessions --json` lists them, `spool inspect`'s text, and its --json's reason. */
  const recorded = (s: Spool) => {
    const [listed] = JSON.parse(runSpool(["sessions", "--root", root, "--json"], { cwd: dir }).stdout) as { id: string; status: string; reason?: string }[];
    const inspect = runSpool(["inspect", s.sessionId, "--root", root], { cwd: dir }).stdout;
    const inspectJson = JSON.parse(runSpool(["inspect", s.sessionId, "--root", root, "--json"], { cwd: dir }).stdout) as { reason?: string };
    return {
      status: listed!.status,
      reason: listed!.reason,
      inspect,
      inspectReason: inspectJson.reason,
      hasReason: "reason" in listed! || "reason" in inspectJson,
    };
  };
  return { spool, model, recorded, root, server };
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
  const { status, reason, inspect, inspectReason } = recorded(spool);
  expect(status).toBe("failed");
  expect(inspect).toMatch(/^Session \S+ \(jsonl\) — failed\n/);
  // Why, from the error: its name, the HTTP status, the message of the provider's error body.
  expect(reason).toBe("AI_APICallError (HTTP 500): script has 1 steps");
  expect(inspectReason).toBe(reason);
  expect(inspect).toMatch(/^Session \S+ \(jsonl\) — failed\n  reason:    AI_APICallError \(HTTP 500\): script has 1 steps\n/);
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
  const { status, inspect, reason } = recorded(spool);
  expect(status).toBe("interrupted");
  expect(reason).toBe("AbortError: This operation was aborted");
  expect(inspect).toMatch(/call call-1 \(bash\): error \(interrupted\)/);
});

it("generateText past its `timeout`: the session is recorded as timed out; an Error handed to close itself counts too (.catch(spool.close))", async () => {
  const { spool, model, recorded } = await setup([() => [{ name: "bash", args: { command: "sleep 30" } }]]);
  await generateText({ model, tools: spool.tools, stopWhen: isStepCount(5), prompt: "wait", timeout: 1000 }).catch(spool.close);
  expect(recorded(spool)).toMatchObject({ status: "timed out", reason: expect.stringMatching(/^TimeoutError: /) });
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

  expect(aborted.recorded(aborted.spool).reason).toBe("AbortError: This operation was aborted");

  const ok = await setup([() => "done"]);
  await generateText({ model: ok.model, tools: ok.spool.tools, prompt: "hi" }).then(ok.spool.close as (result: unknown) => Promise<void>); // as JavaScript may write it
  // No error, no reason: the listing and inspect's --json have no `reason` key, as before.
  expect(ok.recorded(ok.spool)).toMatchObject({ status: "succeeded", hasReason: false });
  expect(ok.recorded(ok.spool).inspect).not.toContain("reason:");
});

it("a provider's error body of many lines, terminal escapes and 2,000 chars: the reason is one line of at most 300 chars, every control character shown as an escape", async () => {
  const body = `upstream failed:\n\t\x1b[31mquota\x1b[0m exceeded\r\n\u202eevil${"x".repeat(2000)}`;
  const { spool, model, recorded } = await setup([
    () => {
      throw new Error(body);
    },
  ]);
  const error = await generateText({ model, tools: spool.tools, prompt: "build", maxRetries: 0 }).catch((e: unknown) => e);
  expect(error).toMatchObject({ statusCode: 500, message: body });
  await spool.close({ error });
  const { status, reason, inspect, inspectReason } = recorded(spool);
  expect(status).toBe("failed");
  const shown = "AI_APICallError (HTTP 500): upstream failed: \\x1b[31mquota\\x1b[0m exceeded \\u202eevil";
  expect(reason).toBe(`${shown}${"x".repeat(299 - shown.length)}…`);
  expect(reason).toHaveLength(300);
  expect(inspectReason).toBe(reason);
  expect(inspect.split("\n")[1]).toBe(`  reason:    ${reason}`);
  expect(inspect).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
});

it("a reason another program wrote raw into the session record is shown cleaned; a record without one reads as before", async () => {
  const { spool, recorded, root } = await setup([]);
  await spool.close({ error: new Error("first") });
  const store = await openSessionRepo(sessionsDir(root), { backend: "jsonl" }).open(spool.sessionId);
  await store.commit([setValue(SESSION_RECORD, { ...store.get(SESSION_RECORD)!, reason: "bad\n\x1b[2Jcleared\x07" })]);
  await store.close();
  const { reason, inspect } = recorded(spool);
  expect(reason).toBe("bad \\x1b[2Jcleared\\x07");
  expect(inspect).toContain("  reason:    bad \\x1b[2Jcleared\\x07\n");
});

it("one-step generateText aborted while its command runs returns normally; close() without an error records the session as interrupted, naming the call", async () => {
  const { spool, model, recorded } = await setup([() => [{ name: "bash", args: { command: "sleep 30" } }]]);
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 1000);
  const started = Date.now();
  // The AI SDK's default stopWhen is one step: the tool's result ends the run, and nothing is thrown.
  const result = await generateText({ model, tools: spool.tools, prompt: "wait", abortSignal: abort.signal, maxRetries: 0 });
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(result.toolResults).toMatchObject([{ toolName: "bash", output: { aborted: true, status: "failed" } }]);
  await spool.close();
  const { status, reason, inspect } = recorded(spool);
  expect(status).toBe("interrupted");
  expect(reason).toBe("the run's abortSignal ended call call-1 (bash); close() was given no error");
  expect(inspect).toMatch(/^Session \S+ \(jsonl\) — interrupted\n/);
  expect(inspect).toMatch(/call call-1 \(bash\): error \(interrupted\)/);
});

it("a signal aborted after its run's tool call ended: close() without an error records the session as succeeded", async () => {
  const { spool, model, recorded } = await setup([() => [{ name: "bash", args: { command: "echo built" } }]]);
  const abort = new AbortController();
  const result = await generateText({ model, tools: spool.tools, prompt: "build", abortSignal: abort.signal, maxRetries: 0 });
  expect(result.toolResults).toMatchObject([{ toolName: "bash", output: { status: "done", exitCode: 0 } }]);
  abort.abort();
  await spool.close();
  expect(recorded(spool)).toMatchObject({ status: "succeeded", hasReason: false });
});

it("the SDK's per-tool timeout (timeout.toolMs) ends a command as timed out, not aborted: the model reads that it timed out, the call is recorded timed out, and the run that went on is recorded as succeeded", async () => {
  const { spool, model, recorded, server } = await setup([
    () => [
      { name: "bash", args: { command: "echo started; sleep 30" } },
      { name: "bash", args: { command: "echo quick" } },
    ],
    () => "done",
  ]);
  const started = Date.now();
  const result = await generateText({ model, tools: spool.tools, prompt: "wait", stopWhen: isStepCount(3), timeout: { toolMs: 1000 }, maxRetries: 0 });
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(result.text).toBe("done");
  const sent = server.requests[1]!.messages.find((m) => m.tool_call_id === "call_0_0")!.content as string;
  expect(sent).toMatch(/^started\nCommand timed out after 1(\.\d+)?s; its process group was killed$/);
  expect(result.steps[0]!.toolResults[0]).toMatchObject({ output: { timedOut: true, status: "failed" } });
  await spool.close();
  const { status, hasReason, inspect } = recorded(spool);
  expect(inspect).toMatch(/call call-1 \(bash\): error \(timed out\)/);
  expect(status).toBe("succeeded");
  expect(hasReason).toBe(false);
});

it("a call whose run's signal fired before it started runs nothing: a command does not run, its result says so, the session is interrupted", async () => {
  const { spool, model, recorded, root } = await setup([
    () => [
      { name: "bash", args: { command: "echo ran > ran.txt" } },
      { name: "process_list", args: {} },
    ],
  ]);
  const abort = new AbortController();
  // The SDK still calls the tools after this: the signal fired as their calls were set up.
  const result = await generateText({
    model,
    tools: spool.tools,
    prompt: "go",
    abortSignal: abort.signal,
    onToolExecutionStart: () => abort.abort(),
    maxRetries: 0,
  });
  const texts = result.toolResults.map((r) => (r.output as { text: string }).text);
  expect(texts).toEqual(["[aborted] The call was cancelled before it started; nothing ran."].flatMap((t) => [t, t]));
  await new Promise((r) => setTimeout(r, 300));
  expect(existsSync(join(root, "..", "ran.txt"))).toBe(false);
  await spool.close();
  const { status, inspect } = recorded(spool);
  expect(status).toBe("interrupted");
  expect(inspect).toMatch(/call call-1 \(bash\): error \(interrupted\)/);
});
