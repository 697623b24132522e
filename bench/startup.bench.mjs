// Startup: what an agent pays when it wraps every shell command in `spool run`. Runs each command
// many times, interleaved so a noisy machine slows all rows alike, and reports the median and p90
// wall time next to `node -e 0` measured in the same run. Goal: spool ≤ 1.5× node -e 0.
// `--other DIR` adds another build's rows (DIR/dist/bin/main.js) to the same rounds: before/after.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../dist/bin/main.js", import.meta.url));
const json = process.argv.includes("--json");
const rounds = Number(process.env.STARTUP_ROUNDS ?? 30);
const cwd = mkdtempSync(join(tmpdir(), "spool-startup-"));
const otherAt = process.argv.indexOf("--other");
const other = otherAt > 0 ? resolve(process.argv[otherAt + 1], "dist/bin/main.js") : undefined;
const rows = [
  { name: "node -e 0", args: ["-e", "0"] },
  // The floor for `spool run`: Node plus one command in its own process group, waited for.
  { name: "node + one child", args: ["-e", "require('node:child_process').spawn('/bin/bash', ['-c', 'true'], { detached: true, stdio: 'pipe' })"] },
  { name: "spool --version", args: [bin, "--version"] },
  { name: "spool run -q -- true", args: [bin, "run", "-q", "--", "true"] },
  { name: "spool sessions --json", args: [bin, "sessions", "--json"] },
  ...(other === undefined
    ? []
    : [
        { name: "other: spool --version", args: [other, "--version"] },
        { name: "other: spool run -q -- true", args: [other, "run", "-q", "--", "true"] },
        { name: "other: spool sessions --json", args: [other, "sessions", "--json"] },
      ]),
];
const times = rows.map(() => []);
// One warm-up round fills the compile cache and the page cache, as on any machine after the first run.
for (let r = -1; r < rounds; r++) {
  rows.forEach((row, i) => {
    const t = process.hrtime.bigint();
    const res = spawnSync(process.execPath, row.args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
    if (res.status !== 0) throw new Error(`${row.name} exited ${res.status}: ${res.stderr}`);
    if (r >= 0) times[i].push(Number(process.hrtime.bigint() - t) / 1e6);
  });
}
rmSync(cwd, { recursive: true, force: true });
const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const base = q(times[0], 0.5);
for (const [i, row] of rows.entries()) {
  const med = q(times[i], 0.5);
  const out = { bench: "startup", row: row.name, medianMs: +med.toFixed(1), p90Ms: +q(times[i], 0.9).toFixed(1), vsNode: +(med / base).toFixed(2), rounds };
  console.log(
    json
      ? JSON.stringify(out)
      : `${row.name.padEnd(31)} median ${out.medianMs.toFixed(1).padStart(6)} ms  p90 ${out.p90Ms.toFixed(1).padStart(6)} ms  ${out.vsNode.toFixed(2)}× node -e 0`,
  );
}
