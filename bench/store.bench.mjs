// spool/store benchmark: all backends side by side in one run, on the compiled dist/.
//   npm run bench:store            table
//   npm run bench:store -- --json  one JSON line per row
// Inputs are fresh, varied strings built before each timed loop (no reused flattened strings, no
// "x".repeat fixtures). Each timed loop is preceded by a warm-up on the same store.
import { spawn, spawnSync } from "node:child_process";
import { buildRunSession } from "./run-session.gen.mjs";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  appendList,
  createMemoryStore,
  deleteList,
  ephemeralScope,
  list,
  followPostgresCommits,
  openJsonlStore,
  openPostgresStore,
  openSqliteStore,
  retireScope,
  setValue,
  value,
} from "../dist/store/index.js";

const JSON_OUT = process.argv.includes("--json");
// PostgreSQL: the server named by SPOOL_BENCH_PG, else a throwaway cluster (scripts/pg-cluster.mjs)
// on this machine, so the rows compare backends on the same disk and cores.
const { startPgCluster } = await import("../scripts/pg-cluster.mjs");
const cluster = process.env.SPOOL_BENCH_PG ? undefined : await startPgCluster({ durable: true });
const PG_URL = process.env.SPOOL_BENCH_PG ?? cluster.url;
const PG_SCHEMA = `bench_${Date.now().toString(36)}`;
let pgSession = 0;
const root = mkdtempSync(join(tmpdir(), "spool-bench-store-"));
let dirN = 0;
const fresh = (file) => join(root, `s${dirN++}`, file);
const rows = [];
function row(section, name, backend, val, unit, note = "") {
  const r = { section, name, backend, value: Number(val.toFixed(val < 10 ? 3 : 1)), unit, note };
  rows.push(r);
  if (JSON_OUT) console.log(JSON.stringify(r));
}

const WORDS =
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi".split(
    " ",
  );
let wordSeed = 1;
function text(n, tag) {
  let s = `${tag}:`;
  while (s.length < n) {
    wordSeed = (wordSeed * 1103515245 + 12345) & 0x7fffffff;
    s += WORDS[wordSeed % WORDS.length] + (wordSeed % 7 === 0 ? "\n" : " ");
  }
  return s.slice(0, n);
}

const BACKENDS = [
  { name: "memory", commits: 20000, open: async () => createMemoryStore() },
  { name: "jsonl/process", commits: 20000, open: (f = fresh("session.jsonl")) => openJsonlStore(f, { durability: "process" }) },
  { name: "jsonl/os", commits: 20000, open: (f = fresh("session.jsonl")) => openJsonlStore(f, { durability: "os", syncIntervalMs: 1000 }) },
  { name: "sqlite/process", commits: 10000, open: (f = fresh("session.sqlite")) => openSqliteStore(f, { durability: "process" }) },
  { name: "sqlite/os", commits: 500, open: (f = fresh("session.sqlite")) => openSqliteStore(f, { durability: "os" }) },
  {
    name: "postgres/process",
    commits: 3000,
    open: (f = `s${pgSession++}`) => openPostgresStore(PG_URL, { schema: PG_SCHEMA, sessionId: f, durability: "process" }),
  },
  { name: "postgres/os", commits: 1000, open: (f = `s${pgSession++}`) => openPostgresStore(PG_URL, { schema: PG_SCHEMA, sessionId: f, durability: "os" }) },
];
const fileFor = (b) => (b.name.startsWith("jsonl") ? fresh("session.jsonl") : b.name.startsWith("postgres") ? `s${pgSession++}` : fresh("session.sqlite"));

async function timeCommits(store, makeWrites, n) {
  for (let i = 0; i < 300; i++) await store.commit(makeWrites(-1 - i));
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await store.commit(makeWrites(i));
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

// SPOOL_BENCH_SECTIONS=scale (comma-separated: commit, recover, workload, long, scale, open, inspect) runs only those.
const want = (section) => !process.env.SPOOL_BENCH_SECTIONS || process.env.SPOOL_BENCH_SECTIONS.split(",").includes(section);

// ---- 1. commit throughput --------------------------------------------------------------------
if (want("commit"))
  for (const b of BACKENDS) {
    const store = await b.open();
    const scope = ephemeralScope("op:bench");
    const out = list("pi.pending.tool_output", "call_1", scope);
    const payloads = Array.from({ length: b.commits }, (_, i) => text(1024, `chunk${i.toString(36)}`));
    const warm = Array.from({ length: 300 }, (_, i) => text(1024, `warm${i}`));
    const secs = await timeCommits(store, (i) => [appendList(out, i < 0 ? warm[-1 - i] : payloads[i], i % 50 === 0 ? "base" : undefined)], b.commits);
    row("commit", "1 KB scoped appendList", b.name, b.commits / secs, "commits/s", `${((secs / b.commits) * 1e6).toFixed(1)} µs/commit`);
    await store.commit([retireScope(scope)]);
    const states = Array.from({ length: b.commits }, (_, i) => ({ turn: i, status: i % 3 ? "running" : "idle", note: text(80, `s${i}`) }));
    const warmS = Array.from({ length: 300 }, (_, i) => ({ turn: -i, note: text(80, `w${i}`) }));
    const lane = value("pi.lane.state");
    const secs2 = await timeCommits(store, (i) => [setValue(lane, i < 0 ? warmS[-1 - i] : states[i])], b.commits);
    row("commit", "session setValue (~130 B)", b.name, b.commits / secs2, "commits/s", `${((secs2 / b.commits) * 1e6).toFixed(1)} µs/commit`);
    await store.close();
  }

// ---- 2. recover the last base -------------------------------------------------------------------
function opsElement(i) {
  return i % 50 === 0
    ? [["r", { content: [{ type: "text", text: text(200, `base${i}`) }], details: {}, terminate: false }]]
    : [["a", ["content", 0, "text"], text(120, `d${i}`)]];
}
// The three sizes are read in interleaved rounds so drift (GC, JIT, CPU frequency) hits them alike.
const SIZES = [1000, 10000, 100000];
if (want("recover"))
  for (const b of BACKENDS.filter((x) => !x.name.endsWith("/os"))) {
    const scope = ephemeralScope("op:recover");
    const out = list("pi.pending.tool_output", "call_1", scope);
    const built = [];
    for (const n of SIZES) {
      const file = fileFor(b);
      const store = await b.open(file);
      for (let i = 0; i < n; i += 1000) {
        const writes = [];
        for (let j = i; j < Math.min(n, i + 1000); j++) writes.push(appendList(out, opsElement(j), j % 50 === 0 ? "base" : undefined));
        await store.commit(writes);
      }
      built.push({ n, file, store, samples: [], got: 0 });
    }
    for (let r = 0; r < 3000; r++) {
      for (const x of built) {
        const t0 = process.hrtime.bigint();
        const page = x.store.readList(out, { order: "desc", stopAtTag: "base", limit: 100 });
        const dt = Number(process.hrtime.bigint() - t0) / 1e3;
        x.got = page.elements.length;
        if (r >= 300) x.samples.push(dt);
      }
    }
    const median = (xs) => xs.sort((a, c) => a - c)[xs.length >> 1];
    for (const x of built)
      row("recover", `readList desc stopAtTag:"base", ${x.n} elements`, b.name, median(x.samples), "µs (median)", `${x.got} elements returned`);
    const ratio = median(built[2].samples) / median(built[0].samples);
    row("recover", "100,000 / 1,000 ratio (target ≤ 2)", b.name, ratio, "×", ratio <= 2 ? "meets target" : "MISSES target");
    for (const x of built) {
      await x.store.close();
      if (b.name === "memory") continue;
      const t0 = process.hrtime.bigint();
      const store = await b.open(x.file);
      store.readList(out, { order: "desc", stopAtTag: "base", limit: 100 });
      row(
        "recover",
        `reopen + first recovery read, ${x.n} elements`,
        b.name,
        Number(process.hrtime.bigint() - t0) / 1e6,
        "ms",
        b.name.startsWith("jsonl") ? "replays the whole log" : b.name.startsWith("postgres") ? "loads the session's rows" : "",
      );
      await store.close();
    }
  }

// ---- 3. the operation workload --------------------------------------------------------------------
// 20 operations, each 400 assistant frames + 2 tools × 60 checkpoints of a 50 KB window; ops in
// ephemeral scopes, retired on settle (or, for comparison, session-scoped lists deleted on settle).
const WINDOW = 50_000;
function sizeOf(path) {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
async function workload(store, { scoped, mainFile }) {
  let sidecarBytes = 0;
  let peakSidecar = 0;
  let transcriptBytes = 0;
  const transcript = list("transcript");
  for (let op = 0; op < 20; op++) {
    const opId = `op_${op}`;
    const scope = scoped ? ephemeralScope(opId) : undefined;
    const at = (ns, key) => (scope ? list(ns, key, scope) : list(ns, `${opId}:${key}`));
    await store.commit([setValue(value("pi.op.state", opId), { status: "running", startedAt: op })]);
    const frames = at("pi.pending.assistant_frames", "");
    let assistantText = "";
    for (let f = 0; f < 400; f++) {
      const token = `${text(6 + (f % 5), `t${op}.${f}`)} `;
      assistantText += token;
      await store.commit([
        appendList(
          frames,
          f === 0 ? [["r", { content: [{ type: "text", text: token }] }]] : [["a", ["content", 0, "text"], token]],
          f === 0 ? "base" : undefined,
        ),
      ]);
    }
    const results = [];
    for (let tool = 0; tool < 2; tool++) {
      const callId = `call_${op}_${tool}`;
      const outList = at("pi.pending.tool_output", callId);
      let window = "";
      for (let c = 0; c < 60; c++) {
        const chunk = text(2048, `${callId}/${c}`);
        const next = window + chunk;
        const drop = Math.max(0, next.length - WINDOW);
        window = drop > 0 ? next.slice(drop) : next;
        const base = c % 50 === 0;
        const ops = base
          ? [["r", { content: [{ type: "text", text: window }], details: { truncation: { dropped: drop } }, terminate: false }]]
          : drop > 0
            ? [
                ["t", ["content", 0, "text"], drop],
                ["a", ["content", 0, "text"], chunk],
              ]
            : [["a", ["content", 0, "text"], chunk]];
        await store.commit([appendList(outList, ops, base ? "base" : undefined)]);
      }
      results.push({
        role: "toolResult",
        toolCallId: callId,
        content: [{ type: "text", text: window.slice(-1024) }],
        details: { spillPath: `spill/${callId}.log`, truncation: { keptChars: 1024, totalChars: 60 * 2048 } },
      });
    }
    const assistant = {
      role: "assistant",
      content: [{ type: "text", text: assistantText }],
      toolCalls: [0, 1].map((t) => ({ id: `call_${op}_${t}`, name: "bash", args: { command: `make test-${op}-${t}` } })),
    };
    const entries = [assistant, ...results];
    for (const e of entries) transcriptBytes += Buffer.byteLength(JSON.stringify(e));
    if (scoped && mainFile) {
      const side = join(`${mainFile}.scopes`, `scope-${encodeURIComponent(opId)}.scope`);
      const sz = sizeOf(side);
      sidecarBytes += sz;
      peakSidecar = Math.max(peakSidecar, sz);
    }
    const settle = [...entries.map((e) => appendList(transcript, e)), setValue(value("pi.op.state", opId), { status: "settled", startedAt: op })];
    if (scoped) settle.push(retireScope(scope));
    else settle.push(deleteList(frames), deleteList(at("pi.pending.tool_output", `call_${op}_0`)), deleteList(at("pi.pending.tool_output", `call_${op}_1`)));
    await store.commit(settle);
  }
  return { sidecarBytes, peakSidecar, transcriptBytes };
}
const MB = (b) => b / 1e6;
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const pgTableBytes = async () => {
  const pg = (await import("pg")).default;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  const r = await c.query(
    "SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)::bigint AS b FROM pg_tables WHERE schemaname = $1",
    [PG_SCHEMA],
  );
  await c.end();
  return Number(r.rows[0].b);
};
if (want("workload"))
  for (const b of [BACKENDS[1], BACKENDS[3], BACKENDS[5]]) {
    for (const scoped of [true, false]) {
      const file = fileFor(b);
      const before = b.name.startsWith("postgres") ? await pgTableBytes() : 0;
      const store = await b.open(file);
      const t0 = process.hrtime.bigint();
      const r = await workload(store, { scoped, mainFile: b.name.startsWith("jsonl") ? file : undefined });
      await store.sync();
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      await store.close();
      const label = scoped ? "ops in ephemeral scopes" : "ops in the main log (no scopes)";
      row("workload", `${label}: wall time`, b.name, ms, "ms");
      if (b.name.startsWith("jsonl")) {
        const main = sizeOf(file);
        row(
          "workload",
          `${label}: main log size`,
          b.name,
          MB(main),
          "MB",
          `${(main / r.transcriptBytes).toFixed(2)} × settled transcript JSON (${MB(r.transcriptBytes).toFixed(3)} MB; target ≤ 1.5)`,
        );
        if (scoped) {
          row("workload", `${label}: bytes written to sidecars`, b.name, MB(r.sidecarBytes), "MB", `peak ${MB(r.peakSidecar).toFixed(3)} MB per operation`);
          const left = readdirSync(`${file}.scopes`).length;
          row("workload", `${label}: sidecars left after settlement`, b.name, left, "files", left === 0 ? "meets target (none)" : "MISSES target");
        }
      } else if (b.name.startsWith("postgres")) {
        const grew = (await pgTableBytes()) - before;
        row(
          "workload",
          `${label}: table growth (heap + TOAST + indexes)`,
          b.name,
          MB(grew),
          "MB",
          `${(grew / r.transcriptBytes).toFixed(2)} × settled transcript JSON; deleted rows wait for autovacuum`,
        );
      } else {
        const size = sizeOf(file) + sizeOf(`${file}-wal`);
        row("workload", `${label}: database + WAL size`, b.name, MB(size), "MB", "deleted rows leave free pages; SQLite reuses them");
      }
    }
  }

// ---- 3b. a long operation: what one open tool keeps on disk -------------------------------------
// One operation that never settles (a dev server started in the background): LONG_FLUSHES durable
// flushes as the harness writes them, a ~700-byte batch each and every 50th the 50 KB window so far as
// a base committed with a clear of the list. Recovery needs only the last base and what follows; the
// rows show what each backend keeps on disk for it, and what a flush costs (mean, and the slowest:
// a JSONL sidecar rewrite happens inside one flush). JSONL runs twice: never rewriting its sidecar (as
// before sidecars were compacted) and with the default (rewritten at 1 MiB and 4 × its last size).
const LONG_FLUSHES = Number(process.env.SPOOL_BENCH_LONG_FLUSHES ?? 20_000);
/** `inode` (JSONL): the sidecar's inode now, so the flushes that rewrote it can be told apart. */
async function longOperation(store, sizeNow, inode) {
  const scope = ephemeralScope("op:dev-server");
  const out = list("tool_output", "call_1", scope);
  const chunks = Array.from({ length: LONG_FLUSHES }, (_, i) => text(700, `flush${i}`));
  const times = new Float64Array(LONG_FLUSHES);
  let window = "";
  let largest = 0;
  const rewrites = [];
  let ino = -1;
  for (let i = 0; i < LONG_FLUSHES; i++) {
    window = (window + chunks[i]).slice(-WINDOW);
    const writes =
      i % 50 === 0
        ? [deleteList(out), appendList(out, [["r", { content: [{ type: "text", text: window }] }]], "base")]
        : [appendList(out, [["a", ["content", 0, "text"], chunks[i]]])];
    const t0 = process.hrtime.bigint();
    await store.commit(writes);
    times[i] = Number(process.hrtime.bigint() - t0) / 1e3;
    if (inode !== undefined) {
      const now = inode();
      if (ino !== -1 && now !== ino) rewrites.push(times[i]);
      ino = now;
    }
    if (i % 100 === 99 || i === LONG_FLUSHES - 1) largest = Math.max(largest, await sizeNow());
  }
  const sorted = [...times].sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / LONG_FLUSHES;
  const page = store.readList(out, { order: "desc", stopAtTag: "base", limit: 100 });
  const rewriteMean = rewrites.reduce((a, b) => a + b, 0) / Math.max(1, rewrites.length);
  return {
    mean,
    p99: pct(sorted, 99),
    max: sorted[sorted.length - 1],
    largest,
    final: await sizeNow(),
    recovered: page.elements.length,
    rewrites: rewrites.length,
    rewriteMean,
  };
}
if (want("long")) {
  const runs = [
    { backend: "jsonl/process", label: "never rewritten", options: { durability: "process", sidecarCompactBytes: Number.POSITIVE_INFINITY } },
    { backend: "jsonl/process", label: "rewritten", options: { durability: "process" } },
    { backend: "jsonl/os", label: "never rewritten", options: { durability: "os", sidecarCompactBytes: Number.POSITIVE_INFINITY } },
    { backend: "jsonl/os", label: "rewritten", options: { durability: "os" } },
    { backend: "sqlite/process" },
    { backend: "postgres/process" },
  ];
  for (const r of runs) {
    const name = r.label ? `${r.backend} (${r.label})` : r.backend;
    let store;
    let sizeNow;
    let inode;
    let rows = async () => "";
    if (r.backend.startsWith("jsonl")) {
      const file = fresh("session.jsonl");
      store = await openJsonlStore(file, r.options);
      const side = join(`${file}.scopes`, `scope-${encodeURIComponent("op:dev-server")}.scope`);
      sizeNow = async () => sizeOf(side);
      inode = () => statSync(side).ino;
    } else if (r.backend.startsWith("sqlite")) {
      const file = fresh("session.sqlite");
      store = await openSqliteStore(file, { durability: "process" });
      sizeNow = async () => sizeOf(file) + sizeOf(`${file}-wal`);
      rows = async () => {
        const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
        const db = new DatabaseSync(file, { readOnly: true });
        const n = db.prepare("SELECT count(*) AS n FROM list_values").get().n;
        db.close();
        return `${n} list rows at the end`;
      };
    } else {
      const before = await pgTableBytes();
      const sessionId = `long${pgSession++}`;
      store = await openPostgresStore(PG_URL, { schema: PG_SCHEMA, sessionId, durability: "process" });
      sizeNow = async () => (await pgTableBytes()) - before;
      rows = async () => {
        const pg = (await import("pg")).default;
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        const n = (await c.query(`SELECT count(*)::int AS n FROM ${PG_SCHEMA}.list_values WHERE session_id = $1`, [sessionId])).rows[0].n;
        await c.end();
        return `${n} list rows at the end; dead tuples wait for autovacuum`;
      };
    }
    const x = await longOperation(store, sizeNow, inode);
    const what = r.backend.startsWith("jsonl") ? "sidecar" : r.backend.startsWith("sqlite") ? "database + WAL" : "tables (heap + TOAST + indexes)";
    row("long", `${LONG_FLUSHES} flushes: ${what}, largest`, name, MB(x.largest), "MB", "sampled every 100 flushes");
    row("long", `${LONG_FLUSHES} flushes: ${what}, at the end`, name, MB(x.final), "MB", await rows());
    row("long", `${LONG_FLUSHES} flushes: flush cost, mean`, name, x.mean, "µs", `p99 ${x.p99.toFixed(0)} µs; recovery reads ${x.recovered} elements`);
    row("long", `${LONG_FLUSHES} flushes: slowest flush`, name, x.max / 1000, "ms");
    if (x.rewrites > 0)
      row("long", `${LONG_FLUSHES} flushes: a flush that rewrote the sidecar, mean`, name, x.rewriteMean / 1000, "ms", `${x.rewrites} rewrites`);
    await store.close();
  }
}

// ---- 4. scale: N writer processes on one PostgreSQL ---------------------------------------------
// Each writer streams a noisy build into its own session as fast as its commits allow; one viewer
// connection LISTENs and timestamps every notification, so commit-to-viewer latency is measured from
// the writer calling commit() to the viewer hearing of it (one machine, one clock).
const SCALE_SECONDS = Number(process.env.SPOOL_BENCH_SCALE_SECONDS ?? 5);
if (want("scale"))
  for (const n of (process.env.SPOOL_BENCH_SCALE ?? "1,10,50").split(",").map(Number)) {
    const schema = `${PG_SCHEMA}_n${n}`;
    const heard = new Map();
    const { performance } = await import("node:perf_hooks");
    const follower = await followPostgresCommits(PG_URL, (x) => heard.set(`${x.sessionId}#${x.seq}`, performance.timeOrigin + performance.now()), { schema });
    const writerScript = new URL("./store.pg-writer.mjs", import.meta.url).pathname;
    // The schema is created once here, not raced by 50 writers.
    await (await openPostgresStore(PG_URL, { schema, sessionId: "setup" })).close();
    const sizeBefore = await (async () => {
      const pg = (await import("pg")).default;
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      const r = await c.query(
        "SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)::bigint AS b FROM pg_tables WHERE schemaname = $1",
        [schema],
      );
      await c.end();
      return Number(r.rows[0].b);
    })();
    const children = Array.from({ length: n }, (_, i) => {
      const p = spawn(process.execPath, [writerScript, PG_URL, schema, `w${i}`, String(SCALE_SECONDS), String(i + 1)], { stdio: ["pipe", "pipe", "inherit"] });
      let out = "";
      p.stdout.on("data", (d) => (out += d));
      const ready = new Promise((r) => {
        const check = () => (out.includes("ready\n") ? r() : p.stdout.once("data", check));
        check();
      });
      const done = new Promise((r) => p.once("exit", () => r(JSON.parse(out.slice(out.indexOf("ready\n") + 6)))));
      return { p, ready, done };
    });
    await Promise.all(children.map((c) => c.ready));
    const t0 = Date.now();
    for (const c of children) c.p.stdin.end("go\n");
    const results = await Promise.all(children.map((c) => c.done));
    const wallS = (Date.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 300));
    await follower.close();
    const lat = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const toViewer = [];
    results.forEach((r, i) => {
      for (const [seq, start] of r.starts) {
        const at = heard.get(`w${i}#${seq}`);
        if (at !== undefined) toViewer.push(at - start);
      }
    });
    toViewer.sort((a, b) => a - b);
    const transcript = results.reduce((a, r) => a + r.transcriptBytes, 0);
    const pg = (await import("pg")).default;
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    const grew =
      Number(
        (
          await c.query(
            "SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)::bigint AS b FROM pg_tables WHERE schemaname = $1",
            [schema],
          )
        ).rows[0].b,
      ) - sizeBefore;
    // What is still live after settlement (the rest is dead tuples that autovacuum makes reusable).
    const liveBytes = Number(
      (
        await c.query(
          `SELECT (SELECT coalesce(sum(octet_length(value)), 0) FROM ${schema}.list_values) + (SELECT coalesce(sum(octet_length(value)), 0) FROM ${schema}.scalar_values) AS b`,
        )
      ).rows[0].b,
    );
    await c.end();
    const label = `N = ${n} writers`;
    row("scale", `${label}: commits/s (all writers)`, "postgres/process", lat.length / wallS, "commits/s", `${lat.length} commits in ${wallS.toFixed(1)} s`);
    row("scale", `${label}: commit latency p50`, "postgres/process", pct(lat, 50), "ms");
    row("scale", `${label}: commit latency p99`, "postgres/process", pct(lat, 99), "ms");
    row(
      "scale",
      `${label}: table growth vs settled transcript`,
      "postgres/process",
      grew / Math.max(1, transcript),
      "×",
      `${MB(grew).toFixed(2)} MB of tables for ${MB(transcript).toFixed(2)} MB of transcript`,
    );
    row(
      "scale",
      `${label}: live row bytes vs settled transcript`,
      "postgres/process",
      liveBytes / Math.max(1, transcript),
      "×",
      "rows still stored once operations settle and retire (open operations' last window included)",
    );
    row(
      "scale",
      `${label}: commit-to-viewer p50 (LISTEN/NOTIFY)`,
      "postgres/process",
      pct(toViewer, 50),
      "ms",
      `${toViewer.length} of ${lat.length} commits heard`,
    );
    row("scale", `${label}: commit-to-viewer p99 (LISTEN/NOTIFY)`, "postgres/process", pct(toViewer, 99), "ms");
  }

// ---- 5. opening a long session: cost should follow what is read ----------------------------------------------------
// One session-scope list of N elements (commits of 1,000), closed, then opened cold and read the way
// recovery reads it (the last base and what follows). Goal: open at 1M / open at 1k ≤ 3. Sizes from
// SPOOL_BENCH_OPEN_SIZES (default 1000,100000,1000000). JSONL also: the same open with the checkpoint
// removed first (a full replay, as for a log an older spool wrote), and the peak RSS of a fresh
// process doing the open and the read.
const OPEN_SIZES = (process.env.SPOOL_BENCH_OPEN_SIZES ?? "1000,100000,1000000").split(",").map(Number);
const storeUrl = new URL("../dist/store/index.js", import.meta.url).href;
/** Peak RSS (MB) of a fresh process that opens `file` and does the recovery read. */
function openRss(backend, file) {
  const open = backend.startsWith("jsonl") ? "openJsonlStore(file)" : "openSqliteStore(file)";
  const code = `const { openJsonlStore, openSqliteStore, list } = await import(${JSON.stringify(storeUrl)});
    const file = ${JSON.stringify(file)};
    const s = await ${open};
    const page = s.readList(list("pi.transcript", "main"), { order: "desc", stopAtTag: "base", limit: 100 });
    if (page.elements.length === 0) process.exit(1);
    await s.close();
    console.log(process.resourceUsage().maxRSS);`;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
  return res.status === 0 ? Number(res.stdout.trim()) / 1024 : Number.NaN;
}
if (want("open"))
  for (const b of [BACKENDS[1], BACKENDS[3]]) {
    const out = list("pi.transcript", "main");
    const times = [];
    for (const n of OPEN_SIZES) {
      const file = fileFor(b);
      const store = await b.open(file);
      for (let i = 0; i < n; i += 1000) {
        const writes = [];
        for (let j = i; j < Math.min(n, i + 1000); j++) writes.push(appendList(out, opsElement(j), j % 50 === 0 ? "base" : undefined));
        await store.commit(writes);
      }
      await store.close();
      const timeOpen = async (runs, before = () => undefined) => {
        const samples = [];
        for (let r = 0; r < runs; r++) {
          before();
          const t0 = process.hrtime.bigint();
          const again = await b.open(file);
          const page = again.readList(out, { order: "desc", stopAtTag: "base", limit: 100 });
          samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
          if (page.elements.length === 0) throw new Error("the reopened session lost its list");
          await again.close();
        }
        return samples.sort((a, c) => a - c)[samples.length >> 1];
      };
      const ms = await timeOpen(3);
      times.push(ms);
      const label = `${n.toLocaleString("en")} elements (${MB(sizeOf(file)).toFixed(1)} MB)`;
      row("open", `open + first recovery read, ${label}`, b.name, ms, "ms", "median of 3");
      row("open", `peak RSS, fresh process: open + first recovery read, ${label}`, b.name, openRss(b.name, file), "MB");
      if (b.name.startsWith("jsonl")) {
        const checkpoint = `${file}.checkpoint`;
        const full = await timeOpen(n >= 1_000_000 ? 1 : 3, () => rmSync(checkpoint, { force: true }));
        row("open", `open without its checkpoint (replays the log), ${label}`, b.name, full, "ms", n >= 1_000_000 ? "one run" : "median of 3");
      }
      rmSync(file, { force: true });
      rmSync(`${file}.checkpoint`, { force: true });
    }
    const ratio = times[times.length - 1] / times[0];
    row(
      "open",
      `open ${OPEN_SIZES.at(-1).toLocaleString("en")} / ${OPEN_SIZES[0].toLocaleString("en")} ratio (goal ≤ 3)`,
      b.name,
      ratio,
      "×",
      ratio <= 3 ? "meets goal" : "MISSES goal",
    );
  }

// `spool inspect` on a long session as `spool run --session` leaves it (bench/run-session.gen.mjs),
// timed as a fresh process with the session's files dropped from the page cache (dd iflag=nocache);
// wall time and peak RSS from /usr/bin/time, text and --json, output to /dev/null.
// SPOOL_BENCH_INSPECT_MB: the log sizes, comma-separated (default 100,1000; 0 skips the rows).
// SPOOL_BENCH_INSPECT_BEFORE: another build's dist/bin/main.js (e.g. main's, built in /tmp), run
// interleaved with this one on the same session, with a before/after ratio row per size. Each build
// reads the session with a checkpoint its own store wrote (a writer open and close, before the timed
// runs): checkpoint formats differ between versions, and a reader of the other's would replay the log.
// Also per build: the peak RSS and time of a read-only open of the session (readJsonlSnapshot and
// stats, a fresh process importing that build's dist/store), median of 3.
// SPOOL_BENCH_INSPECT_RUNS: runs per build and output (default 3; rows are medians).
// Section "inspect" (SPOOL_BENCH_SECTIONS=inspect runs only these rows).
const INSPECT_MB = (process.env.SPOOL_BENCH_INSPECT_MB ?? "100,1000")
  .split(",")
  .map(Number)
  .filter((n) => n > 0);
const INSPECT_BEFORE = process.env.SPOOL_BENCH_INSPECT_BEFORE;
const INSPECT_RUNS = Number(process.env.SPOOL_BENCH_INSPECT_RUNS ?? 3);
function dropFromPageCache(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) dropFromPageCache(join(dir, e.name));
    else spawnSync("dd", [`if=${join(dir, e.name)}`, "iflag=nocache", "count=0"], { stdio: "ignore" });
  }
}
const INSPECT_TIMEOUT_S = Number(process.env.SPOOL_BENCH_INSPECT_TIMEOUT_S ?? 900);
/** The dist/store/index.js of the build whose CLI is `main` (dist/bin/main.js). */
const storeOf = (main) => pathToFileURL(join(dirname(dirname(main)), "store", "index.js")).href;
/** Opens and closes the session with `main`'s store as the writer: it leaves a checkpoint that build reads. */
function writeOwnCheckpoint(main, file) {
  const code = `const { openJsonlStore } = await import(${JSON.stringify(storeOf(main))});
    await (await openJsonlStore(${JSON.stringify(file)}, { create: false })).close();`;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
  if (res.status !== 0) throw new Error(`could not open ${file} with ${main}: ${res.stderr}`);
}
/** A fresh process's read-only open of `file` with `main`'s store: { ms, rssMB }. */
function readOnlyOpen(main, file) {
  const code = `const { readJsonlSnapshot } = await import(${JSON.stringify(storeOf(main))});
    const t0 = performance.now();
    const values = readJsonlSnapshot(${JSON.stringify(file)}).stats().values;
    console.log(JSON.stringify({ ms: performance.now() - t0, rssMB: process.resourceUsage().maxRSS / 1024, values }));`;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
  if (res.status !== 0) throw new Error(`read-only open of ${file} with ${main} failed: ${res.stderr}`);
  return JSON.parse(res.stdout);
}
/** One cold `inspect` run: { s, rssMB }, or { failed } with why. */
function inspectOnce(main, inspectRoot, json) {
  dropFromPageCache(join(inspectRoot, "sessions", "long-session"));
  const cmd = [process.execPath, main, "inspect", "long-session", "--root", inspectRoot, ...(json ? ["--json"] : [])];
  const args = ["-f", "%e %M", "timeout", "-s", "KILL", String(INSPECT_TIMEOUT_S), ...cmd];
  const res = spawnSync("/usr/bin/time", args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", maxBuffer: 1 << 26 });
  const m = /([\d.]+) (\d+)\s*$/.exec(res.stderr);
  if (res.status === 137) return { failed: `did not finish: killed after ${INSPECT_TIMEOUT_S} s` };
  if (res.status !== 0 || m === null) return { failed: `failed: ${res.stderr.slice(-300).replace(/\s+/g, " ")}` };
  return { s: Number(m[1]), rssMB: Number(m[2]) / 1024 };
}
if (want("inspect"))
  for (const mb of INSPECT_MB) {
    const inspectRoot = join(root, "inspect-root");
    const { file, calls } = await buildRunSession(join(inspectRoot, "sessions"), "long-session", mb * 1e6);
    const label = `spool inspect, ${MB(sizeOf(file)).toFixed(0)} MB session log (${calls} calls), cold`;
    const builds = [
      { who: "this build", main: new URL("../dist/bin/main.js", import.meta.url).pathname },
      ...(INSPECT_BEFORE ? [{ who: "before", main: INSPECT_BEFORE }] : []),
    ];
    const mid = (xs) => [...xs].sort((a, c) => a - c)[xs.length >> 1];
    const checkpoint = `${file}.checkpoint`;
    // Kept outside the session's directory, whose size the report shows.
    const own = (b) => join(root, `checkpoint-${mb}-${builds.indexOf(b)}`);
    for (const b of builds) {
      rmSync(checkpoint, { force: true });
      writeOwnCheckpoint(b.main, file);
      copyFileSync(checkpoint, own(b));
    }
    // The log was just written: on disk first, so that dropping it from the page cache takes (dirty
    // pages stay) and the runs are cold.
    spawnSync("sync");
    const useCheckpointOf = (b) => copyFileSync(own(b), checkpoint);
    const opens = new Map(builds.map((b) => [b.who, []]));
    for (let r = 0; r < 3; r++) {
      for (const b of builds) {
        useCheckpointOf(b);
        opens.get(b.who).push(readOnlyOpen(b.main, file));
      }
    }
    for (const b of builds) {
      const xs = opens.get(b.who);
      const name = `read-only open of the same log (${xs[0].values} values), fresh process`;
      row("inspect", `${name}: wall`, `jsonl ${b.who}`, mid(xs.map((x) => x.ms)), "ms", "median of 3");
      row("inspect", `${name}: peak RSS`, `jsonl ${b.who}`, mid(xs.map((x) => x.rssMB)), "MB", "median of 3");
    }
    for (const json of [false, true]) {
      const name = `${label}${json ? ", --json" : ""}`;
      const runs = new Map(builds.map((b) => [b.who, []]));
      const failed = new Map();
      // Interleaved, so the machine's other load falls on both builds alike.
      for (let r = 0; r < INSPECT_RUNS; r++) {
        for (const b of builds) {
          if (failed.has(b.who)) continue;
          useCheckpointOf(b);
          const x = inspectOnce(b.main, inspectRoot, json);
          if (x.failed) failed.set(b.who, x.failed);
          else runs.get(b.who).push(x);
        }
      }
      const got = {};
      for (const b of builds) {
        const xs = runs.get(b.who);
        if (failed.has(b.who)) row("inspect", `${name}: wall`, `jsonl ${b.who}`, Number.NaN, "s", failed.get(b.who));
        if (xs.length === 0) continue;
        got[b.who] = { s: mid(xs.map((x) => x.s)), rssMB: mid(xs.map((x) => x.rssMB)) };
        row("inspect", `${name}: wall`, `jsonl ${b.who}`, got[b.who].s, "s", `median of ${xs.length}`);
        row("inspect", `${name}: peak RSS`, `jsonl ${b.who}`, got[b.who].rssMB, "MB", `median of ${xs.length}`);
      }
      if (got.before && got["this build"]) {
        row("inspect", `${name}: wall, before / this build`, "jsonl", got.before.s / got["this build"].s, "×");
        row("inspect", `${name}: peak RSS, before / this build`, "jsonl", got.before.rssMB / got["this build"].rssMB, "×");
      }
    }
    rmSync(inspectRoot, { recursive: true, force: true });
  }

rmSync(root, { recursive: true, force: true });
await cluster?.stop();

if (!JSON_OUT) {
  console.log(`spool/store benchmark — node ${process.version}, ${new Date().toISOString()}`);
  for (const section of ["commit", "recover", "workload", "long", "scale", "open", "inspect"].filter(want)) {
    console.log(`\n## ${section}`);
    const w = Math.max(...rows.filter((r) => r.section === section).map((r) => r.name.length));
    for (const r of rows.filter((x) => x.section === section)) {
      console.log(`${r.name.padEnd(w)}  ${r.backend.padEnd(15)} ${String(r.value).padStart(12)} ${r.unit.padEnd(12)} ${r.note}`);
    }
  }
}
