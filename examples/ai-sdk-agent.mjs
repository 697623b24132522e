#!/usr/bin/env node
// @ts-check
// A small coding agent on the Vercel AI SDK's streamText with spool: the model gets spool's bash, read
// and recall tools (bounded, cleaned output; a lossless spill file; cut text recallable), and every
// step's history passes through spool's prepareStep (pairing, budgets, microcompaction). The session is
// recorded under .spool/sessions/ and `spool serve` shows it live (its URL is printed on stderr).
//
// Run it against any OpenAI-compatible endpoint:
//   SPOOL_AGENT_BASE_URL=https://api.openai.com/v1 SPOOL_AGENT_API_KEY=sk-… SPOOL_AGENT_MODEL=gpt-4.1-mini \
//     node examples/ai-sdk-agent.mjs "run the tests and tell me what fails"
// Optional: SPOOL_AGENT_MAX_STEPS (default 30), SPOOL_ROOT (default .spool), SPOOL_AGENT_VIEWER=0 (no viewer).
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SYSTEM = `You are a coding agent working in ${process.cwd()}. Use bash to run commands. Long outputs are cut to
their end with a footer naming a file holding everything: page through it with read (offset/limit) rather
than re-running the command. Text cut from older results is marked <<ccr:KEY>>; recall(KEY) gives it back.`;

const baseURL = process.env.SPOOL_AGENT_BASE_URL;
const prompt = process.argv.slice(2).join(" ");
if (!baseURL || !prompt) {
  process.stderr.write("usage: SPOOL_AGENT_BASE_URL=… [SPOOL_AGENT_API_KEY=…] [SPOOL_AGENT_MODEL=…] node examples/ai-sdk-agent.mjs TASK\n");
  process.exit(2);
}
// Loaded here, not imported at the top: a project without the provider package (or `ai`) is told so
// in one line, rather than by a stack trace from the module loader.
const [{ createOpenAICompatible }, { isStepCount, streamText }, { createSpool }] = await Promise.all([
  import("@ai-sdk/openai-compatible"),
  import("ai"),
  import("spool/ai-sdk"),
]).catch((/** @type {NodeJS.ErrnoException} */ err) => {
  if (err.code !== "ERR_MODULE_NOT_FOUND") throw err;
  const missing = /Cannot find package '([^']+)'/.exec(err.message)?.[1] ?? "a package it imports";
  process.stderr.write(
    `agent: ${missing} is not installed; the agent needs ai and @ai-sdk/openai-compatible next to spool: npm install ai @ai-sdk/openai-compatible\n`,
  );
  process.exit(2);
});
const root = process.env.SPOOL_ROOT ?? ".spool";
const maxSteps = Number(process.env.SPOOL_AGENT_MAX_STEPS ?? 30);

/** `spool serve` for this root, in the background; resolves with its URL once it printed it. */
function startViewer() {
  const bin = join(dirname(fileURLToPath(import.meta.resolve("spool/package.json"))), "dist", "bin", "main.js");
  const child = spawn(process.execPath, [bin, "serve", "--root", root], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (/** @type {string} */ d) => {
      err += d;
      const m = /(http:\/\/\S+\?token=\S+)/.exec(err);
      if (m) resolve({ url: m[1], close: () => void child.kill("SIGINT") });
    });
    child.once("exit", (code) => reject(new Error(`spool serve exited (${code}): ${err.trim()}`)));
  });
}

const provider = createOpenAICompatible({ name: "agent", baseURL, ...(process.env.SPOOL_AGENT_API_KEY ? { apiKey: process.env.SPOOL_AGENT_API_KEY } : {}) });
const model = provider.chatModel(process.env.SPOOL_AGENT_MODEL ?? "gpt-4.1-mini");
const spool = await createSpool({ root, timeout: 600 });
const viewer = process.env.SPOOL_AGENT_VIEWER === "0" ? undefined : /** @type {{ url: string, close(): void }} */ (await startViewer());
process.stderr.write(`spool: session ${spool.sessionId}${viewer ? `; watch it at ${viewer.url}` : ""}\n`);

const abort = new AbortController();
process.once("SIGINT", () => abort.abort());
let exitCode = 0;
/** How the run ended, for the session's record (`spool sessions`: failed, interrupted, …). */
let error;
try {
  const result = streamText({
    model,
    system: SYSTEM,
    prompt,
    tools: spool.tools,
    prepareStep: spool.prepareStep,
    stopWhen: isStepCount(maxSteps),
    abortSignal: abort.signal,
    // Said once, below, as one line: the SDK's default prints the whole error object with its stacks.
    onError: () => {},
  });
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") process.stdout.write(part.text);
    else if (part.type === "tool-call") process.stderr.write(`\n→ ${part.toolName} ${JSON.stringify(part.input)}\n`);
    else if (part.type === "tool-result") {
      const out = /** @type {import("spool/ai-sdk").SpoolToolOutput} */ (part.output);
      if (part.preliminary && out.status === "running") process.stderr.write(`  … ${out.totalLines} lines so far\r`);
      else if (!part.preliminary)
        process.stderr.write(`  ← ${out.status}: ${out.totalLines} lines${out.truncated ? " (cut; the rest is in its spill file)" : ""}\n`);
    } else if (part.type === "tool-error") process.stderr.write(`  ← error: ${String(part.error)}\n`);
    else if (part.type === "error") throw part.error;
    else if (part.type === "abort") error = abort.signal.reason;
  }
  process.stdout.write("\n");
} catch (err) {
  process.stderr.write(`agent: ${err instanceof Error ? err.message : String(err)}\n`);
  exitCode = 1;
  error = err;
} finally {
  await spool.close({ error });
  viewer?.close();
}
process.exitCode = exitCode;
