// Scenarios that harness.test.ts, state.test.ts, wire.test.ts and
// sink.test.ts do not already pin, run through the real harness (JSONL sessions, real bash where
// output is involved, real HTTP for the wire). Not applicable here: assistant-output streaming,
// navigation_end resnapshots and Chord's `reset` message (spool has no such events or message).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer as createTcpServer, connect, type Socket } from "node:net";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createWorkspace } from "../../src/context/index.js";
import { apply, decoder, isBase, track, type Op, type WireOp } from "../../src/delta/index.js";
import {
  createBashTool,
  createHarness,
  createStateHost,
  emptyLane,
  operationScope,
  outputList,
  readDurableOutput,
  reduceLane,
  type HarnessEvent,
  type LaneView,
  type ToolDefinition,
} from "../../src/harness/index.js";
import { ToolOutputClosedError, type ToolOutputState } from "../../src/output/index.js";
import { openSessionRepo, value, type Store, type Write } from "../../src/store/index.js";
import { createWireServer, subscribe } from "../../src/wire/index.js";
// @ts-expect-error -- plain JS fixture shared with the crash child
import { STEPS, stepsTool } from "./fixtures/steps-tool.mjs";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const here = dirname(fileURLToPath(import.meta.url));
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

async function session(root = tempDir("spool-scen-")) {
  const repo = openSessionRepo(root, { backend: "jsonl" });
  const s = await repo.create();
  cleanups.push(() => s.store.close().catch(() => {}));
  return { ...s, repo, root, workspace: createWorkspace({ dir: s.dir, keep: true }) };
}

/** Records every transaction handed to the real store's commit, in order. */
function recordCommits(store: Store): Write<never>[][] {
  const log: Write<never>[][] = [];
  const commit = store.commit.bind(store);
  (store as { commit: Store["commit"] }).commit = (writes) => {
    log.push([...(writes as Write<never>[])]);
    return commit(writes);
  };
  return log;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const updatesOf = (events: HarnessEvent[], id?: string) =>
  events.filter((e): e is Extract<HarnessEvent, { type: "tool_update" }> => e.type === "tool_update" && (id === undefined || e.toolCallId === id));
const fold = (batches: readonly (readonly Op[])[]) => {
  let v: ToolOutputState | undefined;
  for (const b of batches) v = apply(v, structuredClone(b) as Op[]);
  return v!;
};
const TEXT = '["content",0,"text"]';

describe("sink basics through the harness", () => {
  it("tool_start carries identity only and tool_end carries no content, details, usage or terminate", async () => {
    const { store, workspace } = await session();
    const harness = createHarness({ store, workspace, tools: [createBashTool()] });
    const events: HarnessEvent[] = [];
    harness.on((e) => events.push(e));
    await harness.runTools("op", [{ toolCallId: "c1", toolName: "bash", args: { command: "echo hi" } }]);
    const start = events.find((e) => e.type === "tool_start")!;
    const end = events.find((e) => e.type === "tool_end")!;
    expect(Object.keys(start).sort()).toEqual(["args", "operationId", "toolCallId", "toolName", "type"]);
    expect(start).toEqual({ type: "tool_start", operationId: "op", toolCallId: "c1", toolName: "bash", args: { command: "echo hi" } });
    expect(end).toEqual({ type: "tool_end", operationId: "op", toolCallId: "c1", isError: false });
  });

  it("no tool_update follows tool_end even when a paced flush was armed at completion", async () => {
    const { store, workspace } = await session();
    const tool: ToolDefinition = {
      name: "burst",
      description: "",
      parameters: {},
      execute(_id, _a, _s, out) {
        out.write("first\n"); // published at once
        out.write("second\n"); // held: arms the trailing timer (300 ms)
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool], minIntervalMs: 300 });
    const events: HarnessEvent[] = [];
    harness.on((e) => events.push(e));
    await harness.runTools("op", [{ toolCallId: "c", toolName: "burst", args: {} }]);
    await sleep(500); // on purpose: past the 300 ms trailing timer, which must not publish after tool_end
    const endAt = events.findIndex((e) => e.type === "tool_end");
    expect(events.slice(endAt + 1).map((e) => e.type)).toEqual(["operation_end"]);
    expect(fold(updatesOf(events).map((u) => u.ops)).content[0].text).toBe("first\nsecond\n");
  });

  it("a failing tool can set terminate, and the fold keeps it with the partial output and the error", async () => {
    const { store, workspace } = await session();
    const tool: ToolDefinition = {
      name: "t",
      description: "",
      parameters: {},
      execute(_id, _a, _s, out) {
        out.write("half\n");
        out.terminate(true);
        throw new Error("gave up");
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    const events: HarnessEvent[] = [];
    harness.on((e) => events.push(e));
    const [r] = await harness.runTools("op", [{ toolCallId: "c", toolName: "t", args: {} }]);
    const v = fold(updatesOf(events).map((u) => u.ops));
    expect(v.terminate).toBe(true);
    expect(v.content[0].text).toBe("half\ngave up");
    expect(r!.isError).toBe(true);
  });
});

describe("content shape and windowing through the harness", () => {
  it("content is one text block then images; text after an image lands in the text block; images are never windowed", async () => {
    const { store, workspace } = await session();
    const big = Buffer.alloc(30_000, 7).toString("base64"); // 40 KB each, window is 1 KB
    const tool: ToolDefinition = {
      name: "shots",
      description: "",
      parameters: {},
      output: { maxBytes: 1024, maxLines: 100 },
      execute(_id, _a, _s, out) {
        out.write("before\n");
        for (let i = 0; i < 3; i++) {
          out.image({ data: big, mimeType: "image/png" });
          out.write(`after image ${i}\n`);
        }
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    const events: HarnessEvent[] = [];
    harness.on((e) => events.push(e));
    const [r] = await harness.runTools("op", [{ toolCallId: "c", toolName: "shots", args: {} }]);
    const v = fold(updatesOf(events).map((u) => u.ops));
    expect(v.content.map((b) => b.type)).toEqual(["text", "image", "image", "image"]);
    expect(v.content[0].text).toBe("before\nafter image 0\nafter image 1\nafter image 2\n");
    for (const img of v.content.slice(1)) expect((img as { data: string }).data).toBe(big);
    expect(r!.content.map((c) => c.type)).toEqual(["text", "image", "image", "image"]);
  });

  it("retain head stops at the cap: later writes send no text ops, only the totals move", async () => {
    const { store, workspace } = await session();
    const tool: ToolDefinition = {
      name: "ls",
      description: "",
      parameters: {},
      output: { retain: "head", maxBytes: 4096, maxLines: 10 },
      async execute(_id, _a, _s, out) {
        for (let i = 0; i < 40; i++) {
          out.write(`entry ${i}\n`);
          out.flush({ force: true });
        }
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    const events: HarnessEvent[] = [];
    harness.on((e) => events.push(e));
    await harness.runTools("op", [{ toolCallId: "c", toolName: "ls", args: {} }]);
    const ups = updatesOf(events);
    const v = fold(ups.map((u) => u.ops));
    expect(v.content[0].text).toBe(Array.from({ length: 10 }, (_, i) => `entry ${i}\n`).join(""));
    expect(v.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 40, outputLines: 10 });
    // Once the cap is reached (the 10th line), no batch touches the text again.
    const later = ups.slice(11).flatMap((u) => u.ops);
    expect(later.length).toBeGreaterThan(0);
    expect(later.filter((op) => JSON.stringify(op[1]).startsWith('["content"'))).toEqual([]);
  });

  it("details mutations arrive as granular s/p/d ops and never as a whole details object", async () => {
    const { store, workspace } = await session();
    const tool: ToolDefinition = {
      name: "tests",
      description: "",
      parameters: {},
      execute(_id, _a, _s, out) {
        out.details.passed = 0;
        out.details.failures = [];
        out.write("running\n");
        out.flush({ force: true });
        for (let i = 1; i <= 3; i++) {
          out.details.current = `t${i}`;
          out.details.passed = i;
          out.write(`ok t${i}\n`);
          out.flush({ force: true });
        }
        (out.details.failures as string[]).push("t4");
        delete out.details.current;
        out.write("FAIL t4\n");
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    const events: HarnessEvent[] = [];
    harness.on((e) => events.push(e));
    await harness.runTools("op", [{ toolCallId: "c", toolName: "tests", args: {} }]);
    const later = updatesOf(events)
      .slice(1)
      .flatMap((u) => u.ops);
    const onDetails = later.filter((op) => JSON.stringify(op[1]).startsWith('["details"'));
    expect(onDetails.some((op) => op[0] === "s" && JSON.stringify(op[1]) === '["details","passed"]')).toBe(true);
    expect(onDetails).toContainEqual(["p", ["details", "failures"], 0, 0, ["t4"]]);
    expect(onDetails).toContainEqual(["d", ["details", "current"]]);
    expect(later.some((op) => JSON.stringify(op[1]) === '["details"]')).toBe(false);
    expect(fold(updatesOf(events).map((u) => u.ops)).details).toEqual({ passed: 3, failures: ["t4"] });
  });
});

describe("durability and recovery", () => {
  it("recovery (desc to the last base, then forward) equals the live fold at every flush, and periodic rebase bounds the replay", async () => {
    const { store, workspace } = await session();
    const rebaseEvery = 4;
    const tool: ToolDefinition = {
      name: "log",
      description: "",
      parameters: {},
      output: { maxBytes: 2000, maxLines: 1000 },
      async execute(_id, _a, _s, out) {
        for (let i = 0; i < 30; i++) {
          out.write(`line ${i} ${"x".repeat(i * 7)}\n`);
          out.details.i = i;
          out.flush({ force: true });
          await sleep(1); // the producer's pacing, on purpose: flushes spread over time
        }
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool], rebaseEvery });
    const checks: { live: ToolOutputState; replayed: number }[] = [];
    const live: (readonly Op[])[] = [];
    const commits = recordCommits(store);
    // Compare after each durable commit has landed: the harness commits in flush order.
    harness.on((e) => {
      if (e.type === "tool_update") live.push(e.ops);
    });
    const original = store.commit;
    let committed = 0;
    let longest = 0;
    (store as { commit: Store["commit"] }).commit = async (writes) => {
      const r = await original(writes);
      if (writes.some((w) => w.op === "appendList" && w.namespace === "tool_output")) {
        committed++;
        // A base clears what came before it: the list holds the batches since the last base.
        longest = Math.max(longest, store.readList(outputList("op", "c"), { order: "asc", limit: 10_000 }).elements.length);
        const { output, replayed } = readDurableOutput(store, "op", "c");
        expect(output).toEqual(fold(live.slice(0, committed)));
        checks.push({ live: output!, replayed });
      }
      return r;
    };
    await harness.runTools("op", [{ toolCallId: "c", toolName: "log", args: {} }]);
    expect(checks.length).toBe(live.length);
    expect(Math.max(...checks.map((c) => c.replayed))).toBeLessThanOrEqual(rebaseEvery);
    expect(longest).toBeLessThanOrEqual(rebaseEvery);
    const tags = commits.flatMap((t) => t.filter((w) => w.op === "appendList" && w.namespace === "tool_output").map((w) => (w as { tag?: string }).tag));
    expect(tags.filter((t) => t === "base").length).toBeGreaterThanOrEqual(Math.floor(live.length / rebaseEvery));
  });

  it("a tool that prints for a long time keeps its sidecar bounded on disk, and recovery still equals the live fold", async () => {
    const { store, workspace, file } = await session();
    const sidecar = join(`${file}.scopes`, `scope-${encodeURIComponent(operationScope("op").id)}.scope`);
    let largest = 0;
    let recoveredAtEnd: ToolOutputState | undefined;
    const tool: ToolDefinition = {
      name: "server",
      description: "",
      parameters: {},
      async execute(_id, _a, _s, out) {
        // 4,000 flushes of a dev server's log (a base every 50, each the 50 KB window so far): never
        // rewritten, the sidecar grew to 5.2 MB here, however little of it recovery reads.
        for (let i = 0; i < 4000; i++) {
          out.write(`[${i}] GET /api/items?page=${i % 97} 200 in ${(i * 7919) % 1000} ms\n`.repeat(3));
          out.flush({ force: true });
          if (i % 20 === 0) await sleep(0); // lets the durable chain run, as a real producer's pacing does
          if (existsSync(sidecar)) largest = Math.max(largest, statSync(sidecar).size);
        }
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    const live: (readonly Op[])[] = [];
    harness.on((e) => {
      if (e.type === "tool_update") live.push(e.ops);
      // The sink's last durable write has landed by tool_end; the settle after it removes the sidecar.
      if (e.type === "tool_end") recoveredAtEnd = readDurableOutput(store, "op", "c").output;
    });
    await harness.runTools("op", [{ toolCallId: "c", toolName: "server", args: {} }]);
    expect(live.length).toBeGreaterThanOrEqual(4000);
    expect(recoveredAtEnd).toEqual(fold(live));
    // The store rewrites a sidecar once it reaches 1 MiB and 4 × what it held after its last rewrite.
    expect(largest).toBeGreaterThan(512 * 1024);
    expect(largest).toBeLessThan(1.1 * 1024 * 1024);
  });

  it("each durable stream has its own encoder: one call's list decodes alone with a fresh decoder", async () => {
    const { store, workspace } = await session();
    const harness = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 5 });
    const cmd = (tag: string) => ({ command: `for i in $(seq 1 12); do echo ${tag}$i; sleep 0.02; done` });
    const lists: WireOp[][][] = [];
    harness.on((e) => {
      // Each call's list is complete at its own tool_end (its commits are awaited before it).
      if (e.type === "tool_end")
        lists[e.toolCallId === "a" ? 0 : 1] = store.readList(outputList("op", e.toolCallId), { order: "asc" }).elements.map((el) => el.value);
    });
    await harness.runTools("op", [
      { toolCallId: "a", toolName: "bash", args: cmd("a") },
      { toolCallId: "b", toolName: "bash", args: cmd("b") },
    ]);
    expect(lists.filter(Boolean)).toHaveLength(2);
    for (const [i, list] of lists.entries()) {
      expect(list.length).toBeGreaterThan(3);
      // Interned refs appear (so a shared encoder would have leaked ids across lists) and decode alone.
      expect(list.some((batch) => batch.some((op) => op[0] === "#"))).toBe(true);
      const dec = decoder();
      let v: ToolOutputState | undefined;
      for (const batch of list) v = apply(v, dec.decode(structuredClone(batch)));
      const tag = i === 0 ? "a" : "b";
      expect(v!.content[0].text).toBe(Array.from({ length: 12 }, (_, k) => `${tag}${k + 1}\n`).join(""));
    }
  });

  it("checkpoints are monotonic: with commits landing out of order at the disk, the durable list is still in flush order", async () => {
    const { store, workspace } = await session();
    // Random latency in front of the real store: a fire-and-forget writer would let a later batch land first.
    const commit = store.commit.bind(store);
    (store as { commit: Store["commit"] }).commit = async (writes) => {
      await sleep(Math.random() * 15);
      return commit(writes);
    };
    const tool: ToolDefinition = {
      name: "count",
      description: "",
      parameters: {},
      async execute(_id, _a, _s, out, ctx) {
        for (let i = 0; i < 40; i++) {
          out.write(`${i}\n`);
          out.flush({ force: true });
          if (i % 10 === 9) await ctx.memo(`m${i}`, i);
        }
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    let durable: WireOp[][] = [];
    harness.on((e) => {
      if (e.type === "tool_end") durable = store.readList(outputList("op", "c"), { order: "asc" }).elements.map((el) => el.value);
    });
    await harness.runTools("op", [{ toolCallId: "c", toolName: "count", args: {} }]);
    const dec = decoder();
    let v: ToolOutputState | undefined;
    let lines = -1;
    for (const batch of durable) {
      v = apply(v, dec.decode(structuredClone(batch)));
      const n = v!.content[0].text.split("\n").length;
      expect(n).toBeGreaterThanOrEqual(lines);
      lines = n;
    }
    expect(v!.content[0].text).toBe(Array.from({ length: 40 }, (_, i) => `${i}\n`).join(""));
  });
});

describe("replay", () => {
  it("replay seeds from durable output and never loses it: the pre-crash batches stay until a base holding them replaces them in one commit, usage and addedTools survive", async () => {
    const { store, workspace } = await session();
    const commits = recordCommits(store);
    let hang: Promise<void> = new Promise(() => {});
    const tool: ToolDefinition = {
      name: "build",
      description: "",
      parameters: {},
      replaySafe: true,
      async execute(_id, _a, _s, out, ctx) {
        if (ctx.memoized("compiled") === undefined) {
          out.write("compiled\n");
          out.usage({ input: 100 });
          out.addTools(["linker"]);
          await ctx.memo("compiled", true);
        }
        await hang;
        out.usage({ input: 1 });
        out.write("linked\n");
      },
    };
    const a = createHarness({ store, workspace, tools: [tool] });
    void a.runTools("op", [{ toolCallId: "c", toolName: "build", args: {} }]);
    await until(() => store.get(value("tool_memo", "op:c:compiled", operationScope("op"))) !== undefined, "the memo to land");
    hang = Promise.resolve();
    const b = createHarness({ store, workspace, tools: [tool] });
    const events: HarnessEvent[] = [];
    const during: string[] = [];
    b.on((e) => {
      events.push(e);
      if (e.type === "tool_update") during.push(readDurableOutput(store, "op", "c").output?.content[0].text ?? "");
    });
    const resumeFrom = commits.length;
    await b.resume("op");
    // At every update of the resumed run the durable output still holds what was written before the crash.
    expect(during.length).toBeGreaterThan(0);
    for (const text of during) expect(text.startsWith("compiled\n")).toBe(true);
    // The resume path deletes no memo, and the call's earlier batches only together with a base.
    for (const commit of commits.slice(resumeFrom)) {
      expect(commit.filter((w) => w.op === "deleteValue")).toEqual([]);
      if (commit.some((w) => w.op === "deleteList")) {
        expect(commit.map((w) => [w.op, (w as { tag?: string }).tag])).toEqual([
          ["deleteList", undefined],
          ["appendList", "base"],
        ]);
      }
    }
    const first = updatesOf(events)[0]!.ops;
    expect(isBase(first)).toBe(true);
    // The base is the seeded state plus the change that triggered the flush (the usage bump).
    expect(first[0]![1]).toMatchObject({ content: [{ type: "text", text: "compiled\n" }], usage: { input: 101 }, addedTools: ["linker"] });
    const v = fold(updatesOf(events).map((u) => u.ops));
    expect(v.content[0].text).toBe("compiled\nlinked\n");
    expect(v.usage).toEqual({ input: 101 });
    expect(v.addedTools).toEqual(["linker"]);
  });

  it("memo + checkpoint atomicity under SIGKILL: every committed memo's output is recovered, and replay writes each memoised step exactly once", async () => {
    const root = tempDir("spool-memo-");
    const runs = 6;
    const results = await Promise.all(
      Array.from({ length: runs }, (_, k) => {
        const id = `memo${k}`;
        const child = spawn(process.execPath, [join(here, "fixtures", "memo-child.mjs"), root, id], { stdio: ["ignore", "pipe", "inherit"] });
        let acked = -1;
        let settled = false;
        let timer: ReturnType<typeof setTimeout> | undefined;
        // A random moment to crash, on purpose: after a random number of acknowledged steps (well before
        // the last, whatever the machine's speed) and a random few milliseconds more, so the kill lands
        // anywhere within a step. A delay after the first output alone let fast runs settle first.
        const crashAfter = Math.floor(Math.random() * (STEPS / 2));
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (s: string) => {
          for (const m of s.matchAll(/MEMO (\d+)/g)) acked = Math.max(acked, Number(m[1]));
          if (s.includes("SETTLED")) settled = true;
          if (acked >= crashAfter) timer ??= setTimeout(() => child.kill("SIGKILL"), Math.random() * 8);
        });
        return new Promise<{ id: string; acked: number; settled: boolean }>((resolve) =>
          child.on("close", () => {
            if (timer) clearTimeout(timer);
            resolve({ id, acked, settled });
          }),
        );
      }),
    );
    expect(results.filter((r) => !r.settled).length).toBeGreaterThanOrEqual(runs - 1);
    const repo = openSessionRepo(root, { backend: "jsonl" });
    for (const r of results.filter((x) => !x.settled)) {
      const store = await repo.open(r.id);
      const dir = join(root, r.id);
      const harness = createHarness({ store, workspace: createWorkspace({ dir, keep: true }), tools: [stepsTool()] });
      const [op] = harness.recover();
      const text = op!.calls[0]!.output!.content[0].text;
      const memos: number[] = [];
      for (let i = 0; i < STEPS; i++) {
        if (store.get(value<number>("tool_memo", `op1:c1:s${i}`, operationScope("op1"))) !== undefined) memos.push(i);
      }
      // Memos are contiguous from 0 and include every one the child saw acknowledged.
      expect(memos).toEqual(Array.from({ length: memos.length }, (_, i) => i));
      expect(memos.length - 1).toBeGreaterThanOrEqual(r.acked);
      // Never lost: each committed memo's output is in the recovered output.
      for (const i of memos) expect(text).toContain(`step ${i} done\n`);
      const [result] = await harness.resume("op1");
      const final = (result!.content[0] as { text: string }).text;
      const lines = final.split("\n").filter(Boolean);
      // Memoised steps are never redone; only the one step whose memo had not committed may repeat.
      for (let i = 0; i < STEPS; i++) {
        const count = lines.filter((l) => l === `step ${i} done`).length;
        expect(count, `step ${i} in ${r.id} (memos 0..${memos.length - 1})`).toBe(i === memos.length && text.includes(`step ${i} done\n`) ? 2 : 1);
      }
      expect(harness.recover()).toEqual([]);
      expect(existsSync(join(dir, "session.jsonl.scopes")) ? readdirSync(join(dir, "session.jsonl.scopes")) : []).toEqual([]);
      await store.close();
    }
  }, 60_000);
});

describe("retirement and late progress", () => {
  it("every terminal path (success, error, abort, resume as interrupted) retires the scope exactly once, last, in the transaction that appends the results", async () => {
    const { store, workspace } = await session();
    const commits = recordCommits(store);
    const harness = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 5 });
    await harness.runTools("ok", [{ toolCallId: "c", toolName: "bash", args: { command: "echo ok" } }]);
    await harness.runTools("err", [{ toolCallId: "c", toolName: "bash", args: { command: "echo no; exit 2" } }]);
    const ac = new AbortController();
    harness.on((e) => {
      if (e.type === "tool_update" && e.operationId === "abort" && JSON.stringify(e.ops).includes("started")) ac.abort();
    });
    await harness.runTools("abort", [{ toolCallId: "c", toolName: "bash", args: { command: "echo started; sleep 20" } }], { signal: ac.signal });
    // An unsettled operation: a harness that stops (its run never ends) and another that resumes it.
    const stuck: ToolDefinition = {
      name: "stuck",
      description: "",
      parameters: {},
      execute: (_i, _a, _s, out) => (out.write("half\n"), new Promise(() => {})),
    };
    void createHarness({ store, workspace, tools: [stuck] }).runTools("crash", [{ toolCallId: "c", toolName: "stuck", args: {} }]);
    await until(() => store.readList(outputList("crash", "c"), { order: "asc" }).elements.length > 0);
    await createHarness({ store, workspace, tools: [stuck] }).resume("crash");

    for (const op of ["ok", "err", "abort", "crash"]) {
      const retiring = commits.filter((t) => t.some((w) => w.op === "retireScope" && (w as { target: { id: string } }).target.id === operationScope(op).id));
      expect(retiring, op).toHaveLength(1);
      const t = retiring[0]!;
      expect(t.at(-1)!.op).toBe("retireScope");
      expect(t.filter((w) => w.op === "retireScope")).toHaveLength(1);
      expect(t.filter((w) => w.op === "appendList" && w.namespace === "transcript")).toHaveLength(1);
      // Nothing for the scope before its first output or after its retirement.
      const after = commits.slice(commits.indexOf(t) + 1).flat();
      expect(after.filter((w) => (w.scope as { id?: string }).id === operationScope(op).id)).toEqual([]);
    }
    expect(harness.transcript().map((m) => [m.isError, (m.content[0] as { text: string }).text.split("\n")[0]])).toEqual([
      [false, "ok"],
      [true, "no"],
      [true, "started"],
      [true, "half"],
    ]);
  });

  it("late progress after settlement cannot commit or reopen the scope: writes and memos from a stray timer fail with ToolOutputClosedError", async () => {
    const { store, workspace, file } = await session();
    const commits = recordCommits(store);
    const late: unknown[] = [];
    const tool: ToolDefinition = {
      name: "leaky",
      description: "",
      parameters: {},
      execute(_id, _a, _s, out, ctx) {
        out.write("done\n");
        setTimeout(() => {
          try {
            out.write("late\n");
          } catch (e) {
            late.push(e);
          }
          ctx.memo("late", 1).catch((e: unknown) => late.push(e));
        }, 50);
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    await harness.runTools("op", [{ toolCallId: "c", toolName: "leaky", args: {} }]);
    const settledAt = commits.length;
    await until(() => late.length === 2, "both late attempts to fail");
    expect(late).toHaveLength(2);
    for (const e of late) expect(e).toBeInstanceOf(ToolOutputClosedError);
    expect(commits.length).toBe(settledAt);
    expect(readdirSync(`${file}.scopes`)).toEqual([]);
    expect(harness.transcript().map((m) => (m.content[0] as { text: string }).text)).toEqual(["done\n"]);
  });

  it("closing the store mid-run emits no retirement: the run fails to settle and a reopen recovers the output and its memo", async () => {
    const { store, workspace, repo, id, file } = await session();
    const commits = recordCommits(store);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tool: ToolDefinition = {
      name: "t",
      description: "",
      parameters: {},
      async execute(_id, _a, _s, out, ctx) {
        out.write("part one\n");
        await ctx.memo("one", 1);
        await gate;
        out.write("part two\n");
      },
    };
    const harness = createHarness({ store, workspace, tools: [tool] });
    const run = harness.runTools("op", [{ toolCallId: "c", toolName: "t", args: {} }]);
    await until(() => commits.some((t) => t.some((w) => w.op === "setValue" && w.namespace === "tool_memo")));
    await store.close();
    release();
    await expect(run).rejects.toThrow(/closed/i);
    // The settle transaction (with its retirement) was refused by the closed store: the sidecar stays.
    expect(readdirSync(`${file}.scopes`).length).toBe(1);
    const reopened = await repo.open(id);
    cleanups.push(() => reopened.close().catch(() => {}));
    const [op] = createHarness({ store: reopened, workspace, tools: [tool] }).recover();
    expect(op!.calls[0]!.output!.content[0].text).toBe("part one\n");
    expect(reopened.get(value("tool_memo", "op:c:one", operationScope("op")))).toBe(1);
  });

  it("grep guard: the harness deletes a call's output only with the base that replaces it, and never its memos — retirement is the cleanup", () => {
    const dir = join(here, "../../src/harness");
    const files = [
      ...readdirSync(dir)
        .filter((f) => f.endsWith(".ts"))
        .map((f) => join(dir, f)),
      ...readdirSync(join(dir, "tools")).map((f) => join(dir, "tools", f)),
    ];
    const hits = files.flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/^.*\b(deleteList|deleteValue)\s*\(.*$/gm)].map((m) => `${basename(f)}: ${m[0].trim()}`),
    );
    expect(hits).toEqual(['harness.ts: void persist(info.base ? [deleteList(address), appendList(address, batch, "base")] : [appendList(address, batch)]);']);
    expect(readFileSync(join(dir, "harness.ts"), "utf8")).toMatch(/retireScope\(operationScope\(/);
  });
});

describe("lane reducer", () => {
  it("an unknown tool id on tool_update leaves the view unchanged and, under a tracker, produces no ops", () => {
    const tracker = track<LaneView>(emptyLane());
    reduceLane(tracker.state, { type: "operation_start", operationId: "op" });
    reduceLane(tracker.state, { type: "tool_start", operationId: "op", toolCallId: "c", toolName: "bash", args: {} });
    reduceLane(tracker.state, { type: "tool_update", operationId: "op", toolCallId: "c", ops: [["r", { content: [{ type: "text", text: "a" }] }]] });
    tracker.flush();
    const before = structuredClone(tracker.target);
    reduceLane(tracker.state, { type: "tool_update", operationId: "op", toolCallId: "ghost", ops: [["a", ["content", 0, "text"], "zzz"]] });
    reduceLane(tracker.state, { type: "tool_end", operationId: "op", toolCallId: "ghost", isError: true });
    expect(tracker.flush()).toEqual([]);
    expect(tracker.target).toEqual(before);
  });
});

describe("wire, end to end: harness → lane state → SSE", () => {
  async function laneServer() {
    const host = createStateHost();
    const lane = host.state("lane", emptyLane());
    const server = await createWireServer({ states: host, token: "tok" });
    cleanups.push(() => server.close());
    return { host, lane, server };
  }

  it("a real bash run reaches an SSE subscriber as ids 0.. contiguous, batch 0 exactly one r, and the replica equals the lane", async () => {
    const { store, workspace } = await session();
    const { lane, server } = await laneServer();
    const harness = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 10 });
    const ac = new AbortController();
    cleanups.push(() => ac.abort());
    const res = await fetch(`${server.url}/v1/state/lane`, { headers: { authorization: "Bearer tok" }, signal: ac.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const ids: number[] = [];
    const batches: WireOp[][] = [];
    let buf = "";
    const reading = (async () => {
      for (;;) {
        const { done, value: chunk } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return;
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          ids.push(Number(/^id: (\d+)$/m.exec(block)![1]));
          batches.push(JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as WireOp[]);
        }
      }
    })();
    await until(() => server.subscribers === 1 && ids.length === 1);
    let seenMid: LaneView | undefined;
    harness.on((e) => {
      lane.mutate((v) => reduceLane(v, e));
      if (e.type === "tool_update") seenMid = structuredClone(lane.value);
    });
    await harness.runTools("op", [{ toolCallId: "c", toolName: "bash", args: { command: "for i in $(seq 1 30); do echo line $i; sleep 0.01; done" } }]);
    await until(() => {
      const dec = decoder();
      let v: unknown;
      for (const b of batches) v = apply(v, dec.decode(structuredClone(b)));
      return JSON.stringify(v) === JSON.stringify(lane.value);
    });
    ac.abort();
    await reading;
    expect(ids).toEqual(ids.map((_, i) => i));
    expect(batches[0]).toHaveLength(1);
    expect(batches[0]![0]![0]).toBe("r");
    expect(batches.slice(1).every((b) => b[0]![0] !== "r")).toBe(true);
    expect(ids.length).toBeGreaterThan(5);
    expect((seenMid!.operation!.tools[0]!.output as ToolOutputState).content[0].text).toContain("line 1\n");
    expect(lane.value.ended).toEqual([{ id: "c", name: "bash", isError: false }]);
  });

  it("a late subscriber joining mid-run gets its own encoder and a base of the lane, and converges", async () => {
    const { store, workspace } = await session();
    const { lane, server } = await laneServer();
    const harness = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 10 });
    harness.on((e) => lane.mutate((v) => reduceLane(v, e)));
    const early = subscribe<LaneView>(`${server.url}/v1/state/lane`, { token: "tok" });
    cleanups.push(() => early.close());
    let late: ReturnType<typeof subscribe<LaneView>> | undefined;
    let firstLate: readonly Op[] | undefined;
    const run = harness.runTools("op", [
      { toolCallId: "c", toolName: "bash", args: { command: "for i in $(seq 1 40); do echo row $i; sleep 0.01; done; sleep 1.5" } },
    ]);
    await until(() => JSON.stringify(lane.value).includes("row 10"));
    late = subscribe<LaneView>(`${server.url}/v1/state/lane`, { token: "tok", onValue: (_v, ops) => void (firstLate ??= structuredClone(ops)) });
    cleanups.push(() => late!.close());
    await until(() => late!.status === "live");
    expect(JSON.stringify(lane.value)).toContain('"operation":{'); // joined mid-run
    await run;
    await until(() => JSON.stringify(late!.value) === JSON.stringify(lane.value) && JSON.stringify(early.value) === JSON.stringify(lane.value));
    expect(isBase(firstLate!)).toBe(true);
    expect(JSON.stringify(firstLate)).toContain("row 10");
    expect(late.connects).toBe(1);
    expect(early.connects).toBe(1);
  });

  it("after the connection breaks mid-run, the consumer discards its replica, resubscribes for a fresh base and converges", async () => {
    const { store, workspace } = await session();
    const { lane, server } = await laneServer();
    // A real TCP hop we can cut, between the client and the wire server.
    const sockets = new Set<Socket>();
    const proxy = createTcpServer((down) => {
      const up = connect(server.port, "127.0.0.1");
      sockets.add(down).add(up);
      down.pipe(up).pipe(down);
      const end = () => (down.destroy(), up.destroy());
      down.on("error", end).on("close", end);
      up.on("error", end).on("close", end);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), proxy.close(() => r()))));
    const port = (proxy.address() as { port: number }).port;
    const harness = createHarness({ store, workspace, tools: [createBashTool()], minIntervalMs: 10 });
    harness.on((e) => lane.mutate((v) => reduceLane(v, e)));
    const statuses: string[] = [];
    const log: string[] = [];
    const sub = subscribe<LaneView>(`http://127.0.0.1:${port}/v1/state/lane`, {
      token: "tok",
      retryDelayMs: 20,
      onStatus: (s, d) => (statuses.push(`${s}${d ? `: ${d}` : ""}`), log.push(s)),
      onValue: (_v, ops) => log.push(isBase(ops) ? "base" : "delta"),
    });
    cleanups.push(() => sub.close());
    await until(() => sub.status === "live");
    const run = harness.runTools("op", [
      { toolCallId: "c", toolName: "bash", args: { command: "for i in $(seq 1 40); do echo row $i; sleep 0.01; done; sleep 0.3" } },
    ]);
    await until(() => JSON.stringify(sub.value ?? {}).includes("row 5"));
    for (const s of sockets) s.destroy();
    await run;
    await until(() => JSON.stringify(sub.value) === JSON.stringify(lane.value));
    expect(sub.connects).toBe(2);
    expect(statuses.some((s) => s.startsWith("resyncing"))).toBe(true);
    // Each connection starts from a base; the replica is never patched across the break.
    const resync = log.indexOf("resyncing");
    expect(log.find((x) => x === "base" || x === "delta")).toBe("base");
    expect(log.slice(resync + 1).find((x) => x === "base" || x === "delta")).toBe("base");
    expect(log.slice(resync + 1).filter((x) => x === "base")).toHaveLength(1);
    expect(server.subscribers).toBe(1);
  });
});
