// What a running command's preliminary tool results carry to a UI message stream: the last lines of
// the output so far (a tail preview), at most two a second — not the whole view at each batch (a 60 s
// command printing 20 lines a second sent 24.2 MB in 615 preliminaries). The final result still
// carries the whole bounded output. tailPreview's algebra as a property; the stream end to end through
// the real provider package and the scripted server.
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { isStepCount, streamText } from "ai";
import fc from "fast-check";
import { afterAll, afterEach, expect, it } from "vitest";
import { createSpool, type SpoolToolOutput } from "../../dist/ai-sdk/index.js";
import { countLines } from "../../src/capture/index.js";
import { PREVIEW_CHARS, PREVIEW_LINES, tailPreview } from "../../src/ai-sdk/tail-preview.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

it("tailPreview is the text's end: a suffix of at most PREVIEW_LINES lines and PREVIEW_CHARS chars, the whole text when it fits, never half a surrogate pair", () => {
  const line = fc.string({ unit: fc.constantFrom("a", "é", "😀", " "), maxLength: 300 });
  const text = fc.oneof(
    fc.array(line, { maxLength: 60 }).map((ls) => ls.join("\n")),
    fc.array(line, { maxLength: 60 }).map((ls) => ls.map((l) => `${l}\n`).join("")),
  );
  fc.assert(
    fc.property(text, (t) => {
      const p = tailPreview(t);
      expect(t.endsWith(p)).toBe(true);
      expect(p.length).toBeLessThanOrEqual(PREVIEW_CHARS);
      expect(countLines(p)).toBeLessThanOrEqual(PREVIEW_LINES);
      const low = p.charCodeAt(0);
      expect(low >= 0xdc00 && low <= 0xdfff).toBe(false);
      if (t.length <= PREVIEW_CHARS && countLines(t) <= PREVIEW_LINES) expect(p).toBe(t);
      // Cut by lines (the chars fit): whole lines, the last PREVIEW_LINES of them.
      else if (t.length <= PREVIEW_CHARS) {
        expect(t[t.length - p.length - 1]).toBe("\n");
        expect(countLines(p)).toBe(PREVIEW_LINES);
      }
    }),
    { numRuns: 500 },
  );
  expect(tailPreview("")).toBe("");
  expect(tailPreview("\n".repeat(50))).toBe("\n".repeat(PREVIEW_LINES));
});

it("a command printing for 3 s sends bounded tail previews at most twice a second, then its whole output once", async () => {
  const dir = tempDir("spool-ai-sdk-preliminary-");
  // 150 lines of 100 chars, one every 20 ms: 15 KB, over PREVIEW_CHARS and PREVIEW_LINES many times.
  const command = `node -e 'let i = 0; const t = setInterval(() => { console.log(String(++i).padStart(3, "0") + " " + "x".repeat(96)); if (i === 150) clearInterval(t); }, 20)'`;
  const server = await startFakeOpenAI([() => [{ name: "bash", args: { command } }], () => "done"]);
  cleanups.push(() => server.close());
  const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir });
  cleanups.push(() => spool.close());
  const model = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key" }).chatModel("fake-model");
  const started = performance.now();
  const result = streamText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(3), prompt: "print" });
  const running: SpoolToolOutput[] = [];
  let final: SpoolToolOutput | undefined;
  let ranMs = 0;
  for await (const chunk of result.toUIMessageStream()) {
    if (chunk.type !== "tool-output-available") continue;
    const output = chunk.output as SpoolToolOutput;
    if (output.status === "running") running.push(output);
    else if (chunk.preliminary !== true) {
      final = output;
      ranMs = performance.now() - started;
    }
  }
  expect(final).toMatchObject({ status: "done", totalLines: 150, truncated: false });
  expect(final!.text.split("\n").filter((l) => / x{96}$/.test(l))).toHaveLength(150);
  expect(ranMs).toBeGreaterThan(2500);
  // Previews: the end of the output so far, bounded, and paced.
  expect(running.length).toBeGreaterThanOrEqual(2);
  expect(running.length).toBeLessThanOrEqual(Math.ceil(ranMs / 500) + 1);
  for (const r of running) {
    expect(r.text.length).toBeLessThanOrEqual(PREVIEW_CHARS);
    expect(countLines(r.text)).toBeLessThanOrEqual(PREVIEW_LINES);
    expect(final!.text).toContain(r.text);
    // The totals count all the output so far, not the preview.
    expect(r.totalLines).toBeGreaterThanOrEqual(countLines(r.text));
  }
  expect(running.some((r) => r.totalLines > PREVIEW_LINES && r.text.endsWith(`${String(r.totalLines).padStart(3, "0")} ${"x".repeat(96)}\n`))).toBe(true);
});
