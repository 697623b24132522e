// Server side of the harness fan-out benchmark (not a *.bench.mjs: bench/harness.bench.mjs starts it in
// its own process so that process.cpuUsage() counts the server only, never the clients).
// Protocol on stdio: prints "READY <url> <token>"; on "GO <seconds> <bytesPerSecond>\n" it runs one
// real bash call printing that rate through harness → lane state → wire server, then prints
// "DONE <json>" with the server's CPU time, wall time and peak RSS over the run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createWorkspace } from "../dist/context/index.js";
import { createBashTool, createHarness, createStateHost, emptyLane, reduceLane } from "../dist/harness/index.js";
import { createMemoryStore } from "../dist/store/index.js";
import { createWireServer } from "../dist/wire/index.js";

const dir = mkdtempSync(join(tmpdir(), "spool-bench-fanout-"));
const host = createStateHost();
const lane = host.state("lane", emptyLane());
const server = await createWireServer({ states: host });
const harness = createHarness({ store: createMemoryStore(), workspace: createWorkspace({ dir, keep: true }), tools: [createBashTool()] });
let batchBytes = 0;
let batches = 0;
let totalBytes = 0;
harness.on((e) => {
  lane.mutate((v) => reduceLane(v, e));
  if (e.type === "tool_update") {
    batches++;
    batchBytes += JSON.stringify(e.ops).length;
    totalBytes = lane.value.operation?.tools[0]?.output?.truncation?.totalBytes ?? totalBytes;
  }
});
process.stdout.write(`READY ${server.url} ${server.token}\n`);

// Fresh, varied lines (a seeded generator inside the command), ~rate bytes per second in 20 ticks/s.
const generator = (seconds, rate) => `node -e '
let seed = ${Math.floor(Math.random() * 1e9)}, n = 0;
const words = ["compile", "link", "test", "warn", "pass", "fail", "module", "vector", "alpha", "omega"];
const tick = () => {
  let s = "";
  while (s.length < ${Math.floor(rate / 20)}) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    s += "[" + n++ + "] " + words[seed % 10] + " " + seed.toString(36) + " " + words[(seed >> 4) % 10] + "\\n";
  }
  process.stdout.write(s);
};
const t = setInterval(tick, 50);
setTimeout(() => clearInterval(t), ${seconds * 1000});
'`;

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const [cmd, seconds, rate] = line.split(" ");
  if (cmd === "GO") {
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const subscribers = server.subscribers;
    batchBytes = batches = totalBytes = 0;
    await harness.runTools(`op${Date.now()}`, [{ toolCallId: "c", toolName: "bash", args: { command: generator(Number(seconds), Number(rate)) } }]);
    const cpu = process.cpuUsage(cpu0);
    const wall = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    process.stdout.write(
      `DONE ${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wall, peakRss: peak, maxRss: process.resourceUsage().maxRSS, subscribers, toolBytes: totalBytes, batches, batchBytes, subscribersAfter: server.subscribers })}\n`,
    );
  } else if (cmd === "QUIT") break;
}
await server.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
