// spool/harness benchmark, on the compiled dist/.
//   npm run bench:harness            table
//   npm run bench:harness -- --json  one JSON line per row
//
// 1. The worked example: one real bash run printing ~256 KB over ~20 flushes through a
//    50 KB tail window. Side by side in the same run, fed by the same flushes:
//    - durable bytes: this design (the sidecar holding one encoded op batch per flush) against "today"
//      (the whole ToolOutputState snapshot appended to the main log at every flush), both real JSONL files;
//    - wire bytes: one real SSE subscriber of the lane state (ops, per-subscriber encoder) against one
//      of a state that is replaced by the whole snapshot at every flush (a base batch per flush).
//    Target: ≤ 0.3× for both.
// 2. Fan-out: 100 real SSE clients on loopback following a 1 MB/s bash stream for ~10 s. The server
//    (harness + lane state + wire) runs in its own process so its CPU time excludes the clients; the
//    same stream with 0 subscribers is measured first, so the per-subscriber cost is the difference.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createWorkspace } from "../dist/context/index.js";
import { apply } from "../dist/delta/index.js";
import { createBashTool, createHarness, createStateHost, emptyLane, reduceLane } from "../dist/harness/index.js";
import { appendList, list, openSessionRepo } from "../dist/store/index.js";
import { createWireServer, subscribe } from "../dist/wire/index.js";

const JSON_OUT = process.argv.includes("--json");
const QUICK = process.argv.includes("--quick"); // shorter fan-out, for a smoke run
const here = fileURLToPath(new URL(".", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "spool-bench-harness-"));
const rows = [];
function row(section, name, design, val, unit, note = "") {
  const r = { section, name, design, value: Number(val.toFixed(val < 10 ? 3 : 1)), unit, note };
  rows.push(r);
  if (JSON_OUT) console.log(JSON.stringify(r));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(cond, ms = 30_000) {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error("timed out waiting for condition");
    await sleep(10);
  }
}
const dirBytes = (d) => {
  try {
    return readdirSync(d).reduce((n, f) => n + statSync(join(d, f)).size, 0);
  } catch {
    return 0;
  }
};

/** Count the raw bytes of an SSE response body (a real HTTP client, no parsing). */
async function countBytes(url, token, signal) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal });
  const counter = { bytes: 0, events: 0, done: undefined };
  counter.done = (async () => {
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        counter.bytes += value.byteLength;
      }
    } catch {}
  })();
  return counter;
}

// ~256 KB of build-log lines in 20 bursts 125 ms apart; every run's lines are new (seeded per run).
function buildCommand(seed) {
  return `node -e '
let i = 0, seed = ${seed};
const burst = () => {
  let s = "";
  while (s.length < 12800) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    s += "cc -O2 -c src/m" + (seed % 97) + "/f" + seed.toString(36) + ".c -o build/o" + i++ + ".o\\n";
  }
  process.stdout.write(s);
};
let n = 0;
const t = setInterval(() => { burst(); if (++n === 20) clearInterval(t); }, 125);
'`;
}

// ---- 1. worked example ------------------------------------------------------------------------
async function workedExample(run, seed0) {
  const repo = openSessionRepo(join(root, `we${run}`), { backend: "jsonl" });
  const ours = await repo.create({ id: "ours" });
  const today = await repo.create({ id: "today" });
  const host = createStateHost();
  const lane = host.state("lane", emptyLane());
  const snap = host.state("snapshot", emptyLane());
  const server = await createWireServer({ states: host });
  const ac = new AbortController();
  const oursWire = await countBytes(`${server.url}/v1/state/lane`, server.token, ac.signal);
  const todayWire = await countBytes(`${server.url}/v1/state/snapshot`, server.token, ac.signal);
  await until(() => server.subscribers === 2);
  await sleep(50);
  const wireStart = { ours: oursWire.bytes, today: todayWire.bytes };

  const harness = createHarness({ store: ours.store, workspace: createWorkspace({ dir: ours.dir, keep: true }), tools: [createBashTool()] });
  const todayList = list("tool_result_checkpoints");
  let state;
  let flushes = 0;
  let sidecarAtEnd = 0;
  let todayPending = Promise.resolve();
  const mainBefore = statSync(ours.file).size;
  harness.on((e) => {
    lane.mutate((v) => reduceLane(v, e));
    if (e.type === "tool_update") {
      flushes++;
      state = apply(state, structuredClone(e.ops));
      // "Today": the whole result snapshot per flush, in the main log and on the wire.
      const snapshot = structuredClone(state);
      todayPending = todayPending.then(() => today.store.commit([appendList(todayList, snapshot)]));
      snap.replace(structuredClone(lane.value));
    }
    if (e.type === "tool_end") sidecarAtEnd = dirBytes(`${ours.file}.scopes`);
  });
  const [result] = await harness.runTools("op1", [{ toolCallId: "call_7", toolName: "bash", args: { command: buildCommand(seed0 + run * 7919) } }]);
  snap.replace(structuredClone(lane.value));
  await todayPending;
  await sleep(200);
  ac.abort();
  await Promise.all([oursWire.done, todayWire.done]);
  await server.close();
  const mainGrowth = statSync(ours.file).size - mainBefore;
  const out = {
    flushes,
    totalBytes: result.content[0].text.length,
    sidecar: sidecarAtEnd,
    mainGrowth,
    sidecarAfter: dirBytes(`${ours.file}.scopes`),
    todayLog: statSync(today.file).size,
    oursWire: oursWire.bytes - wireStart.ours,
    todayWire: todayWire.bytes - wireStart.today,
  };
  await ours.store.close();
  await today.store.close();
  return out;
}

const RUNS = 3;
const we = [];
const seed0 = Math.floor(Math.random() * 1e9); // fresh lines every invocation, different per run
for (let r = 0; r < RUNS; r++) we.push(await workedExample(r, seed0));
const med = (k) => we.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(we.length / 2)];
const S1 = "worked example (256 KB, ~20 flushes, 50 KB window; median of 3 runs)";
row(S1, "flushes", "spool", med("flushes"), "batches");
row(S1, "durable bytes while running", "spool", med("sidecar") / 1024, "KiB", "sidecar at tool_end");
row(S1, "durable bytes while running", "today", med("todayLog") / 1024, "KiB", "snapshot per flush in the main log");
row(S1, "durable ratio", "spool/today", med("sidecar") / med("todayLog"), "×", "target ≤ 0.3");
row(S1, "main log growth after settle", "spool", med("mainGrowth") / 1024, "KiB", `sidecar left: ${med("sidecarAfter")} B`);
row(S1, "wire bytes, one SSE subscriber", "spool", med("oursWire") / 1024, "KiB", "lane state, ops");
row(S1, "wire bytes, one SSE subscriber", "today", med("todayWire") / 1024, "KiB", "whole snapshot per flush");
row(S1, "wire ratio", "spool/today", med("oursWire") / med("todayWire"), "×", "target ≤ 0.3");

// ---- 2. fan-out -------------------------------------------------------------------------------
const SECONDS = QUICK ? 3 : 10;
const RATE = 1_000_000;
const child = spawn(process.execPath, [join(here, "harness.fanout-server.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;
const [, url, token] = (await next()).split(" ");

async function fanout(n) {
  const subs = [];
  for (let i = 0; i < n; i++) subs.push(subscribe(`${url}/v1/state/lane`, { token, retryDelayMs: 100 }));
  await until(() => subs.every((s) => s.status === "live"));
  const connects0 = subs.reduce((a, s) => a + s.connects, 0);
  child.stdin.write(`GO ${SECONDS} ${RATE}\n`);
  const done = JSON.parse((await next()).slice(5));
  // Every replica converges on the final lane (the tool ended: operation null, one ended entry).
  await until(() => subs.every((s) => s.value && s.value.operation === null && s.value.ended.length === 1), 20_000);
  const reconnects = subs.reduce((a, s) => a + s.connects, 0) - connects0;
  for (const s of subs) s.close();
  await sleep(200);
  return { ...done, reconnects };
}

const idle = await fanout(0);
const one = await fanout(1);
const many = await fanout(QUICK ? 20 : 100);
child.stdin.write("QUIT\n");
await new Promise((r) => child.on("close", r));

const S2 = `fan-out (1 MB/s bash stream, ${SECONDS} s, server in its own process)`;
for (const [label, r] of [
  ["0 subscribers", idle],
  ["1 subscriber", one],
  [`${many.subscribers} subscribers`, many],
]) {
  row(S2, `server CPU, ${label}`, "spool", r.cpuMs / r.wall / 10, "% of a core", `wall ${r.wall.toFixed(1)} s`);
  row(
    S2,
    `peak RSS, ${label}`,
    "spool",
    r.peakRss / 1024 / 1024,
    "MiB",
    `${r.reconnects ? `${r.reconnects} reconnects; ` : ""}kernel maxRSS so far ${(r.maxRss / 1024).toFixed(1)} MiB`,
  );
  row(
    S2,
    `tool output / live batches, ${label}`,
    "spool",
    r.toolBytes / r.wall / 1e6,
    "MB/s in",
    `${r.batches} batches, ${(r.batchBytes / r.wall / 1024).toFixed(0)} KiB/s of ops to each subscriber`,
  );
}
const perSubSec = (many.cpuMs - idle.cpuMs * (many.wall / idle.wall)) / (many.subscribers * many.wall);
row(S2, "server CPU per subscriber-second", "spool", perSubSec, "ms", `(CPU(${many.subscribers}) − CPU(0)) / (subscribers × s)`);

rmSync(root, { recursive: true, force: true });

if (!JSON_OUT) {
  console.log(`spool/harness benchmark — node ${process.version}, ${new Date().toISOString()}`);
  for (const section of [...new Set(rows.map((r) => r.section))]) {
    console.log(`\n## ${section}`);
    const w = Math.max(...rows.filter((r) => r.section === section).map((r) => r.name.length));
    for (const r of rows.filter((x) => x.section === section)) {
      console.log(`${r.name.padEnd(w)}  ${r.design.padEnd(12)} ${String(r.value).padStart(10)} ${r.unit.padEnd(12)} ${r.note}`);
    }
  }
}
