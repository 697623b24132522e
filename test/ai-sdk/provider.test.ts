// End to end through a real provider package: @ai-sdk/openai-compatible's own HTTP and streaming code
// against a scripted chat-completions server on 127.0.0.1, with spool's tools and prepareStep in the
// loop. Then examples/ai-sdk-agent.mjs: type-checked, and run as a process against the same kind of server.
import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { isStepCount, streamText } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, toolResult, type ChatMessage, type ChatStep } from "./fake-openai.js";
import { FIXTURES } from "./script.js";

const ROOT_DIR = new URL("../../", import.meta.url).pathname;
const EXAMPLE = join(ROOT_DIR, "examples", "ai-sdk-agent.mjs");
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

const spillIn = (text: string): string => /Full output: (\S+)\]/.exec(text)![1]!;
const keyIn = (text: string): string => /<<ccr:([0-9a-f]{16})>>/.exec(text)![1]!;

/** Build, read the spill, fail a test, three filler steps (ageing the read), recall the read, answer. */
function providerScript(): ChatStep[] {
  return [
    () => [{ name: "bash", args: { command: `node ${join(FIXTURES, "build-log.mjs")}` } }],
    (m) => [{ name: "read", args: { path: spillIn(toolResult(m, "call_0_0")), offset: 1, limit: 200 } }],
    () => [{ name: "bash", args: { command: "echo 'FAIL parser'; exit 1" } }],
    () => [
      { name: "bash", args: { command: "echo a" } },
      { name: "bash", args: { command: "echo b" } },
    ],
    () => [{ name: "bash", args: { command: "echo c" } }],
    () => [{ name: "bash", args: { command: "echo d" } }],
    (m) => [{ name: "recall", args: { key: keyIn(toolResult(m, "call_1_0")) } }],
    () => "Done: the parser test fails.",
  ];
}

describe("through @ai-sdk/openai-compatible against a scripted server", () => {
  it("streamText runs spool's tools and prepareStep over real HTTP streaming; the requests carry bounded, paired, recallable results", async () => {
    const dir = tempDir("spool-provider-");
    const server = await startFakeOpenAI(providerScript());
    cleanups.push(() => server.close());
    const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir });
    cleanups.push(() => spool.close());
    const provider = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" });
    const result = streamText({
      model: provider.chatModel("fake-model"),
      tools: spool.tools,
      prepareStep: spool.prepareStep,
      stopWhen: isStepCount(20),
      prompt: "Fix the build.",
    });
    let preliminaries = 0;
    const finals = new Map<string, string>();
    for await (const part of result.fullStream) {
      if (part.type === "error") throw part.error;
      if (part.type !== "tool-result") continue;
      if (part.preliminary) preliminaries++;
      else finals.set(part.toolCallId, (part.output as { text: string }).text);
    }
    expect(await result.text).toBe("Done: the parser test fails.");
    expect(preliminaries).toBeGreaterThan(2);
    const requests = server.requests;
    expect(requests).toHaveLength(8);
    expect(requests[0]!.stream).toBe(true);
    expect(requests[0]!.tools!.map((t) => t.function.name).sort()).toEqual([
      "bash",
      "process_kill",
      "process_list",
      "process_output",
      "process_write",
      "read",
      "recall",
    ]);
    for (const [i, req] of requests.entries()) {
      // Pairing in the provider's own wire format: every tool_call id has exactly one tool message.
      const calls = req.messages.flatMap((m: ChatMessage) => (m.tool_calls ?? []).map((c) => c.id));
      const answered = req.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
      expect([...answered].sort(), `request ${i}`).toEqual([...calls].sort());
      for (const m of req.messages.filter((x) => x.role === "tool")) {
        expect(toolResult(req.messages, m.tool_call_id!).length, `request ${i} ${m.tool_call_id}`).toBeLessThanOrEqual(21_000);
      }
    }
    const read = finals.get("call_1_0")!;
    expect(toolResult(requests[2]!.messages, "call_1_0")).toBe(read);
    expect(toolResult(requests[6]!.messages, "call_1_0").length).toBeLessThan(read.length / 2);
    expect(toolResult(requests[7]!.messages, "call_6_0")).toBe(read);
    expect(toolResult(requests[3]!.messages, "call_2_0")).toContain("FAIL parser");
  });

  it("the file a cut result's preview and its later stub name can be opened with the read tool the model has", async () => {
    const dir = tempDir("spool-provider-");
    // ≈ 40 KB: over the result budget, under bash's own 50 KB view, so the budget saves it under results/.
    const rows = 'for i in $(seq 1 1500); do echo "row $i: xxxxxxxxxxxxxxxxxxxx"; done';
    const previewPath = (text: string): string => /read the file (\S+) by line range/.exec(text)![1]!;
    const stubPath = (text: string): string => /, or read (\S+)\]$/.exec(text)![1]!;
    const server = await startFakeOpenAI([
      () => [{ name: "bash", args: { command: rows } }],
      (m) => [{ name: "read", args: { path: previewPath(toolResult(m, "call_0_0")), offset: 1, limit: 2 } }],
      () => [{ name: "bash", args: { command: "echo a" } }],
      (m) => [{ name: "read", args: { path: stubPath(toolResult(m, "call_0_0")), offset: 1500 } }],
      () => "done",
    ]);
    cleanups.push(() => server.close());
    const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir, context: { truncateTurns: 1, summarizeTurns: 2 } });
    cleanups.push(() => spool.close());
    const provider = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" });
    const result = streamText({
      model: provider.chatModel("fake-model"),
      tools: spool.tools,
      prepareStep: spool.prepareStep,
      stopWhen: isStepCount(10),
      prompt: "go",
    });
    const finals = new Map<string, string>();
    for await (const part of result.fullStream) {
      if (part.type === "error") throw part.error;
      if (part.type === "tool-result" && !part.preliminary) finals.set(part.toolCallId, (part.output as { text: string }).text);
    }
    const requests = server.requests;
    expect(requests).toHaveLength(5);
    expect(toolResult(requests[1]!.messages, "call_0_0")).toMatch(/^\[Partial tool result/);
    expect(finals.get("call_1_0")).toMatch(/^row 1: x+\nrow 2: x+\n/);
    // The preview is byte-identical from one request to the next: the provider's prompt cache stays warm.
    expect(toolResult(requests[2]!.messages, "call_0_0")).toBe(toolResult(requests[1]!.messages, "call_0_0"));
    expect(toolResult(requests[3]!.messages, "call_0_0")).toMatch(/^\[Old tool result cleared/);
    expect(finals.get("call_3_0")).toMatch(/^row 1500: x+\n/);
  });

  it("examples/ai-sdk-agent.mjs type-checks", async () => {
    await promisify(execFile)(process.execPath, [join(ROOT_DIR, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT_DIR, "tsconfig.examples.json")], {
      cwd: ROOT_DIR,
    });
  });

  it("examples/ai-sdk-agent.mjs runs against an OpenAI-compatible endpoint, prints the viewer URL and the answer, and records a finished session", async () => {
    const dir = tempDir("spool-provider-");
    const server = await startFakeOpenAI([
      () => [{ name: "bash", args: { command: "seq 1 100000" } }],
      (m) => [{ name: "read", args: { path: spillIn(toolResult(m, "call_0_0")), offset: 99_990 } }],
      (m) => (toolResult(m, "call_1_0").startsWith("99990\n") ? "The output ends at 100000." : "read did not return the page"),
    ]);
    cleanups.push(() => server.close());
    const child = spawn(process.execPath, [EXAMPLE, "count to 100000"], {
      cwd: dir,
      env: { ...process.env, SPOOL_AGENT_BASE_URL: server.baseURL, SPOOL_AGENT_API_KEY: "test", SPOOL_AGENT_MODEL: "fake", SPOOL_ROOT: join(dir, ".spool") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code, stderr).toBe(0);
    expect(stdout.trim()).toBe("The output ends at 100000.");
    expect(stderr).toMatch(/watch it at http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+/);
    expect(stderr).toContain("→ bash");
    const sessions = JSON.parse(runSpool(["sessions", "--root", join(dir, ".spool"), "--json"], { cwd: dir }).stdout) as { command: string; status: string }[];
    expect(sessions).toMatchObject([{ command: "ai-sdk", status: "succeeded" }]);
  });
});
