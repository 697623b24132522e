// The process tools through spool/ai-sdk: the same names and arguments as the harness and `spool mcp`,
// each an AI SDK tool whose final output is the model-facing text. A background command is polled
// (each line once), a pty shell answers through process_write, a progress display ends as its final
// frame, and close() leaves no background process running.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { createSpool, type Spool, type SpoolToolOutput } from "../../dist/ai-sdk/index.js";
import { alive } from "../support/process-group.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Runs one AI SDK tool as the SDK's loop does (execute is an async iterable) and returns the final output. */
async function run(spool: Spool, name: string, input: Record<string, unknown>): Promise<SpoolToolOutput> {
  const t = spool.tools[name]!;
  let last: SpoolToolOutput | undefined;
  const out = t.execute!(input as never, { toolCallId: `t-${name}`, messages: [], context: {} } as never) as AsyncIterable<SpoolToolOutput>;
  for await (const o of out) last = o;
  return last!;
}

it("process tools through spool/ai-sdk: polling, a pty shell, a redrawn display, and close() ends them", async () => {
  const dir = await mkdtemp(join(tmpdir(), "spool-ai-sdk-proc-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const spool = await createSpool({ root: join(dir, ".spool"), cwd: dir });
  cleanups.push(() => spool.close());
  expect(Object.keys(spool.tools).sort()).toEqual(["bash", "process_kill", "process_list", "process_output", "process_write", "read", "recall"]);

  const started = await run(spool, "bash", { command: "echo one; read x; echo two; read y; echo three", background: true });
  const id = /process (proc-\w+)/.exec(started.text)![1]!;
  let seen = started.text;
  seen += "\n" + (await run(spool, "process_output", { processId: id, waitSeconds: 2 })).text;
  seen += "\n" + (await run(spool, "process_write", { processId: id, input: "\n", waitSeconds: 5 })).text;
  seen += "\n" + (await run(spool, "process_write", { processId: id, input: "\n", waitSeconds: 5 })).text;
  let last = (await run(spool, "process_output", { processId: id, waitSeconds: 5 })).text;
  seen += "\n" + last;
  while (!last.includes("exited")) seen += "\n" + (last = (await run(spool, "process_output", { processId: id, waitSeconds: 5 })).text);
  expect(seen.split("\n").filter((l) => /^(one|two|three)$/.test(l))).toEqual(["one", "two", "three"]);
  expect(last).toContain(`process ${id} exited with code 0`);

  const sh = await run(spool, "bash", { command: "sh -i", background: true, pty: true });
  const shId = /process (proc-\w+)/.exec(sh.text)![1]!;
  let shText = sh.text;
  while (!/[#$] \n\[process/.test(shText)) shText = (await run(spool, "process_output", { processId: shId, waitSeconds: 5 })).text;
  let answer = (await run(spool, "process_write", { processId: shId, input: "echo $((6*7)); echo PID $$\n", waitSeconds: 5 })).text;
  // Under load the answer comes in more than one read, each ending in its status line: a line apart.
  while (!/^PID \d+$/m.test(answer)) answer += "\n" + (await run(spool, "process_output", { processId: shId, waitSeconds: 5 })).text;
  expect(answer).toMatch(/^42$/m);
  const shellPid = Number(/^PID (\d+)$/m.exec(answer)![1]);

  const bars = await run(spool, "bash", {
    command: "printf 'a 0%%\\nb 0%%\\n'; for p in 50 100; do printf '\\033[2A\\033[2Ka %d%%\\n\\033[2Kb %d%%\\n' $p $p; done",
    pty: true,
  });
  expect(bars.text).toBe("a 100%\nb 100%\n");

  expect(alive(shellPid)).toBe(true);
  await spool.close();
  expect(alive(shellPid)).toBe(false);
});
