// bench:recall — the model-controlled arguments of recall, on the compiled dist/: key extraction over
// 100 KB and 1 MB of garbage of several shapes (target: 1 MB rejected in < 50 ms, cost linear in the
// size: 1 MB / 100 KB ≈ 10), and grep with pathological patterns over a 10 MB text (linear engine:
// the pattern's shape barely changes the time). Fresh input per sample (a random tail defeats any
// caching); median of samples.
// Usage: npm run build && node bench/recall.bench.mjs [--json]
import { performance } from "node:perf_hooks";
import { extractRecallKeys, MemoryArchive, recall } from "../dist/context/index.js";

const JSON_OUT = process.argv.includes("--json");
const SAMPLES = 7;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tail = () => Math.random().toString(36).slice(2, 8);

const SHAPES = {
  "spaces + x": (n) => " ".repeat(n) + "x" + tail(),
  "ccr: + spaces": (n) => "ccr:" + " ".repeat(n) + tail(),
  "ccr: repeated": (n) => "ccr:".repeat(n / 4) + tail(),
  "<< repeated": (n) => "<".repeat(n) + tail(),
  "JSON key of spaces": (n) => `{"key":"${" ".repeat(n)}${tail()}"}`,
  "hex, 15 at a time": (n) => "0123456789abcde ".repeat(n / 16) + tail(),
};

function time(fn) {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

const rows = [];
for (const [shape, make] of Object.entries(SHAPES)) {
  const small = [];
  const large = [];
  for (let i = 0; i < SAMPLES; i++) {
    const s = make(100_000);
    const l = make(1_000_000);
    small.push(time(() => extractRecallKeys(s)));
    large.push(time(() => extractRecallKeys(l)));
  }
  rows.push({ shape, ms100k: median(small), ms1m: median(large) });
}

const store = new MemoryArchive({ maxBytes: 0 });
const lines = [];
for (let i = 0; lines.length < 200_000; i++) lines.push(`${"a".repeat(i % 45)}${i % 5 === 0 ? "!" : ""} line ${i} status=${i % 13}`);
// maxChars: Infinity so the scan covers the whole text rather than stopping at an answer's cap.
const PATTERNS = ["status=7", "(a+)+$", "^(a|aa)+$", "(.*a){12}", "[a-z]+ line [0-9]+ status=1[0-2]$"];
const grepRows = [];
for (const grep of PATTERNS) {
  const ms = [];
  let header = "";
  for (let i = 0; i < 3; i++) {
    const key = store.put(`${lines.join("\n")}\n${tail()}`);
    ms.push(time(() => (header = recall(key, store, { grep, limit: 1_000_000, grepBudgetMs: 60_000, maxChars: Infinity }).text.split("\n", 1)[0])));
  }
  grepRows.push({ grep, ms: median(ms), chars: lines.join("\n").length, header });
}

if (JSON_OUT) {
  for (const r of rows)
    console.log(
      JSON.stringify({ bench: "recall-keys", shape: r.shape, ms100k: +r.ms100k.toFixed(3), ms1m: +r.ms1m.toFixed(3), ratio: +(r.ms1m / r.ms100k).toFixed(2) }),
    );
  for (const r of grepRows) console.log(JSON.stringify({ bench: "recall-grep", grep: r.grep, chars: r.chars, ms: +r.ms.toFixed(1) }));
} else {
  console.log(`bench:recall — node ${process.version}, median of ${SAMPLES} samples, fresh input each`);
  console.log("key extraction: shape | 100 KB ms | 1 MB ms | 1 MB / 100 KB (linear ≈ 10) | 1 MB < 50 ms");
  for (const r of rows)
    console.log(`${r.shape} | ${r.ms100k.toFixed(3)} | ${r.ms1m.toFixed(3)} | ${(r.ms1m / r.ms100k).toFixed(1)} | ${r.ms1m < 50 ? "yes" : "NO"}`);
  console.log(`grep over ${grepRows[0].chars} chars (${lines.length} lines), no time budget: pattern | ms | lines matched`);
  for (const r of grepRows) console.log(`${r.grep} | ${r.ms.toFixed(1)} | ${/(\d+) line\(s\)/.exec(r.header)?.[1] ?? "?"}`);
}
