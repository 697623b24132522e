import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkspace } from "../../src/context/index.js";
import { apply, type Op } from "../../src/delta/index.js";
import {
  callRecord,
  createBashTool,
  createHarness,
  createReadTool,
  createRecallTool,
  emptyLane,
  operationScope,
  outputList,
  reduceLane,
  type HarnessEvent,
  type ToolDefinition,
} from "../../src/harness/index.js";
import type { ToolOutputState } from "../../src/output/index.js";
import { createMemoryStore, openSessionRepo, setValue, value } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

afterAll(removeTempDirs);

async function session() {
  const root = tempDir("spool-harness-");
  const repo = openSessionRepo(root, { backend: "jsonl" });
  const s = await repo.create();
  const workspace = createWorkspace({ dir: s.dir, keep: true });
  return { ...s, workspace };
}

// ~256 KB of build-log lines over ~2.5 s: 20 bursts of ~12.8 KB, 125 ms apart, error near the end.
const BUILD = `node -e '
let i = 0;
const burst = () => {
  let s = "";
  while (s.length < 12800) s += "cc -O2 -c src/module_" + i + "/file_" + (i * 7919 % 1000) + ".c -o build/obj_" + i++ + ".o\\n";
  if (i > 4000 && !globalThis.done) { s += "src/final.c:42:7: error: expected ; before }\\n"; globalThis.done = true; }
  process.stdout.write(s);
};
let n = 0;
const t = setInterval(() => { burst(); if (++n === 20) clearInterval(t); }, 125);
'`;

describe("harness: the bash worked example", () => {
  it("a real bash run through a 50 KB window: base first, then a/t on the text, one s for the spill path, sidecar retired on settle", async () => {
    const { store, dir, workspace, file } = await session();
    const harness = createHarness({ store, workspace, tools: [createBashTool()] });
    const events: HarnessEvent[] = [];
    let durable: { value: unknown; tag?: string }[] = [];
    let sidecarsDuringRun = 0;
    harness.on((e) => {
      events.push(e);
      if (e.type === "tool_update" && existsSync(`${file}.scopes`)) sidecarsDuringRun = Math.max(sidecarsDuringRun, readdirSync(`${file}.scopes`).length);
      if (e.type === "tool_end") durable = [...store.readList(outputList("op1", "call_7"), { order: "asc" }).elements];
    });
    const [result] = await harness.runTools("op1", [{ toolCallId: "call_7", toolName: "bash", args: { command: BUILD } }]);

    const updates = events.filter((e): e is Extract<HarnessEvent, { type: "tool_update" }> => e.type === "tool_update");
    expect(updates.length).toBeGreaterThanOrEqual(8);
    expect(updates[0]!.ops[0]![0]).toBe("r");
    const textOps = updates.slice(1).flatMap((u) => u.ops.filter((op) => JSON.stringify(op[1]) === '["content",0,"text"]'));
    expect(new Set(textOps.map((op) => op[0]))).toEqual(new Set(["a", "t"]));
    const spillSets = updates.flatMap((u) => u.ops.filter((op) => op[0] === "s" && JSON.stringify(op[1]) === '["details","spillPath"]'));
    expect(spillSets).toHaveLength(1);

    // Durable: one encoded batch per flush, the first tagged base, in a sidecar while running.
    expect(durable.length).toBe(updates.length);
    expect(durable[0]!.tag).toBe("base");
    expect(sidecarsDuringRun).toBe(1);

    // tool_end carries no content.
    const end = events.find((e) => e.type === "tool_end")!;
    expect(Object.keys(end).sort()).toEqual(["isError", "operationId", "toolCallId", "type"]);

    // Settled: transcript holds the result, the scope is retired, the sidecar is gone.
    expect(result!.isError).toBe(false);
    const text = (result!.content[0] as { text: string }).text;
    expect(text).toContain("error: expected ; before }");
    expect(text).toMatch(/\[Showing the last \d+ of \d+ lines .*Full output: .*call_7\.log\]/);
    expect(harness.transcript()).toEqual([result]);
    expect(store.readList(outputList("op1", "call_7")).elements).toEqual([]);
    expect(readdirSync(`${file}.scopes`).length).toBe(0);
    const spill = readFileSync(join(dir, "spill", "call_7.log"), "utf8");
    expect(spill.length).toBeGreaterThan(250_000);
    expect(result!.spillPath).toBe(join(dir, "spill", "call_7.log"));

    // The fold of the updates is the result the model sees.
    let fold: ToolOutputState | undefined;
    for (const u of updates) fold = apply(fold, u.ops as Op[]);
    expect(fold!.content[0].text).toBe(text);
    await store.close();
  }, 30_000);
});

describe("harness: outcomes", () => {
  const memory = () => {
    const root = tempDir("spool-ws-");
    return { store: createMemoryStore(), workspace: createWorkspace({ dir: root, keep: true }) };
  };

  it("partial output and the error text both survive a throw", async () => {
    const { store, workspace } = memory();
    const failing: ToolDefinition = {
      name: "fails",
      description: "",
      parameters: {},
      execute(_id, _a, _s, out) {
        out.write("step 1 ok\nstep 2 ok\n");
        out.terminate(true);
        throw new Error("step 3 failed: disk full");
      },
    };
    const harness = createHarness({ store, workspace, tools: [failing] });
    const [r] = await harness.runTools("op", [{ toolCallId: "c1", toolName: "fails", args: {} }]);
    expect(r!.isError).toBe(true);
    expect((r!.content[0] as { text: string }).text).toBe("step 1 ok\nstep 2 ok\nstep 3 failed: disk full");
  });

  it("a non-zero exit is an error result that keeps the command's output", async () => {
    const { store, workspace } = memory();
    const harness = createHarness({ store, workspace, tools: [createBashTool()] });
    const [r] = await harness.runTools("op", [{ toolCallId: "c1", toolName: "bash", args: { command: "echo building; echo oops >&2; exit 3" } }]);
    expect(r!.isError).toBe(true);
    expect((r!.content[0] as { text: string }).text).toBe("building\noops\nCommand exited with code 3");
  });

  it("an abort keeps partial output and marks the result as an error", async () => {
    const { store, workspace } = memory();
    const harness = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 10 });
    const ac = new AbortController();
    harness.on((e) => {
      if (e.type === "tool_update" && JSON.stringify(e.ops).includes("ready")) ac.abort();
    });
    const started = Date.now();
    const [r] = await harness.runTools("op", [{ toolCallId: "c1", toolName: "bash", args: { command: "echo ready; sleep 30" } }], { signal: ac.signal });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r!.isError).toBe(true);
    const text = (r!.content[0] as { text: string }).text;
    expect(text.startsWith("ready\n")).toBe(true);
    expect(text).toContain("[aborted]");
  });

  it("a timeout keeps partial output and says it timed out", async () => {
    const { store, workspace } = memory();
    const harness = createHarness({ store, workspace, tools: [createBashTool()] });
    const [r] = await harness.runTools("op", [{ toolCallId: "c1", toolName: "bash", args: { command: "echo partial; sleep 30", timeout: 0.5 } }]);
    expect(r!.isError).toBe(true);
    expect((r!.content[0] as { text: string }).text).toMatch(/^partial\n[\s\S]*timed out after 0.5s/);
  });

  it("an unknown tool is an error result naming the available tools", async () => {
    const { store, workspace } = memory();
    const harness = createHarness({ store, workspace, tools: [createBashTool()] });
    const [r] = await harness.runTools("op", [{ toolCallId: "c1", toolName: "nope", args: {} }]);
    expect(r!.isError).toBe(true);
    expect((r!.content[0] as { text: string }).text).toContain('Unknown tool "nope". Available tools: bash.');
  });

  it("calls run concurrently and nothing arrives for a call after its tool_end", async () => {
    const { store, workspace } = memory();
    const harness = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 5 });
    const ended = new Set<string>();
    const late: string[] = [];
    harness.on((e) => {
      if (e.type === "tool_end") ended.add(e.toolCallId);
      else if ((e.type === "tool_update" || e.type === "tool_start") && ended.has(e.toolCallId)) late.push(e.toolCallId);
    });
    const order: string[] = [];
    harness.on((e) => {
      if (e.type === "tool_update" || e.type === "tool_end") order.push(`${e.type}:${e.toolCallId}`);
    });
    const results = await harness.runTools("op", [
      { toolCallId: "a", toolName: "bash", args: { command: "for i in 1 2 3 4 5; do echo a$i; sleep 0.1; done" } },
      { toolCallId: "b", toolName: "bash", args: { command: "for i in 1 2 3 4 5; do echo b$i; sleep 0.1; done" } },
    ]);
    // Concurrent: b was already producing output before a ended.
    expect(order.indexOf("tool_update:b")).toBeLessThan(order.indexOf("tool_end:a"));
    expect(results.map((r) => r.toolCallId)).toEqual(["a", "b"]);
    expect(late).toEqual([]);
  });

  it("bad calls are refused before anything is written", async () => {
    const { store, workspace } = memory();
    const harness = createHarness({ store, workspace, tools: [createBashTool()] });
    await expect(harness.runTools("op", [{ toolCallId: "", toolName: "bash", args: {} }])).rejects.toThrow(/toolCallId/);
    await expect(
      harness.runTools("op", [
        { toolCallId: "x", toolName: "bash", args: {} },
        { toolCallId: "x", toolName: "bash", args: {} },
      ]),
    ).rejects.toThrow(/duplicate/);
    expect(harness.recover()).toEqual([]);
  });
});

describe("harness: memo, recovery and seeded replay", () => {
  it("a memo and its output checkpoint commit in one transaction, as a base batch", async () => {
    const root = tempDir("spool-ws-");
    const store = createMemoryStore();
    const transactions: number[] = [];
    const commit = store.commit.bind(store);
    (store as { commit: typeof store.commit }).commit = (writes) => {
      transactions.push(writes.length);
      return commit(writes);
    };
    let memo: unknown;
    const tool: ToolDefinition = {
      name: "t",
      description: "",
      parameters: {},
      async execute(_id, _a, _s, out, ctx) {
        out.write("did X\n");
        await ctx.memo("x", { done: true });
        memo = ctx.memoized("x");
      },
    };
    const harness = createHarness({ store, workspace: createWorkspace({ dir: root, keep: true }), tools: [tool] });
    let checkpoint: { tag?: string; value: unknown } | undefined;
    harness.on((e) => {
      if (e.type === "tool_end") checkpoint = store.readList(outputList("op", "c"), { order: "desc" }).elements[0];
    });
    await harness.runTools("op", [{ toolCallId: "c", toolName: "t", args: {} }]);
    // start (1 write), live base flush (2: what came before it cleared, the base), memo + checkpoint
    // (2, one transaction), settle (3)
    expect(transactions).toEqual([1, 2, 2, 3]);
    expect(memo).toEqual({ done: true });
    expect(checkpoint?.tag).toBe("base");
    expect(JSON.stringify(checkpoint?.value)).toContain("did X");
  });

  it("replay seeds the sink from the recovered output instead of deleting it: memoised work is skipped, no second spill", async () => {
    const { store, workspace } = await session();
    let runs = 0;
    let spills = 0;
    let hang: Promise<void> = new Promise(() => {});
    const tool: ToolDefinition = {
      name: "build",
      description: "",
      parameters: {},
      replaySafe: true,
      async execute(_id, _a, _s, out, ctx) {
        runs++;
        if (ctx.memoized("compiled") === undefined) {
          spills++;
          out.write("compiled 120 files, spilled to spill/build.log\n");
          out.usage({ input: 100 });
          out.addTools(["linker"]);
          await ctx.memo("compiled", true);
        }
        await hang; // the first run never finishes: the "crash"
        out.write("linked\n");
      },
    };
    const a = createHarness({ store, workspace, tools: [tool] });
    void a.runTools("op", [{ toolCallId: "c", toolName: "build", args: {} }]);
    await until(() => store.get(value("tool_memo", "op:c:compiled", operationScope("op"))) !== undefined, "the memo to land");
    // A second harness over the same durable state, as after a restart.
    hang = Promise.resolve();
    const b = createHarness({ store, workspace, tools: [tool] });
    const [op] = b.recover();
    expect(op!.operationId).toBe("op");
    expect(op!.calls[0]!.output!.content[0].text).toBe("compiled 120 files, spilled to spill/build.log\n");
    const [r] = await b.resume("op");
    expect(runs).toBe(2);
    expect(spills).toBe(1);
    expect((r!.content[0] as { text: string }).text).toBe("compiled 120 files, spilled to spill/build.log\nlinked\n");
    expect(b.recover()).toEqual([]);
    expect(b.transcript()).toHaveLength(1);
  });

  it("a settlement that fails to commit leaves the operation listed as unsettled", async () => {
    const root = tempDir("spool-ws-");
    const store = createMemoryStore();
    const commit = store.commit.bind(store);
    (store as { commit: typeof store.commit }).commit = (writes) =>
      writes.some((w) => (w as { op?: string }).op === "retireScope") ? Promise.reject(new Error("disk full")) : commit(writes);
    const tool: ToolDefinition = { name: "t", description: "", parameters: {}, execute: (_i, _a, _s, out) => out.write("done\n") };
    const harness = createHarness({ store, workspace: createWorkspace({ dir: root, keep: true }), tools: [tool] });
    await expect(harness.runTools("op", [{ toolCallId: "c", toolName: "t", args: {} }])).rejects.toThrow("disk full");
    const [op] = harness.recover();
    expect(op!.operationId).toBe("op");
    expect(op!.calls[0]!.output!.content[0].text).toBe("done\n");
  });

  it("a call of a tool that is not replay-safe settles as interrupted with its recovered output", async () => {
    const root = tempDir("spool-ws-");
    const store = createMemoryStore();
    const workspace = createWorkspace({ dir: root, keep: true });
    const a = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 5 });
    const ac = new AbortController();
    void a.runTools("op", [{ toolCallId: "c", toolName: "bash", args: { command: "echo half way; sleep 5" } }], { signal: ac.signal }).catch(() => {});
    await until(() => JSON.stringify(store.readList(outputList("op", "c"), { order: "asc" }).elements).includes("half way"), "the output to be durable");
    const b = createHarness({ store, workspace, tools: [createBashTool()] });
    const [r] = await b.resume("op");
    ac.abort();
    expect(r!.isError).toBe(true);
    expect((r!.content[0] as { text: string }).text).toMatch(/^half way\n\[interrupted/);
  });

  it("resumeLeftOpen settles what a writer before it left open, never an operation it runs itself; a call record left running ends in the same transaction", async () => {
    const root = tempDir("spool-ws-");
    const store = createMemoryStore();
    const workspace = createWorkspace({ dir: root, keep: true });
    let release!: () => void;
    const gated = (gate: Promise<void>): ToolDefinition => ({
      name: "t",
      description: "",
      parameters: {},
      async execute(_id, _a, _s, out) {
        out.write("half way\n");
        await gate;
        out.write("done\n");
      },
    });
    // The dead writer: its call record says running, its output is durable, it never settles.
    const running = { command: "t", cwd: root, pid: 1, startedAt: "2026-01-01T00:00:00.000Z", endedAt: null, status: "running" as const, exitCode: null };
    await store.commit([setValue(callRecord("old-call"), running)]);
    const dead = createHarness({ store, workspace, tools: [gated(new Promise(() => {}))], minIntervalMs: 5 });
    void dead.runTools("old", [{ toolCallId: "old-call", toolName: "t", args: {} }]);
    await until(() => JSON.stringify(store.readList(outputList("old", "old-call")).elements).includes("half way"), "the output to be durable");

    const commits: string[][] = [];
    const commit = store.commit.bind(store);
    (store as { commit: typeof store.commit }).commit = (writes) => (commits.push(writes.map((w) => (w as { op: string }).op)), commit(writes));
    const next = createHarness({ store, workspace, tools: [gated(new Promise((r) => (release = r)))], minIntervalMs: 5 });
    // One of its own, still running when it resumes what was left open: not touched.
    const own = next.runTools("own", [{ toolCallId: "own-call", toolName: "t", args: {} }]);
    await until(() => next.recover().some((o) => o.operationId === "own"), "its own operation to start");
    const [r] = await next.resumeLeftOpen();
    expect(r).toMatchObject({ toolCallId: "old-call", isError: true });
    expect((r!.content[0] as { text: string }).text).toMatch(/^half way\n\[interrupted: spool stopped while this call was running/);
    expect(next.recover().map((o) => o.operationId)).toEqual(["own"]);
    expect(await next.resumeLeftOpen()).toEqual([]);
    // transcript entry, open operations, scope retired, call record: one transaction
    expect(commits.filter((ops) => ops.includes("retireScope")).map((ops) => ops.sort())).toEqual([["appendList", "retireScope", "setValue", "setValue"]]);
    expect(store.get(callRecord("old-call"))).toMatchObject({ status: "interrupted", endedAt: expect.any(String) });
    release();
    await own;
    expect(next.transcript().map((m) => m.toolCallId)).toEqual(["old-call", "own-call"]);
  });

  it("resume refuses an operation this harness runs, its own or one it is resuming: a second resume ran the calls again and appended a second result", async () => {
    const store = createMemoryStore();
    const workspace = createWorkspace({ dir: tempDir("spool-ws-"), keep: true });
    let release!: () => void;
    const replayable = (gate: Promise<void>): ToolDefinition => ({
      name: "t",
      description: "",
      parameters: {},
      replaySafe: true,
      async execute(_id, _a, _s, out) {
        out.write("ran\n");
        await gate;
      },
    });
    // The dead writer: it never settles.
    const dead = createHarness({ store, workspace, tools: [replayable(new Promise(() => {}))] });
    void dead.runTools("old", [{ toolCallId: "old-call", toolName: "t", args: {} }]);
    await until(() => dead.recover().length === 1, "the operation to start");
    const next = createHarness({ store, workspace, tools: [replayable(new Promise((r) => (release = r)))] });
    const first = next.resume("old");
    await expect(next.resume("old")).rejects.toMatchObject({ code: "SPOOL_HARNESS_OPERATION_OPEN" });
    await expect(next.resumeLeftOpen()).resolves.toEqual([]);
    const own = next.runTools("own", [{ toolCallId: "own-call", toolName: "t", args: {} }]);
    await until(() => next.recover().some((o) => o.operationId === "own"), "its own operation to start");
    await expect(next.resume("own")).rejects.toThrow(/operation own is running in this harness; it settles when its calls end/);
    release();
    await Promise.all([first, own]);
    // one result each: the refused resume ran nothing
    expect(
      next
        .transcript()
        .map((m) => m.toolCallId)
        .sort(),
    ).toEqual(["old-call", "own-call"]);
  });

  it("resumeLeftOpen on a session nothing was left open in writes nothing", async () => {
    const store = createMemoryStore();
    const before = store.stats();
    const harness = createHarness({ store, workspace: createWorkspace({ dir: tempDir("spool-ws-"), keep: true }), tools: [createBashTool()] });
    expect(await harness.resumeLeftOpen()).toEqual([]);
    expect(store.stats()).toEqual(before);
  });
});

describe("lane view", () => {
  it("folds tool events by mutation and ignores events for unknown calls", () => {
    const view = emptyLane();
    reduceLane(view, { type: "operation_start", operationId: "op" });
    reduceLane(view, { type: "tool_update", operationId: "op", toolCallId: "ghost", ops: [["r", { x: 1 }]] });
    expect(view.operation!.tools).toEqual([]);
    reduceLane(view, { type: "tool_start", operationId: "op", toolCallId: "c", toolName: "bash", args: { command: "ls" } });
    reduceLane(view, { type: "tool_update", operationId: "op", toolCallId: "c", ops: [["r", { content: [{ type: "text", text: "a" }] }]] });
    reduceLane(view, { type: "tool_update", operationId: "op", toolCallId: "c", ops: [["a", ["content", 0, "text"], "b"]] });
    expect(view.operation!.tools[0]!.output).toEqual({ content: [{ type: "text", text: "ab" }] });
    reduceLane(view, { type: "tool_end", operationId: "op", toolCallId: "c", isError: false });
    expect(view.operation!.tools).toEqual([]);
    expect(view.ended).toEqual([{ id: "c", name: "bash", isError: false }]);
  });
});

describe("built-in read and recall tools", () => {
  it("read pages a workspace file by lines, says how to get the next page, and refuses paths outside the workspace", async () => {
    const { store, workspace, dir } = await session();
    const lines = Array.from({ length: 50 }, (_, i) => `\u001b[32mline ${i + 1}\u001b[0m`).join("\n") + "\n";
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(dir, "spill", "x.log"), lines);
    const harness = createHarness({ store, workspace, tools: [createReadTool()] });
    const [page, outside] = await harness.runTools("op", [
      { toolCallId: "r1", toolName: "read", args: { path: "spill/x.log", offset: 11, limit: 5 } },
      { toolCallId: "r2", toolName: "read", args: { path: "/etc/passwd" } },
    ]);
    expect((page!.content[0] as { text: string }).text).toBe("line 11\nline 12\nline 13\nline 14\nline 15\n\n[Lines 11–15 of 50. Next: offset=16.]");
    expect(outside!.isError).toBe(true);
    expect((outside!.content[0] as { text: string }).text).toContain("limited to the session workspace");
    await store.close();
  });

  it("read says a binary file is binary, once, instead of paging it a line at a time", async () => {
    const { store, workspace, dir } = await session();
    const { writeFileSync } = await import("node:fs");
    const { randomBytes } = await import("node:crypto");
    const bytes = Buffer.concat(Array.from({ length: 200 }, () => Buffer.concat([randomBytes(999).map((b) => (b === 10 ? 0 : b)), Buffer.from("\n")])));
    writeFileSync(join(dir, "spill", "blob.bin"), bytes);
    const harness = createHarness({ store, workspace, tools: [createReadTool()] });
    const [r] = await harness.runTools("op", [{ toolCallId: "r", toolName: "read", args: { path: "spill/blob.bin" } }]);
    expect((r!.content[0] as { text: string }).text).toBe("[spill/blob.bin looks binary (195.3 KB); read shows text files only.]");
    await store.close();
  });

  it("recall returns an archived text byte-identical", async () => {
    const { store, workspace } = await session();
    const original = "héllo\r\nwörld \u0000 ✓\n".repeat(100);
    const key = workspace.archive.put(original);
    const harness = createHarness({ store, workspace, tools: [createRecallTool()] });
    const [r] = await harness.runTools("op", [{ toolCallId: "c", toolName: "recall", args: { key: `<<ccr:${key}>>` } }]);
    expect((r!.content[0] as { text: string }).text).toBe(original);
    await store.close();
  });

  it("recall of a 5 MB one-line text answers within the tool's cap, and the column calls it advertises page through the whole line", async () => {
    const { store, workspace } = await session();
    const line = `[${Array.from({ length: 250_000 }, (_, i) => `"item-${i}"`).join(",")}]`;
    expect(line.length).toBeGreaterThan(3_000_000);
    const key = workspace.archive.put(line);
    const maxChars = 500_000;
    const harness = createHarness({ store, workspace, tools: [createRecallTool({ maxChars })] });
    let args: Record<string, unknown> = { key };
    let rebuilt = "";
    for (let call = 0; call < 20; call++) {
      const [r] = await harness.runTools(`op-${call}`, [{ toolCallId: `c${call}`, toolName: "recall", args }]);
      const text = (r!.content[0] as { text: string }).text;
      expect(r!.isError).toBe(false);
      expect(text.length).toBeLessThanOrEqual(maxChars);
      const nl = text.indexOf("\n");
      rebuilt += text.slice(nl + 1);
      const next = /Next: recall <<ccr:[0-9a-f]{16}>> offset=(\d+) column=(\d+)\./.exec(text.slice(0, nl));
      if (!next) break;
      args = { key, offset: Number(next[1]), column: Number(next[2]) };
    }
    expect(rebuilt).toBe(line);
    await store.close();
  });

  it("a recall tool with a cap below the minimum is refused when it is created", () => {
    expect(() => createRecallTool({ maxChars: 1000 })).toThrow(/maxChars must be a whole number of 16,384 or more/);
  });
});
