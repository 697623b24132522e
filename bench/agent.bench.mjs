// spool/ai-sdk benchmark, on the compiled dist/: one scripted 40-step agent session under the AI SDK's
// own loop (generateText + the SDK's mock model), run three ways side by side in one process, on the
// same fresh outputs (build logs, test runs, installs with progress frames, greps, histories, file reads):
//   raw          — a naive bash/read returning the whole output, no prepareStep
//   spool tools  — spool's bash/read/recall (bounded, cleaned, spilled), no prepareStep
//   spool + prep — spool's tools and spool's prepareStep (pairing, budgets, microcompaction)
// Rows: total prompt chars the model receives over the 40 calls, the largest single prompt, and the
// time of each prepareStep call.
//   npm run bench:agent            table
//   npm run bench:agent -- --json  one JSON line per row
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { generateText, isStepCount, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { createSpool } from "../dist/ai-sdk/index.js";

const JSON_OUT = process.argv.includes("--json");
const here = fileURLToPath(new URL(".", import.meta.url));
const GEN = join(here, "agent.gen.mjs");
const dir = mkdtempSync(join(tmpdir(), "spool-bench-agent-"));
const seed0 = Date.now() % 100000;

// A small repository for the file reads.
mkdirSync(join(dir, "src"), { recursive: true });
for (let f = 0; f < 6; f++) {
  const lines = 300 + f * 250;
  writeFileSync(
    join(dir, "src", `module${f}.ts`),
    Array.from(
      { length: lines },
      (_, i) => `export function fn${f}_${i}(input: string): string { return input.slice(${i % 17}) + "${"ab".repeat(i % 23)}"; }`,
    ).join("\n") + "\n",
  );
}

/** The 40 steps: each is the tool calls of one model turn (the last answers in text). */
function script(seed) {
  const gen = (kind, size) => `node ${GEN} ${kind} ${seed++} ${size}`;
  const s = [];
  for (let round = 0; round < 6; round++) {
    s.push([{ toolName: "bash", input: { command: gen("build", 400_000 + round * 300_000) } }]);
    s.push([{ toolName: "read", input: { path: `src/module${round}.ts` } }]);
    s.push([{ toolName: "bash", input: { command: gen("tests", 120_000 + round * 40_000) } }]);
    s.push([
      { toolName: "bash", input: { command: gen("grep", 30_000) } },
      { toolName: "bash", input: { command: "ls -la src" } },
    ]);
    s.push([{ toolName: "bash", input: { command: gen(round % 2 ? "log" : "install", 80_000) } }]);
    s.push([{ toolName: "bash", input: { command: `echo "editing src/module${round}.ts"` } }]);
  }
  while (s.length < 39) s.push([{ toolName: "bash", input: { command: gen("tests", 60_000) } }]);
  s.push("All green.");
  return s;
}

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
function mockModel(steps, promptChars) {
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const i = promptChars.length;
      promptChars.push(JSON.stringify(prompt).length);
      const step = steps[i];
      if (typeof step === "string" || step === undefined)
        return { content: [{ type: "text", text: step ?? "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
      return {
        content: step.map((c, k) => ({ type: "tool-call", toolCallId: `s${i}-${k}`, toolName: c.toolName, input: JSON.stringify(c.input) })),
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

// The naive baseline: what an agent without spool hands the model.
const exec = promisify(execFile);
const rawTools = {
  bash: tool({
    description: "Run a shell command.",
    inputSchema: jsonSchema({ type: "object", properties: { command: { type: "string" } }, required: ["command"] }),
    execute: async ({ command }) => {
      try {
        const { stdout, stderr } = await exec("bash", ["-c", command], { cwd: dir, maxBuffer: 256 * 1024 * 1024 });
        return stdout + stderr;
      } catch (err) {
        return `${err.stdout ?? ""}${err.stderr ?? ""}\nexit code ${err.code}`;
      }
    },
  }),
  read: tool({
    description: "Read a file.",
    inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
    execute: async ({ path }) => readFileSync(join(dir, path), "utf8"),
  }),
};

async function run(mode, seed) {
  const steps = script(seed);
  const promptChars = [];
  const prepTimes = [];
  const spool = mode === "raw" ? undefined : await createSpool({ root: join(dir, ".spool"), cwd: dir });
  const prepareStep =
    mode === "prep"
      ? (o) => {
          const t0 = performance.now();
          const r = spool.prepareStep(o);
          prepTimes.push(performance.now() - t0);
          return r;
        }
      : undefined;
  const t0 = performance.now();
  await generateText({
    model: mockModel(steps, promptChars),
    tools: spool ? spool.tools : rawTools,
    ...(prepareStep ? { prepareStep } : {}),
    stopWhen: isStepCount(41),
    prompt: "Get the build green.",
  });
  const wall = performance.now() - t0;
  await spool?.close();
  return { promptChars, prepTimes, wall };
}

const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const rows = [];
const row = (name, value, unit, note = "") => {
  const r = { name, value: Number(value.toFixed(value < 10 ? 3 : 0)), unit, note };
  rows.push(r);
  if (JSON_OUT) console.log(JSON.stringify({ bench: "agent", ...r }));
};

try {
  const raw = await run("raw", seed0);
  const tools = await run("tools", seed0);
  const prep = await run("prep", seed0);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  row("model calls", prep.promptChars.length, "calls", `${raw.promptChars.length} raw, ${tools.promptChars.length} tools-only`);
  row("prompt chars, raw results", sum(raw.promptChars), "chars", "sum over every model call");
  row("prompt chars, spool tools", sum(tools.promptChars), "chars", `${(sum(raw.promptChars) / sum(tools.promptChars)).toFixed(1)}× less than raw`);
  row("prompt chars, spool tools + prepareStep", sum(prep.promptChars), "chars", `${(sum(raw.promptChars) / sum(prep.promptChars)).toFixed(1)}× less than raw`);
  row("largest prompt, raw results", Math.max(...raw.promptChars), "chars");
  row("largest prompt, spool tools + prepareStep", Math.max(...prep.promptChars), "chars");
  row("prepareStep time, median", q(prep.prepTimes, 0.5), "ms", `${prep.prepTimes.length} calls`);
  row("prepareStep time, p95", q(prep.prepTimes, 0.95), "ms");
  row("prepareStep time, max", Math.max(...prep.prepTimes), "ms", "the last steps carry the longest history");
  row("prepareStep time, total", sum(prep.prepTimes), "ms", `of ${prep.wall.toFixed(0)} ms for the whole run (commands included)`);
  if (!JSON_OUT) {
    const w = Math.max(...rows.map((r) => r.name.length));
    console.log(`bench:agent — a scripted 40-step session (seed ${seed0}), the AI SDK's generateText with its mock model`);
    for (const r of rows) console.log(`  ${r.name.padEnd(w)}  ${r.value.toLocaleString("en-US").padStart(14)} ${r.unit.padEnd(5)} ${r.note}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
