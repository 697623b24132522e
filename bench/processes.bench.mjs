// Many background processes: what an agent's chatty servers and watchers cost spool's own process.
// `spool mcp` (the built CLI, as an MCP client starts it) is given N background commands through its
// bash tool (background: true), each printing a short line every few milliseconds, and nobody reads
// them for a while; then every one is read once with process_output, as a model would. Rows: spool's
// CPU (user + system, from /proc, its children excluded) as a share of one core while they print,
// next to a floor measured in the same run — a plain Node process that spawns the same commands with
// their stdout and stderr on pipes and throws the bytes away — and what the session wrote to disk.
// Goal: spool within a small multiple of the floor (it cleans, bounds, spills and records the output).
//   npm run bench:processes                     N=100, 10 s of printing
//   npm run bench:processes -- --json           one JSON line per row
//   PROCS=50 SECONDS=5 INTERVAL_MS=5 ROUNDS=3 node bench/processes.bench.mjs
//   ONLY=spool NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/processes.bench.mjs   (profile)
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const JSON_OUT = process.argv.includes("--json");
const PROCS = Number(process.env.PROCS ?? 100);
const SECONDS = Number(process.env.SECONDS ?? 10);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const bin = fileURLToPath(new URL("../dist/bin/main.js", import.meta.url));
// --other DIR: another build's checkout (its dist/bin/main.js) measured in the same rounds, before/after.
const otherAt = process.argv.indexOf("--other");
const builds = [{ name: "spool mcp", bin }];
if (otherAt > 0) builds.push({ name: `other (${process.argv[otherAt + 1]})`, bin: join(process.argv[otherAt + 1], "dist/bin/main.js") });
// Extra Node flags for spool mcp, e.g. NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
const NODE_ARGS = (process.env.NODE_ARGS ?? "").split(" ").filter(Boolean);
const TICK = 100; // clock ticks a second in /proc/<pid>/stat (USER_HZ, 100 on Linux)

// One bash each, no fork per line: a builtin `read -t` on a pipe nobody writes to is the sleep.
const chatty = (n) =>
  `exec 3<> <(:); i=0; while :; do i=$((i+1)); echo "worker ${n} line $i: compiled module $((i % 97)) in $((i % 13)) ms"; read -t ${INTERVAL_MS / 1000} -u 3; done`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** utime + stime of one process, in seconds. */
function cpuOf(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}
/** The spill files: the commands' own output, written by the commands themselves. */
const spillBytes = (sessions) => readdirSync(sessions).reduce((n, id) => n + dirBytes(join(sessions, id, "spill")), 0);
const dirBytes = (d) => {
  let n = 0;
  for (const e of readdirSync(d, { withFileTypes: true, recursive: true })) if (e.isFile()) n += statSync(join(e.parentPath, e.name)).size;
  return n;
};

/** The floor: Node spawning the same commands on pipes, reading and discarding their output. */
async function floor() {
  const script = `
    const { spawn } = require("node:child_process");
    const cmds = JSON.parse(process.argv[1]);
    let bytes = 0;
    const pids = [];
    for (const c of cmds) {
      const p = spawn("/bin/bash", ["-c", c], { stdio: ["ignore", "pipe", "pipe"], detached: true });
      pids.push(p.pid);
      p.stdout.on("data", (d) => (bytes += d.length));
      p.stderr.on("data", (d) => (bytes += d.length));
    }
    process.stdout.write("ready\\n");
    process.on("SIGTERM", () => {
      for (const pid of pids) process.kill(-pid, "SIGKILL");
      process.stdout.write(bytes + "\\n");
      process.exit(0);
    });
  `;
  const cmds = Array.from({ length: PROCS }, (_, i) => chatty(i));
  const child = spawn(process.execPath, ["-e", script, JSON.stringify(cmds)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  while (!out.includes("ready")) await sleep(10);
  await sleep(1000);
  const c0 = cpuOf(child.pid);
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  const share = (cpuOf(child.pid) - c0) / ((performance.now() - t0) / 1000);
  child.kill("SIGTERM");
  await new Promise((r) => child.on("exit", r));
  const bytes = Number(out.split("\n")[1]);
  return { share, bytes };
}

async function spoolMcp(bin) {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-processes-"));
  const root = join(dir, ".spool");
  const transport = new StdioClientTransport({ command: process.execPath, args: [...NODE_ARGS, bin, "mcp", "--root", root], cwd: dir, stderr: "ignore" });
  const client = new Client({ name: "spool-bench", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  const ids = [];
  for (let i = 0; i < PROCS; i++) {
    const r = await client.callTool({ name: "bash", arguments: { command: chatty(i), background: true } });
    ids.push(r.structuredContent?.processId ?? /proc-[0-9a-z]+/.exec(r.content[0].text)[0]);
  }
  await sleep(1000);
  const sessions = join(root, "sessions");
  const b0 = dirBytes(sessions);
  const spill0 = spillBytes(sessions);
  const c0 = cpuOf(pid);
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  const secs = (performance.now() - t0) / 1000;
  const share = (cpuOf(pid) - c0) / secs;
  const spilled = (spillBytes(sessions) - spill0) / secs;
  const written = (dirBytes(sessions) - b0) / secs - spilled;
  // Every process read once, as a model would: the reads must carry what was printed.
  const r0 = performance.now();
  let skipped = 0;
  let chars = 0;
  for (const id of ids) {
    const r = await client.callTool({ name: "process_output", arguments: { processId: id } });
    const text = r.content[0].text;
    chars += text.length;
    const m = /\[(\d+) lines? \(/.exec(text);
    if (m) skipped += Number(m[1]);
  }
  const readMs = (performance.now() - r0) / PROCS;
  await client.close();
  rmSync(dir, { recursive: true, force: true });
  return { share, written, spilled, readMs, chars: chars / PROCS, skipped: skipped / PROCS };
}

const rows = [];
function row(name, value, unit, note = "") {
  const r = { bench: "processes", row: name, value: Number(value.toFixed(value < 10 ? 3 : 1)), unit, procs: PROCS, intervalMs: INTERVAL_MS, note };
  rows.push(r);
  if (JSON_OUT) console.log(JSON.stringify(r));
  else console.log(`${name.padEnd(44)} ${String(r.value).padStart(10)} ${unit}${note ? `  (${note})` : ""}`);
}

const q = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const floors = [];
const runs = builds.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  if (process.env.ONLY !== "spool") floors.push(await floor());
  // Builds take turns going first.
  for (let k = 0; k < builds.length; k++) {
    const i = (round + k) % builds.length;
    runs[i].push(await spoolMcp(builds[i].bin));
  }
}
if (floors.length === 0) floors.push({ share: Number.NaN, bytes: Number.NaN });
const f = q(floors.map((x) => x.share));
if (!JSON_OUT) console.log(`${PROCS} background processes, a line every ${INTERVAL_MS} ms each, ${SECONDS} s, median of ${ROUNDS} rounds (interleaved)`);
row("floor: node reading the pipes, CPU", f * 100, "% of a core", `${(q(floors.map((x) => x.bytes)) / SECONDS / 1024).toFixed(0)} KiB/s of output`);
for (const [i, build] of builds.entries()) {
  const spools = runs[i];
  const s = q(spools.map((x) => x.share));
  row(`${build.name}, CPU`, s * 100, "% of a core", spools.map((x) => (x.share * 100).toFixed(1)).join(" / "));
  row(`${build.name} / floor`, s / f, "×");
  row(
    `${build.name}: session log and sidecars written`,
    q(spools.map((x) => x.written)) / 1024,
    "KiB/s",
    `spill files ${(q(spools.map((x) => x.spilled)) / 1024).toFixed(0)} KiB/s`,
  );
  row(
    `${build.name}: process_output after the wait`,
    q(spools.map((x) => x.readMs)),
    "ms a read",
    `${q(spools.map((x) => x.chars)).toFixed(0)} chars, ${q(spools.map((x) => x.skipped)).toFixed(0)} lines left the window unread`,
  );
}
