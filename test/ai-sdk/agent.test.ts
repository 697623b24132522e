// spool/ai-sdk under the AI SDK's own loop: generateText and streamText with the SDK's mock model,
// scripted over 13 steps (a 2 MB build log, reads of its spill, a failing command, parallel calls, a
// test run, recalls of results compacted turns earlier). Every prompt the model receives is checked.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { generateText, isStepCount, streamText } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSpool, type Spool } from "../../dist/ai-sdk/index.js";
import { readTranscript, SESSION_RECORD } from "../../dist/harness/index.js";
import { createWorkspace } from "../../dist/context/index.js";
import { createMemoryStore, readJsonlSnapshot, setValue, value } from "../../dist/store/index.js";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";
import { scriptedModel } from "./mock-model.js";
import { agentScript, pairingProblems, promptResults, type Prompt } from "./script.js";

const MAX_RESULT = 20_000;
const TURN_BUDGET = 200_000;
// A budget preview is the head + tail kept plus a header naming the key and how to read the rest.
const PREVIEW_SLACK = 1_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

async function setup(): Promise<{ dir: string; spool: Spool }> {
  const dir = tempDir("spool-ai-sdk-");
  const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir, context: { maxResultChars: MAX_RESULT, turnBudgetChars: TURN_BUDGET } });
  cleanups.push(() => spool.close());
  return { dir, spool };
}

function resultIn(prompt: Prompt, id: string): string {
  const r = promptResults(prompt).find((x) => x.toolCallId === id);
  if (!r) throw new Error(`no ${id} in the prompt`);
  return r.text;
}

/** What every scripted run must show, whichever loop (generate or stream) ran it. */
function checkPrompts(prompts: Prompt[], originals: Map<string, string>): void {
  expect(prompts).toHaveLength(13);
  prompts.forEach((prompt, step) => {
    expect(pairingProblems(prompt), `step ${step}`).toEqual([]);
    for (const r of promptResults(prompt)) {
      const cap = r.toolName === "recall" ? TURN_BUDGET : MAX_RESULT;
      expect(r.text.length, `step ${step} ${r.toolCallId}`).toBeLessThanOrEqual(cap + PREVIEW_SLACK);
    }
  });
  // The 2 MB build: bounded by the tool (≈ 50 KB tail + footer), then cut by the result budget to a
  // preview with a recall key from the first prompt that carries it.
  expect(originals.get("s0-0")!.length).toBeGreaterThan(MAX_RESULT);
  expect(originals.get("s0-0")!.length).toBeLessThan(52_000);
  expect(resultIn(prompts[1]!, "s0-0")).toMatch(/<<ccr:[0-9a-f]{16}>>/);
  // The failing command arrives as an error result with its output.
  const failing = promptResults(prompts[3]!).find((r) => r.toolCallId === "s2-0")!;
  expect(failing.isError).toBe(true);
  expect(failing.text).toContain("AssertionError: expected 1 to be 2");
  // Parallel calls: three results for the three calls of step 3, in the next prompt.
  expect(promptResults(prompts[4]!).filter((r) => r.toolCallId.startsWith("s3-"))).toHaveLength(3);
  // The first read arrives whole, then ages into a compacted stub with a key.
  const read = originals.get("s1-0")!;
  expect(resultIn(prompts[2]!, "s1-0")).toBe(read);
  for (const step of [6, 8, 10]) {
    const later = resultIn(prompts[step]!, "s1-0");
    expect(later.length).toBeLessThan(read.length / 2);
    expect(later).toMatch(/<<ccr:[0-9a-f]{16}>>/);
  }
  // Recalled several turns later: byte-identical to what the tools returned.
  expect(resultIn(prompts[11]!, "s10-0")).toBe(read);
  expect(resultIn(prompts[12]!, "s11-0")).toBe(originals.get("s0-0"));
}

describe("createSpool with the AI SDK", () => {
  it("generateText over 13 scripted steps: valid pairing, results within budgets, old results compacted, recalls byte-identical", async () => {
    const { dir, spool } = await setup();
    const { model, prompts } = scriptedModel(agentScript(dir));
    const result = await generateText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(20), prompt: "Fix the build." });
    expect(result.text).toContain("parser test fails");
    const originals = new Map<string, string>();
    for (const step of result.steps) for (const r of step.toolResults) originals.set(r.toolCallId, (r.output as { text: string }).text);
    checkPrompts(prompts, originals);
    // The tool's own output: the build's tail with the footer naming the spill file, byte-identical on disk.
    const build = result.steps[0]!.toolResults[0]!.output as { text: string; spillPath: string; totalBytes: number };
    expect(build.text).toMatch(/Build finished: 0 errors/);
    expect(build.text).toContain(`Full output: ${build.spillPath}`);
    expect(build.totalBytes).toBeGreaterThan(2 * 1024 * 1024);
    expect(execFileSync("wc", ["-c", build.spillPath], { encoding: "utf8" })).toContain(String(build.totalBytes));

    // The session holds every call, and close() settles it as finished for `spool sessions`.
    await spool.close();
    const snap = readJsonlSnapshot(join(spool.sessionDir, "session.jsonl"));
    expect(readTranscript(snap)).toHaveLength(14);
    expect(snap.get(SESSION_RECORD)).toMatchObject({ command: "ai-sdk", status: "succeeded" });
    const listed = JSON.parse(runSpool(["sessions", "--root", join(dir, ".spool"), "--json"], { cwd: dir }).stdout) as {
      id: string;
      status: string;
    }[];
    expect(listed).toMatchObject([{ id: spool.sessionId, status: "succeeded" }]);
  });

  it("streamText: bash streams growing preliminary results; the prompts hold the same guarantees", async () => {
    const { dir, spool } = await setup();
    const { model, prompts } = scriptedModel(agentScript(dir));
    const stream = streamText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(20), prompt: "Fix the build." });
    const preliminary: { id: string; bytes: number; status: string }[] = [];
    const originals = new Map<string, string>();
    for await (const part of stream.fullStream) {
      if (part.type !== "tool-result") continue;
      const out = part.output as { text: string; status: string; totalBytes: number };
      if (part.preliminary) preliminary.push({ id: part.toolCallId, bytes: out.totalBytes, status: out.status });
      else originals.set(part.toolCallId, out.text);
    }
    expect(await stream.text).toContain("parser test fails");
    checkPrompts(prompts, originals);
    // The SDK also emits the last yielded value (the final output) as a preliminary result.
    const build = preliminary.filter((p) => p.id === "s0-0" && p.status === "running");
    expect(build.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < build.length; i++) expect(build[i]!.bytes).toBeGreaterThanOrEqual(build[i - 1]!.bytes);
    expect(build.at(-1)!.bytes).toBeGreaterThan(build[0]!.bytes);
  });

  it("prepareStep is deterministic: the same messages give the same prepared messages", async () => {
    const { dir, spool } = await setup();
    const { model } = scriptedModel(agentScript(dir));
    const result = await generateText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(20), prompt: "Fix the build." });
    const messages = [{ role: "user" as const, content: "Fix the build." }, ...result.responseMessages];
    const a = spool.prepareStep({ messages: structuredClone(messages) });
    const b = spool.prepareStep({ messages: structuredClone(messages) });
    expect(JSON.stringify(a.messages)).toBe(JSON.stringify(b.messages));
    // Preparing an already prepared history changes nothing more.
    expect(JSON.stringify(spool.prepareStep({ messages: structuredClone(a.messages) }).messages)).toBe(JSON.stringify(a.messages));
    expect(JSON.stringify(a.messages).length).toBeLessThan(JSON.stringify(messages).length / 2);
  });

  it("createSpool on an existing store and workspace: calls land in that store, prepareStep archives in that workspace, close leaves the store open", async () => {
    const dir = tempDir("spool-ai-sdk-own-");
    const store = createMemoryStore();
    const workspace = createWorkspace({ dir: join(dir, "ws"), keep: true });
    const spool = await createSpool({ store, workspace, cwd: dir, context: { maxResultChars: 2_000 } });
    const { model, prompts } = scriptedModel([() => [{ toolName: "bash", input: { command: "seq 1 3000" } }], () => "done"]);
    await generateText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(5), prompt: "count" });
    await spool.close();
    expect(readTranscript(store)).toHaveLength(1);
    const preview = resultIn(prompts[1]!, "s0-0");
    const key = /<<ccr:([0-9a-f]{16})>>/.exec(preview)![1]!;
    expect(workspace.get(key)).toBe(
      readTranscript(store)[0]!.content[0]!.type === "text" ? (readTranscript(store)[0]!.content[0] as { text: string }).text : "",
    );
    await store.commit([setValue(value("test", "open"), 1)]); // still open: the caller owns it
  });

  it("an aborted streamText ends the running command's process group", async () => {
    const { dir, spool } = await setup();
    const pidFile = join(dir, "child.pid");
    const { model } = scriptedModel([() => [{ toolName: "bash", input: { command: `(sleep 300 & echo $! > ${pidFile}; wait)` } }], () => "done"]);
    const abort = new AbortController();
    const stream = streamText({ model, tools: spool.tools, abortSignal: abort.signal, prompt: "wait" });
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", "the command to start", 10_000);
    const pid = Number(readFileSync(pidFile, "utf8"));
    const consumed = (async () => {
      for await (const _ of stream.fullStream) void _;
    })();
    abort.abort();
    await consumed.catch(() => undefined);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(), "the command's process to end", 5000);
  });
});
