// Runs every bench/*.bench.mjs, one after another (benchmarks must not compete for the CPU), each
// in its own Node process so one benchmark's heap and JIT state cannot colour the next. Arguments
// such as --json are passed through to every benchmark. `npm run bench` builds dist/ first.

import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const here = fileURLToPath(new URL(".", import.meta.url));
const args = process.argv.slice(2);
const json = args.includes("--json");
const benches = readdirSync(here)
  .filter((name) => name.endsWith(".bench.mjs"))
  .sort();

if (benches.length === 0) {
  process.stderr.write(`no *.bench.mjs files in ${here}\n`);
  process.exit(1);
}

const failed = [];
for (const name of benches) {
  // In --json mode stdout carries only the benchmarks' JSON lines, so headings go to stderr.
  (json ? process.stderr : process.stdout).write(`\n=== ${name} ===\n`);
  const result = spawnSync(process.execPath, [join(here, name), ...args], { stdio: "inherit" });
  if (result.error) {
    process.stderr.write(`${name}: could not start (${result.error.message})\n`);
    failed.push(name);
  } else if (result.status !== 0) {
    process.stderr.write(`${name}: exited with ${result.status ?? result.signal}\n`);
    failed.push(name);
  }
}

if (failed.length > 0) {
  process.stderr.write(`\n!! ${failed.length} of ${benches.length} benchmarks failed: ${failed.join(", ")}\n`);
  process.exitCode = 1;
}
