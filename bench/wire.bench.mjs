// Wire and serve benchmark, on the compiled dist/, side by side in one run:
// - fan-out: one large batch to 50 subscribers, serialised per subscriber (as before) vs once and
//   shared (frame.ts);
// - following a growing session: a full read-only load of the log per change (as `spool serve` did)
//   vs a follower's poll that reads the appended bytes only.
//   npm run bench:wire            table
//   npm run bench:wire -- --json  one JSON line per row
// Inputs are fresh, varied strings built before each timed loop.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encoder, track } from "../dist/delta/index.js";
import { appendList, followJsonlSession, list, openJsonlStore, readJsonlSnapshot } from "../dist/store/index.js";
import { frameOf } from "../dist/wire/frame.js";

const JSON_OUT = process.argv.includes("--json");
const rows = [];
function row(section, name, val, unit, note = "") {
  const r = { section, name, value: Number(val.toFixed(val < 10 ? 3 : 1)), unit, note };
  rows.push(r);
  if (JSON_OUT) console.log(JSON.stringify(r));
}

const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua".split(" ");
let seed = 1;
function text(n, tag) {
  const parts = [`${tag}:`];
  let len = parts[0].length;
  while (len < n) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const w = WORDS[seed % WORDS.length] + (seed % 7 === 0 ? "\n" : " ");
    parts.push(w);
    len += w.length;
  }
  return parts.join("").slice(0, n);
}

function time(fn, reps) {
  fn(); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) fn(i);
  return (performance.now() - t0) / reps;
}

// Fan-out: each subscriber has its own encoder; every rep is a fresh batch (a new text value).
const SUBSCRIBERS = 50;
for (const size of [1_000_000, 20_000_000]) {
  const reps = size > 5_000_000 ? 3 : 10;
  const texts = Array.from({ length: reps + 1 }, (_, i) => text(size, `b${size}-${i}`));
  const batches = texts.map((t) => {
    const tr = track({ text: "" });
    tr.flush();
    tr.state.text = t;
    return tr.flush();
  });
  const encs = Array.from({ length: SUBSCRIBERS }, () => encoder());
  const perSubscriber = time((i = 0) => {
    const ops = batches[i];
    for (const enc of encs) Buffer.from(`id: ${i}\nevent: ops\ndata: ${JSON.stringify(enc.encode(ops))}\n\n`, "utf8");
  }, reps);
  const shared = time((i = 0) => {
    const ops = batches[i];
    for (const enc of encs) frameOf(i, ops, enc.encode(ops));
  }, reps);
  const mb = (size / 1e6).toFixed(0);
  row("fan-out", `${mb} MB batch to ${SUBSCRIBERS} subscribers, serialised per subscriber`, perSubscriber, "ms");
  row("fan-out", `${mb} MB batch to ${SUBSCRIBERS} subscribers, serialised once and shared`, shared, "ms", `${(perSubscriber / shared).toFixed(1)}× faster`);
}

// Following: a 20 MB session log, then a small append per change.
const root = mkdtempSync(join(tmpdir(), "spool-bench-wire-"));
try {
  const file = join(root, "session.jsonl");
  const store = await openJsonlStore(file, { sessionId: "bench" });
  for (let i = 0; i < 100; i++) await store.commit([appendList(list("transcript", ""), { text: text(200_000, `r${i}`) })]);
  const follower = followJsonlSession(file);
  const changes = 20;
  let fullMs = 0;
  let pollMs = 0;
  for (let i = 0; i < changes; i++) {
    await store.commit([appendList(list("transcript", ""), { text: text(2_000, `c${i}`) })]);
    // The poll first, so the full load's garbage is not collected on the poll's time.
    let t0 = performance.now();
    follower.poll();
    pollMs += performance.now() - t0;
    t0 = performance.now();
    readJsonlSnapshot(file).readList(list("transcript", ""), { limit: 1 });
    fullMs += performance.now() - t0;
  }
  let idleMs = performance.now();
  for (let i = 0; i < 1000; i++) follower.poll();
  idleMs = (performance.now() - idleMs) / 1000;
  await store.close();
  row("follow", "20 MB log, one 2 KB append: full read-only load", fullMs / changes, "ms");
  row("follow", "20 MB log, one 2 KB append: follower poll", pollMs / changes, "ms", `${(fullMs / pollMs).toFixed(0)}× less`);
  row("follow", "20 MB log, nothing new: follower poll", idleMs, "ms");
} finally {
  rmSync(root, { recursive: true, force: true });
}

if (!JSON_OUT) {
  for (const r of rows) console.log(`${r.section.padEnd(8)} ${r.name.padEnd(72)} ${String(r.value).padStart(10)} ${r.unit}  ${r.note}`);
}
