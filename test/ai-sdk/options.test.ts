// createSpool's options: each one takes effect, and a bad one is refused when the spool is created,
// with an error naming the option in the units the developer passed — not later, on every model call,
// as tool text only the model reads.
import { readdirSync, statSync } from "node:fs";
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

/** `n` turns of one bash call each, every result `chars` long and different. */
function history(n: number, chars: number): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: "user", content: "go" }];
  for (let i = 0; i < n; i++) {
    const value = `result ${i}\n`.repeat(Math.ceil(chars / 10)).slice(0, chars);
    messages.push(
      { role: "assistant", content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: "bash", input: { command: "x" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: `c${i}`, toolName: "bash", output: { type: "text", value } }] },
    );
  }
  return messages;
}

it("context.archiveMaxBytes and archiveTtlMs bound the session's archive", async () => {
  const spool = await createSpool({ root: join(tempDir("spool-ai-sdk-opt-"), ".spool"), context: { archiveMaxBytes: 60_000, archiveTtlMs: 3_600_000 } });
  cleanups.push(() => spool.close());
  expect(spool.session.workspace.archive).toMatchObject({ maxBytes: 60_000, ttlMs: 3_600_000 });
  // 20 old results of 10 KB each are archived as they are compacted: 200 KB into a 60 KB archive.
  spool.prepareStep({ messages: history(20, 10_000) });
  const dir = join(spool.sessionDir, "archive");
  const bytes = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
  expect(bytes).toBeGreaterThan(0);
  expect(bytes).toBeLessThanOrEqual(60_000);
});
