// The session directory deleted mid-run (a model's `rm -rf .spool`, or the user cleaning up) through
// the real `ai` and `@ai-sdk/openai-compatible` against the scripted server, with real commands and
// files. Before, every later archive write failed (ENOENT), nothing was cut any more and the prompt
// grew by each whole result; the only sign was in the onPrepare reports.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount } from "ai";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { runSpool } from "../support/cli.js";
import { startFakeOpenAI, toolResult, toolText, type ChatMessage } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

const KEY = /<<ccr:([0-9a-f]{16})>>/;
const toolChars = (messages: ChatMessage[]): number => messages.filter((m) => m.role === "tool").reduce((n, m) => n + toolText(m).length, 0);

describe("the session directory removed while the agent runs", () => {
  // SQLite: the database was written on into the deleted file and WAL; the session was gone from `spool sessions` ([]).
  it.each(["jsonl", "sqlite"] as const)(
    "%s: compaction goes on (the prompt stays bounded), an old result is recallable, the session log keeps every call, and the user is warned once",
    async (backend) => {
      const dir = tempDir("spool-rmdir-");
      const warnings: Error[] = [];
      const onWarning = (w: Error) => {
        if ((w as Error & { code?: string }).code === "SPOOL_SESSION_DIR_REMOVED") warnings.push(w);
      };
      process.on("warning", onWarning);
      cleanups.push(async () => process.off("warning", onWarning));
      let stubKey: string | undefined;
      const server = await startFakeOpenAI([
        () => [{ name: "bash", args: { command: "seq 1 100000" } }],
        () => [{ name: "bash", args: { command: "rm -rf .spool && echo removed" } }],
        () => [{ name: "bash", args: { command: "seq 1 200000" } }],
        () => [{ name: "bash", args: { command: "echo a" } }],
        () => [{ name: "bash", args: { command: "echo b" } }],
        (m) => {
          stubKey = KEY.exec(toolResult(m, "call_0_0"))?.[1];
          return [{ name: "recall", args: { key: stubKey ?? "none", grep: "^99995$" } }];
        },
        () => "done",
      ]);
      cleanups.push(() => server.close());
      const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir, backend, context: { truncateTurns: 1, summarizeTurns: 2 } });
      const model = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "k" }).chatModel("m");
      let error: unknown;
      try {
        await generateText({ model, tools: spool.tools, prepareStep: spool.prepareStep, stopWhen: isStepCount(10), prompt: "go", maxRetries: 0 });
      } catch (e) {
        error = e;
      } finally {
        await spool.close({ error });
      }
      expect(error).toBeUndefined();
      expect(toolResult(server.requests[2]!.messages, "call_1_0")).toBe("removed\n");
      // Each of the two big results (12 151 and 14 148 chars) is cut once it is no longer the newest:
      // both were kept whole in every later request before.
      const last = server.requests.at(-1)!.messages;
      expect(toolResult(last, "call_2_0").length).toBeLessThan(500);
      expect(toolResult(last, "call_0_0").length).toBeLessThan(500);
      for (const r of server.requests.slice(4)) expect(toolChars(r.messages)).toBeLessThan(6000);
      // Archived again after the removal: the model reads the original back.
      expect(stubKey).toMatch(/^[0-9a-f]{16}$/);
      expect(toolResult(last, "call_5_0")).toMatch(/\b99995\b/);
      // The log was written on into the deleted file before: the session was gone from `spool sessions`.
      const root = join(dir, ".spool");
      const listed = JSON.parse(runSpool(["sessions", "--root", root, "--json"], { cwd: dir }).stdout) as { id: string; status: string }[];
      expect(listed).toMatchObject([{ id: spool.sessionId, status: "succeeded" }]);
      const inspect = runSpool(["inspect", spool.sessionId, "--root", root], { cwd: dir }).stdout;
      for (const command of ["seq 1 100000", "rm -rf .spool && echo removed", "seq 1 200000", "echo a", "echo b"]) expect(inspect).toContain(`$ ${command}`);
      expect(inspect).toMatch(/call call-6 \(recall\): ok/);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain(spool.sessionDir);
    },
  );
});
