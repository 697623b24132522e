// bench:capture — spool `exec` (tail limits + spill) against the baseline `sh -c 'GEN > file'`, side by
// side in one run, on 100 MiB and 1 GiB of varied text lines from a generator process.
// Each spool run happens in a fresh child process so its peak RSS is the capturing process's own.
// Targets: throughput ≥ 0.85 × baseline on 1 GiB of plain lines and ≥ 0.6 × on 100 MiB of coloured
// ones; peak RSS ≤ 150 MB and within 20 MB between the 100 MiB and 1 GiB runs; at full force
// ≤ 12 updates/s and ≤ 200 KB/s of update bytes. With a spill the command writes the spill file
// itself and spool follows it (src/capture/file-child.ts), so the generator never waits for spool;
// the wall-clock ratio then depends on the CPU share the two get on a shared machine; the capturing
// process's CPU per MiB is the stable figure (what spool itself controls).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const genPath = join(here, "capture.gen.mjs");
const MiB = 1024 * 1024;
// Which way the output reaches the spill: "default" (what exec picks for this user: the command writes
// its spill file itself, except as root, where the pipes carry it), "direct" or "pipes".
const SPILL_PATH = process.env.SPOOL_BENCH_SPILL ?? "default";
if (!["default", "direct", "pipes"].includes(SPILL_PATH)) throw new Error(`SPOOL_BENCH_SPILL must be default, direct or pipes, got ${SPILL_PATH}`);

if (process.argv[2] === "--child") {
  // The capturing process: only exec, its publisher and the spill run here.
  const { exec } = await import("../dist/capture/index.js");
  const [, , , bytes, seed, dir, flavour = "", mode = "pipe"] = process.argv;
  let updates = 0;
  let updateBytes = 0;
  const started = performance.now();
  const r = await exec(`node ${genPath} ${bytes} ${seed} ${flavour}`, {
    ...(mode === "pty" ? { pty: true } : {}),
    capture: { limits: { retain: "tail" }, spill: { dir, ...(SPILL_PATH === "default" ? {} : { direct: SPILL_PATH === "direct" }) } },
    onUpdate: (u) => {
      updates++;
      updateBytes += Buffer.byteLength(JSON.stringify(u));
    },
  });
  const ms = performance.now() - started;
  const spillBytes = statSync(r.spillPath).size;
  process.stdout.write(
    JSON.stringify({
      ms,
      updates,
      updateBytes,
      spillBytes,
      rawBytes: r.rawBytes,
      totalLines: r.truncation.totalLines,
      peakRssKB: process.resourceUsage().maxRSS,
      exitCode: r.exitCode,
      cpu: process.cpuUsage(),
    }),
  );
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "spool-bench-capture-"));
function baseline(bytes, seed, flavour = "") {
  const out = join(dir, "baseline.out");
  const t0 = performance.now();
  execFileSync("sh", ["-c", `node ${genPath} ${bytes} ${seed} ${flavour} > ${out}`]);
  const ms = performance.now() - t0;
  const size = statSync(out).size;
  rmSync(out);
  if (size !== bytes) throw new Error(`baseline wrote ${size} bytes, expected ${bytes}`);
  return ms;
}
function spool(bytes, seed, flavour = "") {
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", String(bytes), String(seed), dir, flavour], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`spool run failed: ${child.stderr}`);
  const r = JSON.parse(child.stdout);
  rmSync(join(dir, "spill"), { recursive: true, force: true });
  if (r.spillBytes !== bytes || r.rawBytes !== bytes) throw new Error(`spill holds ${r.spillBytes} of ${bytes} bytes`);
  return r;
}

// The two plain-text sizes and the coloured row carry the targets; the short-line row (seq-like,
// ~5-byte lines) guards against any cost per line.
// `--pty-only` runs just the pipe-vs-pty table below.
const ptyOnly = process.argv.includes("--pty-only");
const cases = ptyOnly
  ? []
  : [
      { bytes: 100 * MiB, flavour: "" },
      { bytes: 1024 * MiB, flavour: "" },
      { bytes: 100 * MiB, flavour: "ansi" },
      { bytes: 100 * MiB, flavour: "short" },
    ];
const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const rows = [];
let seed = 1;
try {
  for (const { bytes, flavour } of cases) {
    const base = [];
    const runs = [];
    // Interleaved so both sides see the same machine load; the median of the repeats is reported.
    for (let i = 0; i < repeats; i++) {
      base.push(baseline(bytes, seed, flavour));
      runs.push(spool(bytes, seed, flavour));
      seed++;
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const baseMs = median(base);
    const spoolMs = median(runs.map((r) => r.ms));
    const peakRss = Math.max(...runs.map((r) => r.peakRssKB)) / 1024;
    const updatesPerSec = Math.max(...runs.map((r) => r.updates / (r.ms / 1000)));
    const updateKBps = Math.max(...runs.map((r) => r.updateBytes / 1024 / (r.ms / 1000)));
    // CPU of the capturing process (user + system), per MiB: what spool itself costs, which the
    // wall-clock ratio hides on a machine where the generator and other load compete for cores.
    const cpuMsPerMiB = median(runs.map((r) => (r.cpu.user + r.cpu.system) / 1000 / (bytes / MiB)));
    rows.push({ bytes, flavour, baseMs, spoolMs, peakRss, updatesPerSec, updateKBps, cpuMsPerMiB });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const fmt = (n, d = 1) => n.toFixed(d);
if (!ptyOnly) {
  const taken = SPILL_PATH !== "default" ? SPILL_PATH : process.geteuid?.() === 0 ? "pipes (the default as root)" : "direct (the default)";
  console.log(`node ${process.version}, ${repeats} interleaved repeats per size (median time; max RSS/updates over repeats); spill path: ${taken}`);
  console.log(
    "| input | baseline sh -c 'GEN > file' | spool exec (tail + spill) | throughput ratio | spool CPU (user+sys) | peak RSS (capturing process) | updates/s | update KB/s |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const mib = r.bytes / MiB;
    console.log(
      `| ${mib} MiB${r.flavour ? ` (${r.flavour})` : ""} | ${fmt(r.baseMs / 1000, 2)} s (${fmt(mib / (r.baseMs / 1000), 0)} MiB/s) | ${fmt(r.spoolMs / 1000, 2)} s (${fmt(mib / (r.spoolMs / 1000), 0)} MiB/s) | ${fmt(r.baseMs / r.spoolMs, 2)} × | ${fmt(r.cpuMsPerMiB, 2)} ms/MiB | ${fmt(r.peakRss)} MB | ${fmt(r.updatesPerSec)} | ${fmt(r.updateKBps)} |`,
    );
  }
  const [small, big, ansi] = rows;
  const checks = [
    [`throughput ≥ 0.85 × baseline (1 GiB)`, big.baseMs / big.spoolMs >= 0.85],
    [`throughput ≥ 0.6 × baseline (100 MiB ansi)`, ansi.baseMs / ansi.spoolMs >= 0.6],
    [`peak RSS ≤ 150 MB`, Math.max(...rows.map((r) => r.peakRss)) <= 150],
    [`peak RSS within 20 MB between 100 MiB and 1 GiB`, Math.abs(big.peakRss - small.peakRss) <= 20],
    // At full force: the 1 GiB run. The publisher sends the first change at once and the final state at
    // the end, whatever the pacing, so a run under a second carries two full windows (~100 KB) in less
    // than a second: the 100 MiB rows show ~160–300 KB/s for that reason alone (their columns above).
    [`≤ 12 updates/s (1 GiB, at full force)`, big.updatesPerSec <= 12],
    [`≤ 200 KB/s of update bytes (1 GiB, at full force)`, big.updateKBps <= 200],
  ];
  for (const [name, ok] of checks) console.log(`${ok ? "PASS" : "MISS"}  ${name}`);
}

// Pipe vs pseudo-terminal, side by side on the same inputs: plain lines (both on the fast path; the
// terminal adds \r\n), and coloured output that redraws a progress display with cursor movement
// (the terminal model from its first cursor-up on). Smaller inputs: the emulated path is the slow one.
const ptyBytes = Number(process.env.BENCH_PTY_MIB ?? 32) * MiB;
const ptyDir = mkdtempSync(join(tmpdir(), "spool-bench-pty-"));
const ptyRows = [];
try {
  for (const flavour of ["", "cursor"]) {
    const pipe = [];
    const pty = [];
    for (let i = 0; i < repeats; i++) {
      pipe.push(spoolIn(ptyDir, ptyBytes, seed, flavour, "pipe"));
      pty.push(spoolIn(ptyDir, ptyBytes, seed, flavour, "pty"));
      seed++;
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    ptyRows.push({
      flavour,
      pipeMs: median(pipe.map((r) => r.ms)),
      ptyMs: median(pty.map((r) => r.ms)),
      pipeRss: Math.max(...pipe.map((r) => r.peakRssKB)) / 1024,
      ptyRss: Math.max(...pty.map((r) => r.peakRssKB)) / 1024,
      lines: pty[0].totalLines,
    });
  }
} finally {
  rmSync(ptyDir, { recursive: true, force: true });
}
function spoolIn(d, bytes, s, flavour, mode) {
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", String(bytes), String(s), d, flavour, mode], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`spool run failed: ${child.stderr}`);
  const r = JSON.parse(child.stdout);
  rmSync(join(d, "spill"), { recursive: true, force: true });
  if (r.spillBytes !== r.rawBytes || r.rawBytes < bytes) throw new Error(`spill holds ${r.spillBytes} of ${r.rawBytes} raw bytes`);
  return r;
}
console.log("");
console.log(`pipe vs pty, ${ptyBytes / MiB} MiB generated per run (median of ${repeats}; the pty's raw stream is larger by one CR per line)`);
console.log("| input | spool exec, pipe | spool exec, pty | pty / pipe time | peak RSS pipe / pty | path taken |");
console.log("|---|---|---|---|---|---|");
for (const r of ptyRows) {
  const mib = ptyBytes / MiB;
  console.log(
    `| ${r.flavour === "cursor" ? "ANSI, cursor-moving" : "plain lines"} | ${fmt(r.pipeMs / 1000, 2)} s (${fmt(mib / (r.pipeMs / 1000), 0)} MiB/s) | ${fmt(r.ptyMs / 1000, 2)} s (${fmt(mib / (r.ptyMs / 1000), 0)} MiB/s) | ${fmt(r.ptyMs / r.pipeMs, 2)} × | ${fmt(r.pipeRss)} / ${fmt(r.ptyRss)} MB | ${r.flavour === "cursor" ? "terminal model (both)" : "fast path (both)"} |`,
  );
}
