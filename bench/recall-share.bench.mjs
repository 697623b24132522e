// bench:recall-share — what parallel recalls in one step cost a context pass, on the compiled dist/.
// A step whose calls are all recalls goes through prepareHistory over a real workspace (disk
// archive) with a 200,000-char turn budget, as the AI SDK's prepareStep runs it before every model
// call: the whole history again each step, so this is paid per step for as long as the turn is in
// the history. Rows: 3 recalls of a 192.5K-char text at the AI SDK's answer cap (100,000, answers are
// pages); 3 recalls of a 10 MB text at that cap; 1 and 3 recalls whose answers are whole 10 MB texts
// (an unbounded recall, as `spool recall` gives, with no per-result cap for recall); and, as a
// control, the same answers as another tool's results (cut to previews as before). Per row: median
// ms of a pass over an already-seen history (the steady state), and the answers' chars after it.
// Usage: npm run build && node bench/recall-share.bench.mjs [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { assistant, createWorkspace, prepareHistory, recall, textOf, toolResult, userText } from "../dist/context/index.js";

const JSON_OUT = process.argv.includes("--json");
const SAMPLES = 9;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A log-like text of `size` chars, different per `seed`. */
function text(size, seed) {
  let s = "";
  for (let i = 0; s.length < size; i++)
    s += `2026-12-03T01:${String(i % 60).padStart(2, "0")} INFO worker.${seed} request ${i} handled in ${(i * 7919) % 997}ms\n`;
  return s.slice(0, size);
}

function row(name, sizes, answerCap, tool = "recall") {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-share-"));
  try {
    const workspace = createWorkspace({ dir, keep: false, archiveMaxBytes: 0 });
    const calls = sizes.map((size, i) => ({ id: `call_${i}`, name: tool, input: { key: workspace.archive.put(text(size, i)) } }));
    const messages = [
      userText("Read them."),
      assistant("", calls),
      ...calls.map((c) => toolResult(c.id, recall(c.input.key, workspace, { maxChars: answerCap }).text, { toolName: tool })),
    ];
    const options = {
      workspace,
      config: { turnBudgetChars: 200_000 },
      toolCaps: { [tool]: Number.isFinite(answerCap) ? answerCap : 1e12 },
      assertValid: false,
    };
    let out = prepareHistory(messages, options);
    const ms = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      out = prepareHistory(messages, options);
      ms.push(performance.now() - t);
    }
    const before = messages.slice(2).map((m) => textOf(m).length);
    const after = out.messages.slice(2).map((m) => textOf(m).length);
    workspace.cleanup();
    return { name, before, after, total: after.reduce((a, b) => a + b, 0), ms: median(ms) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [
  row("3 × 192.5K text, 100K answers", [192_500, 192_500, 192_500], 100_000),
  row("3 × 10 MB text, 100K answers", [10_000_000, 10_000_000, 10_000_000], 100_000),
  row("1 × 10 MB whole answer", [10_000_000], Number.POSITIVE_INFINITY),
  row("3 × 10 MB whole answers", [10_000_000, 10_000_000, 10_000_000], Number.POSITIVE_INFINITY),
  // the same answers as another tool's results: cut to previews, largest first, as before
  row("control: 3 × 100K bash results", [192_500, 192_500, 192_500], 100_000, "bash"),
  row("control: 3 × 10 MB bash results", [10_000_000, 10_000_000, 10_000_000], Number.POSITIVE_INFINITY, "bash"),
];

if (JSON_OUT) {
  for (const r of rows) console.log(JSON.stringify({ bench: "recall-share", row: r.name, after: r.after, total: r.total, ms: +r.ms.toFixed(2) }));
} else {
  console.log(`bench:recall-share — node ${process.version}, turn budget 200,000, median of ${SAMPLES} passes over a seen history`);
  console.log("row | answers before (chars) | answers after (chars) | total after | ms per pass");
  for (const r of rows) console.log(`${r.name} | ${r.before.join(" / ")} | ${r.after.join(" / ")} | ${r.total} | ${r.ms.toFixed(2)}`);
}
