// spool serve benchmark: what following a live session costs, on the compiled dist/.
//   npm run bench:serve            table
//   npm run bench:serve -- --json  one JSON line per row
//   npm run bench:serve -- --baseline-bin DIR/dist/bin/main.js   also run another build's `spool serve`
// 1. Per change: a live JSONL session of N = 1k / 10k / 50k transcript entries (this process is its
//    writer), one more call per step written as the harness writes it (its record, the operation
//    opening, output batches in the sidecar, the settling transaction, the ended record). After the call
//    opened and again after it settled, each of two followers of the session looks once: `spool serve`'s
//    (watchSessions) and a full rebuild of the view (what serve did before: the whole view read from the
//    snapshot and assigned to the state). Milliseconds and bytes read from the session's files per look,
//    medians over the steps; the two followers take turns going first. The same for a live SQLite
//    session (`SPOOL_BENCH_BACKENDS=jsonl,sqlite`, the default; SQLite reads are not counted in bytes),
//    and a live PostgreSQL session when `postgres` is listed (a throwaway local cluster, or the server
//    named by SPOOL_TEST_PG; every look's listing shows a new commit, as after a NOTIFY).
// 1b. With `postgres`: what listing the database costs serve per look (see below).
// 2. Serve's CPU: `spool serve` over a session of N entries that a `spool run --session` is adding a
//    call to, whose command prints a line every 100 ms (about 10 output flushes a second); CPU-seconds
//    of the serve process over two windows of 10 s from 1 s after it started serving, from /proc.
// Inputs are fresh, varied texts (a PRNG over words); each N gets its own session.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Bytes read from files, counted while `counting` (readSync and readFileSync are what the store reads with).
const fs = createRequire(import.meta.url)("node:fs");
let counting = false;
let bytesRead = 0;
const realReadSync = fs.readSync;
const realReadFileSync = fs.readFileSync;
fs.readSync = function (...args) {
  const n = realReadSync.apply(this, args);
  if (counting) bytesRead += n;
  return n;
};
fs.readFileSync = function (...args) {
  const out = realReadFileSync.apply(this, args);
  if (counting) bytesRead += typeof out === "string" ? Buffer.byteLength(out) : out.length;
  return out;
};
syncBuiltinESMExports();

const { appendList, openJsonlStore, openPostgresStore, openSqliteStore, retireScope, setValue, followJsonlSession } = await import("../dist/store/index.js");
const { callRecord, createStateHost, OPEN_OPERATIONS, operationScope, outputList, SESSION_RECORD, TRANSCRIPT } = await import("../dist/harness/index.js");
const { encoder } = await import("../dist/delta/index.js");
const { watchSessions } = await import("../dist/cli/session-watch.js");
const { listSessions, loadSession, sessionFromSnapshot } = await import("../dist/cli/session-catalog.js");

const JSON_OUT = process.argv.includes("--json");
const baselineAt = process.argv.indexOf("--baseline-bin");
const BASELINE_BIN = baselineAt > 0 ? process.argv[baselineAt + 1] : undefined;
const BIN = fileURLToPath(new URL("../dist/bin/main.js", import.meta.url));
const SIZES = (process.env.SPOOL_BENCH_SIZES ?? "1000,10000,50000").split(",").map(Number);
const BACKENDS = (process.env.SPOOL_BENCH_BACKENDS ?? "jsonl,sqlite").split(",");
const STEPS = 25;
const rows = [];
function row(section, name, value, unit, note = "") {
  const r = { section, name, value: Number(value.toFixed(value < 10 ? 3 : 1)), unit, note };
  rows.push(r);
  if (JSON_OUT) console.log(JSON.stringify(r));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const WORDS =
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi".split(
    " ",
  );
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed);
function text(n, tag) {
  let s = `${tag}:`;
  while (s.length < n) {
    const r = rand();
    s += WORDS[r % WORDS.length] + (r % 7 === 0 ? "\n" : " ");
  }
  return s.slice(0, n);
}

const root = mkdtempSync(join(tmpdir(), "spool-bench-serve-"));
let clock = Date.parse("2026-03-01T09:00:00.000Z");
const tick = () => new Date((clock += 1000 + (rand() % 4000))).toISOString();
const message = (id, i) => ({
  role: "tool",
  toolCallId: id,
  toolName: "bash",
  isError: i % 13 === 0,
  content: [{ type: "text", text: text(200 + (rand() % 1800), `result ${id}`) }],
});
const record = (command, pid, startedAt, endedAt) => ({
  command,
  cwd: root,
  pid,
  startedAt,
  endedAt,
  status: endedAt ? "succeeded" : "running",
  exitCode: endedAt ? 0 : null,
});

// The PostgreSQL server for the `postgres` backend: SPOOL_TEST_PG, or a throwaway cluster.
let pgServer;
async function pgUrl() {
  if (process.env.SPOOL_TEST_PG) return process.env.SPOOL_TEST_PG;
  if (!pgServer) {
    const { startPgCluster } = await import("../scripts/pg-cluster.mjs");
    pgServer = await startPgCluster();
  }
  return pgServer.url;
}

/** A session of `n` settled calls under `sroot`; live (this process its writer) unless `finish`. */
async function buildSession(sroot, id, n, finish, backend = "jsonl") {
  const dir = join(sroot, "sessions", id);
  mkdirSync(dir, { recursive: true });
  const store =
    backend === "jsonl"
      ? await openJsonlStore(join(dir, "session.jsonl"), { sessionId: id, durability: "process" })
      : backend === "sqlite"
        ? await openSqliteStore(join(dir, "session.sqlite"), { sessionId: id, durability: "process" })
        : await openPostgresStore(await pgUrl(), { sessionId: id, durability: "process" });
  const startedAt = tick();
  await store.commit([setValue(SESSION_RECORD, record("agent", process.pid, startedAt, null))]);
  // One transaction per settled result and one per ended record, as a session writes them (a value's
  // read costs its line: records batched into long lines would make every read of one cost the line).
  for (let j = 0; j < n; j++) {
    const cid = `call-${j + 1}`;
    const t = tick();
    await store.commit([appendList(TRANSCRIPT, message(cid, j)), setValue(OPEN_OPERATIONS, {})]);
    await store.commit([setValue(callRecord(cid), record(`bash: make step ${j}`, process.pid, t, tick()))]);
  }
  if (finish) {
    await store.commit([setValue(SESSION_RECORD, record("agent", process.pid, startedAt, tick()))]);
    await store.close();
    return undefined;
  }
  return store;
}

/** One call as the harness and an agent session write it; `opened` runs while it is open with output. */
async function addCall(store, k, opened) {
  const cid = `call-${k}`;
  const op = `op-${k}`;
  const started = record(`bash: make step ${k}`, process.pid, tick(), null);
  const call = { toolCallId: cid, toolName: "bash", args: { command: `make step ${k}` } };
  await store.commit([setValue(callRecord(cid), started)]);
  await store.commit([setValue(OPEN_OPERATIONS, { [op]: { startedAt: started.startedAt, calls: [call] } })]);
  const enc = encoder();
  const out = outputList(op, cid);
  let body = text(300, `base ${k}`);
  const state = { content: [{ type: "text", text: body }], details: {}, terminate: false, truncation: { truncated: false } };
  await store.commit([appendList(out, enc.encode([["r", state]]), "base")]);
  for (let b = 0; b < 5; b++) {
    const more = text(100 + (rand() % 400), `chunk ${b}`);
    body += more;
    await store.commit([appendList(out, enc.encode([["a", ["content", 0, "text"], more]]))]);
  }
  await opened();
  const msg = { role: "tool", toolCallId: cid, toolName: "bash", isError: false, content: [{ type: "text", text: body }] };
  await store.commit([appendList(TRANSCRIPT, msg), setValue(OPEN_OPERATIONS, {}), retireScope(operationScope(op))]);
  await store.commit([setValue(callRecord(cid), { ...started, endedAt: tick(), status: "succeeded", exitCode: 0 })]);
}

// ---- 1. per change -------------------------------------------------------------------------------
if (!process.env.SPOOL_BENCH_SECTIONS || process.env.SPOOL_BENCH_SECTIONS.includes("change"))
  for (const backend of BACKENDS)
    for (const n of SIZES) {
      const sroot = join(root, `change-${backend}-${n}`);
      const id = backend === "postgres" ? `bench-${process.pid}-${n}` : "live";
      const store = await buildSession(sroot, id, n, false, backend);
      const entry =
        backend === "postgres"
          ? { id, dir: join(sroot, "sessions", id), file: `postgres#${id}`, backend, url: await pgUrl(), live: true }
          : listSessions(sroot)[0];
      const report = (line) => process.stderr.write(`${line}\n`);
      // serve's follower (a database session: every listing shows a new next seq, as after a commit)
      let listed = 0;
      const serve = watchSessions(createStateHost(), {
        list: async () => (backend === "postgres" ? [{ ...entry, nextSeq: ++listed }] : listSessions(sroot)),
        report,
      });
      // the full rebuild: the whole view read (JSONL: from a follower's snapshot), assigned to a tracked state
      const fullHost = createStateHost();
      const follower = backend === "jsonl" ? followJsonlSession(entry.file) : undefined;
      const readWhole = async () => (follower ? sessionFromSnapshot(entry, follower.snapshot) : await loadSession(entry));
      const full = fullHost.state(`session:${id}`, (await readWhole()).view);
      const looks = {
        serve: () => serve.refresh(),
        full: async () => {
          follower?.poll();
          const loaded = await readWhole();
          full.mutate((v) => Object.assign(v, loaded.view));
        },
      };
      const at = backend === "jsonl" ? `N=${n}` : `N=${n} ${backend}`;
      const readNote = (bytes) => (backend === "jsonl" ? `${(bytes / 1024).toFixed(1)} KiB read/look` : "");
      counting = true;
      bytesRead = 0;
      let t0 = performance.now();
      await serve.refresh();
      const firstMs = performance.now() - t0;
      const firstBytes = bytesRead;
      counting = false;
      const samples = { serve: { open: [], settled: [] }, full: { open: [], settled: [] } };
      const look = async (kind, step) => {
        const order = step % 2 === 0 ? ["serve", "full"] : ["full", "serve"];
        for (const who of order) {
          bytesRead = 0;
          counting = true;
          t0 = performance.now();
          await looks[who]();
          const ms = performance.now() - t0;
          counting = false;
          if (step >= 3) samples[who][kind].push({ ms, bytes: bytesRead });
        }
      };
      for (let s = 0; s < STEPS + 3; s++) {
        await addCall(store, n + 1 + s, () => look("open", s));
        await look("settled", s);
      }
      row("change", `${at}: serve's first read of the session`, firstMs, "ms", backend === "jsonl" ? `${(firstBytes / 1e6).toFixed(2)} MB read` : "");
      for (const kind of ["open", "settled"])
        for (const who of ["full", "serve"]) {
          const xs = samples[who][kind];
          const label = who === "serve" ? "serve (watchSessions)" : "full rebuild (before)";
          row(
            "change",
            `${at}: a call ${kind === "open" ? "opened, with output" : "settled"}; ${label}`,
            median(xs.map((x) => x.ms)),
            "ms/look",
            readNote(median(xs.map((x) => x.bytes))),
          );
        }
      await store.close();
      rmSync(sroot, { recursive: true, force: true });
    }

// ---- 1b. the database listing ----------------------------------------------------------------------
// Every look of serve at a database lists its sessions. S sessions of R stored values each (bulk
// inserted, a value ~130 bytes); before each look one session commits (its next seq moves). Before:
// the full listing (every session's size summed over its values) per look; serve: its lister (heads
// per look on one kept connection, a changed session's size at most once a second).
if (BACKENDS.includes("postgres") && (!process.env.SPOOL_BENCH_SECTIONS || process.env.SPOOL_BENCH_SECTIONS.includes("list"))) {
  const { listPostgresSessions, openPostgresStore: openPg } = await import("../dist/store/index.js");
  const { databaseLister } = await import("../dist/cli/database-listing.js");
  const pg = (await import("pg")).default;
  const url = await pgUrl();
  const S = Number(process.env.SPOOL_BENCH_LIST_SESSIONS ?? 50);
  const R = Number(process.env.SPOOL_BENCH_LIST_VALUES ?? 20_000);
  await (await openPg(url, { sessionId: `list-${process.pid}-seed` })).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const ids = Array.from({ length: S }, (_, k) => `list-${process.pid}-${k}`);
  for (const id of ids) {
    await client.query("INSERT INTO spool.sessions (session_id, next_seq) VALUES ($1, $2)", [id, R + 1]);
    await client.query(
      "INSERT INTO spool.list_values (session_id, scope_id, namespace, key, seq, value) " +
        "SELECT $1, 'session', 'transcript', '', g, repeat(md5($1 || g::text), 4) FROM generate_series(1, $2::int) g",
      [id, R],
    );
  }
  await client.query("VACUUM ANALYZE");
  const lister = databaseLister(root, { kind: "postgres", url, shown: "pg" });
  await lister.list();
  const times = { full: [], serve: [] };
  for (let step = 0; step < 15; step++) {
    const id = ids[step % S];
    await client.query("UPDATE spool.sessions SET next_seq = next_seq + 1 WHERE session_id = $1", [id]);
    for (const who of step % 2 === 0 ? ["full", "serve"] : ["serve", "full"]) {
      const t0 = performance.now();
      await (who === "full" ? listPostgresSessions(url) : lister.list());
      times[who].push(performance.now() - t0);
    }
  }
  const at = `${S} sessions × ${R.toLocaleString("en")} values`;
  row("list", `${at}: full listing per look (before)`, median(times.full), "ms/look");
  row("list", `${at}: serve's listing per look`, median(times.serve), "ms/look");
  for (const id of ids) for (const t of ["list_values", "sessions"]) await client.query(`DELETE FROM spool.${t} WHERE session_id = $1`, [id]);
  await lister.close();
  await client.end();
}

// ---- 2. serve's CPU with one output streaming -----------------------------------------------------
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
function start(bin, args, cwd) {
  const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise((r) => child.on("exit", r));
  return { child, exited, err: () => err };
}
async function until(check, what, ms = 60_000) {
  const t0 = Date.now();
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
const PRODUCER = "let i=0;const t=setInterval(()=>{console.log('line '+(++i)+' '+'x'.repeat(60));if(i>=300)clearInterval(t)},100)";
const bins = [{ name: "serve", bin: BIN }, ...(BASELINE_BIN ? [{ name: "baseline serve", bin: BASELINE_BIN }] : [])];
if (!process.env.SPOOL_BENCH_SECTIONS || process.env.SPOOL_BENCH_SECTIONS.includes("cpu"))
  for (const n of SIZES) {
    const sroot = join(root, `cpu-${n}`);
    await buildSession(sroot, "live", n, true);
    for (const b of bins) {
      const run = start(BIN, ["run", "--quiet", "--root", sroot, "--session", "live", "--", process.execPath, "-e", PRODUCER], root);
      // The run is live once its session record names it running.
      await sleep(1500);
      const serve = start(b.bin, ["serve", "--root", sroot, "--port", "0"], root);
      await until(() => /serving \d+ session/.test(serve.err()), "serve to start");
      // Two windows: the first still holds the collection of what the first read left (V8 runs a full
      // collection some seconds after a burst of allocation), the second is the steady state.
      await sleep(1000);
      for (const window of ["first", "next"]) {
        const before = cpuSeconds(serve.child.pid);
        const t0 = performance.now();
        await sleep(10_000);
        const used = cpuSeconds(serve.child.pid) - before;
        const secs = (performance.now() - t0) / 1000;
        const alive = run.child.exitCode === null;
        row(
          "cpu",
          `N=${n}: ${b.name}, one output streaming (~10 flushes/s), ${window} 10 s`,
          (used / secs) * 100,
          "% of a core",
          `${used.toFixed(2)} CPU-s over ${secs.toFixed(1)} s${alive ? "" : " (the run ended early!)"}`,
        );
      }
      serve.child.kill("SIGINT");
      await serve.exited;
      run.child.kill("SIGINT");
      await run.exited;
    }
    rmSync(sroot, { recursive: true, force: true });
  }

rmSync(root, { recursive: true, force: true });
if (!JSON_OUT) {
  console.log(`spool serve benchmark — node ${process.version}, ${new Date().toISOString()}`);
  let section = "";
  const w = Math.max(...rows.map((r) => r.name.length));
  for (const r of rows) {
    if (r.section !== section) console.log(`\n## ${(section = r.section)}`);
    console.log(`${r.name.padEnd(w)}  ${String(r.value).padStart(10)} ${r.unit.padEnd(12)} ${r.note}`);
  }
}

await pgServer?.stop();
