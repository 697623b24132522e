// One writer process of the PostgreSQL scale benchmark: streams a noisy build into its own session as
// fast as commits allow for a fixed time (operations of 60 checkpoints of ~2 KB of build output, each
// settled into the transcript and retired), then prints one JSON line: commit latencies and the
// wall-clock start of every commit (for commit-to-viewer latency) and the settled transcript bytes.
import { performance } from "node:perf_hooks";
import { appendList, ephemeralScope, list, openPostgresStore, retireScope, setValue, value } from "../dist/store/index.js";

const [url, schema, sessionId, seconds, seed] = process.argv.slice(2);
let rnd = Number(seed);
const random = () => (rnd = (rnd * 1103515245 + 12345) % 2147483648) / 2147483648;
const WORDS = "compiling linking warning error note CC LD src/ lib/ -O2 -Wall unused variable deprecated test passed failed".split(" ");
function line(i) {
  let s = `[${(i * 0.013).toFixed(3)}] `;
  const n = 6 + Math.floor(random() * 14);
  for (let k = 0; k < n; k++) s += WORDS[Math.floor(random() * WORDS.length)] + (random() < 0.2 ? `/${Math.floor(random() * 1e6).toString(36)}` : "") + " ";
  return s + "\n";
}
const wall = () => performance.timeOrigin + performance.now();
const store = await openPostgresStore(url, { schema, sessionId, durability: "process" });
process.stdout.write("ready\n");
await new Promise((r) => process.stdin.once("data", r));
const end = Date.now() + Number(seconds) * 1000;
const latencies = [];
const starts = [];
let transcriptBytes = 0;
let lineNo = 0;
const timed = async (writes) => {
  const t0 = wall();
  const { seq } = await store.commit(writes);
  const t1 = wall();
  latencies.push(t1 - t0);
  starts.push([seq + writes.length - 1, t0]);
};
for (let op = 0; Date.now() < end; op++) {
  const scope = ephemeralScope(`op-${op}`);
  const out = list("tool_output", `op-${op}:call-1`, scope);
  await timed([setValue(value("harness", "open"), { [`op-${op}`]: { startedAt: new Date().toISOString() } })]);
  let window = "";
  for (let c = 0; c < 60 && Date.now() < end; c++) {
    let chunk = "";
    while (chunk.length < 2048) chunk += line(lineNo++);
    window = (window + chunk).slice(-50_000);
    await timed([
      appendList(
        out,
        c % 50 === 0 ? [["r", { content: [{ type: "text", text: window }] }]] : [["a", ["content", 0, "text"], chunk]],
        c % 50 === 0 ? "base" : undefined,
      ),
    ]);
  }
  const result = { role: "toolResult", toolCallId: `call-${op}`, content: [{ type: "text", text: window.slice(-2048) }], isError: false };
  transcriptBytes += Buffer.byteLength(JSON.stringify(result));
  await timed([appendList(list("transcript"), result), setValue(value("harness", "open"), {}), retireScope(scope)]);
}
await store.close();
process.stdout.write(JSON.stringify({ latencies, starts, transcriptBytes }) + "\n");
