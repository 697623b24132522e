// Two ways of capturing side by side, against the baseline `sh -c 'GEN > file'`, same seeds, the
// baseline first in every run and the two sides' order alternating; medians of the per-run ratios.
// Not a *.bench.mjs (run-all skips it): a tool for a change to the capture path, e.g. docs/performance.md §2.
//   node bench/capture-ab.mjs                   this build: the command writing its spill (direct) vs pipes
//   node bench/capture-ab.mjs --other DIR       DIR/dist (another checkout's build) vs this build
// Env: CASES="1024:,100:ansi" (MiB:flavour, comma-separated), REPEATS=7, SIDES=pipes (with --other:
// both builds on the pipe path, spill.direct: false; else direct). Needs `npm run build` first.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const gen = join(here, "capture.gen.mjs");
const MiB = 1024 * 1024;
const self = fileURLToPath(import.meta.url);
const thisBuild = join(here, "../dist/capture/index.js");

if (process.argv[2] === "--child") {
  const [, , , lib, direct, bytes, seed, dir, flavour = ""] = process.argv;
  const { exec } = await import(lib);
  const started = performance.now();
  const r = await exec(`node ${gen} ${bytes} ${seed} ${flavour}`, {
    capture: { limits: { retain: "tail" }, spill: { dir, direct: direct === "direct" } },
    onUpdate: () => {},
  });
  const ms = performance.now() - started;
  const cpu = process.cpuUsage();
  process.stdout.write(
    JSON.stringify({
      ms,
      raw: r.rawBytes,
      spill: statSync(r.spillPath).size,
      cpuMs: (cpu.user + cpu.system) / 1000,
      rssMB: process.resourceUsage().maxRSS / 1024,
    }),
  );
  process.exit(0);
}

const otherAt = process.argv.indexOf("--other");
const sides =
  otherAt > 0
    ? [
        { name: "other", lib: join(resolve(process.argv[otherAt + 1]), "dist/capture/index.js"), direct: process.env.SIDES ?? "direct" },
        { name: "this", lib: thisBuild, direct: process.env.SIDES ?? "direct" },
      ]
    : [
        { name: "pipes", lib: thisBuild, direct: "pipes" },
        { name: "direct", lib: thisBuild, direct: "direct" },
      ];
const dir = mkdtempSync(join(tmpdir(), "spool-capture-ab-"));
function baseline(bytes, seed, flavour) {
  const out = join(dir, "baseline.out");
  const started = performance.now();
  execFileSync("sh", ["-c", `node ${gen} ${bytes} ${seed} ${flavour} > ${out}`]);
  const ms = performance.now() - started;
  rmSync(out);
  return ms;
}
function run(side, bytes, seed, flavour) {
  const d = join(dir, side.name);
  const c = spawnSync(process.execPath, [self, "--child", side.lib, side.direct, String(bytes), String(seed), d, flavour], { encoding: "utf8" });
  if (c.status !== 0) throw new Error(`${side.name}: ${c.stderr}`);
  rmSync(d, { recursive: true, force: true });
  const r = JSON.parse(c.stdout);
  if (r.raw !== bytes || r.spill !== bytes) throw new Error(`${side.name}: read ${r.raw}, spilled ${r.spill} of ${bytes} bytes`);
  return r;
}
const cases = (process.env.CASES ?? "1024:,100:ansi").split(",").map((c) => ({ bytes: Number(c.split(":")[0]) * MiB, flavour: c.split(":")[1] ?? "" }));
const repeats = Number(process.env.REPEATS ?? 7);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let seed = 100;
try {
  for (const { bytes, flavour } of cases) {
    const label = `${bytes / MiB} MiB ${flavour || "plain"}`;
    const ratios = sides.map(() => []);
    const cpu = sides.map(() => []);
    const loads = [];
    for (let i = 0; i < repeats; i++, seed++) {
      loads.push(loadavg()[0]);
      const base = baseline(bytes, seed, flavour);
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      const results = [];
      for (const k of order) results[k] = run(sides[k], bytes, seed, flavour);
      const parts = sides.map((s, k) => {
        ratios[k].push(base / results[k].ms);
        cpu[k].push(results[k].cpuMs / (bytes / MiB));
        return `${s.name} ${(results[k].ms / 1000).toFixed(2)} s ${(base / results[k].ms).toFixed(2)}× ${cpu[k].at(-1).toFixed(2)} ms/MiB ${results[k].rssMB.toFixed(0)} MB`;
      });
      console.log(`${label} #${i + 1} (load ${loads.at(-1).toFixed(1)}): baseline ${(base / 1000).toFixed(2)} s | ${parts.join(" | ")}`);
    }
    const summary = sides.map((s, k) => `${s.name} ${median(ratios[k]).toFixed(2)}× ${median(cpu[k]).toFixed(2)} ms/MiB`).join(", ");
    console.log(`median ${label}: ${summary} (load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)})`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
