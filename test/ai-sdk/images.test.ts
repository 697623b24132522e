// Measured end to end: a tool that returns a fresh screenshot (400,000 base64 chars, 300 KB) every
// step, 20 steps, through @ai-sdk/openai-compatible against the scripted server. Without spool every
// request carries every screenshot taken so far; with spool's prepareStep the ones older than two
// turns are one-line stubs, archived and named by their recall marker.
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, jsonSchema, tool } from "ai";
import { afterAll, afterEach, expect, it } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { png } from "../support/png.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, type ChatStep } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

const STEPS = 20;

type PrepareStep = Awaited<ReturnType<typeof createSpool>>["prepareStep"];

async function run(prepareStep: PrepareStep | undefined): Promise<number[]> {
  const script: ChatStep[] = [];
  for (let i = 0; i < STEPS; i++) script.push(() => [{ name: "screenshot", args: { n: i } }]);
  script.push(() => "Done.");
  const server = await startFakeOpenAI(script);
  cleanups.push(() => server.close());
  const provider = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" });
  const screenshot = tool({
    description: "Take a screenshot of the page",
    inputSchema: jsonSchema<{ n: number }>({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
    execute: async ({ n }) => ({ n, data: png(1280, 800, 300_000, n) }),
    toModelOutput: ({ output }) => ({
      type: "content",
      value: [
        { type: "text", text: `screenshot ${output.n}` },
        { type: "file", mediaType: "image/png", data: { type: "data", data: output.data } },
      ],
    }),
  });
  const result = await generateText({
    model: provider.chatModel("fake-model"),
    tools: { screenshot },
    stopWhen: isStepCount(STEPS + 1),
    prompt: "Watch the page.",
    ...(prepareStep !== undefined ? { prepareStep: prepareStep as never } : {}),
  });
  expect(result.text).toBe("Done.");
  expect(server.requests).toHaveLength(STEPS + 1);
  return server.requests.map((r) => JSON.stringify(r).length);
}

it("20 steps of 400,000-char screenshots: the request at step 20 carries two of them, not twenty", async () => {
  const before = await run(undefined);
  const spool = await createSpool({ root: join(tempDir("spool-ai-sdk-img-"), ".spool") });
  cleanups.push(() => spool.close());
  const after = await run(spool.prepareStep);
  console.log(`request chars at step ${STEPS}: ${before[STEPS]} without spool, ${after[STEPS]} with prepareStep`);
  expect(before[STEPS]).toBeGreaterThan(STEPS * 400_000);
  expect(after[STEPS]).toBeGreaterThan(2 * 400_000);
  expect(after[STEPS]).toBeLessThan(3 * 400_000);
  // the first two requests have nothing old enough to clear
  expect(after.slice(0, 3)).toEqual(before.slice(0, 3));
});
