// bench:context, on the compiled dist/, in two parts.
// 1. Savings on a corpus of realistic sessions built from the real output of real commands run on
//    this machine over this repository (bench/context.corpus.mjs: builds, test runs, git log -p,
//    file reads, greps), in the shapes of mini-swe-agent (bash only), Codex (shell only), Claude Code
//    and an AI SDK agent. Each session goes through prepareHistory as `spool compact` runs it (its
//    format, a fresh workspace, aged as of its last turn). Per session: tool-result characters
//    before → after, every cut text recalled from the workspace and compared byte for byte, and a
//    second pass over the re-read output giving identical bytes. Goal: ≥ 60% fewer characters on
//    every session of ≥ 50 results (the process exits 1 when a session misses it or a recall fails).
// 2. Speed on generated transcripts (200 and 2,000 messages, a quarter tool results of 100 B –
//    200 KB): first pass (fresh workspace, fresh text every sample), second pass over its own output
//    (target ≤ 0.1× the first), and a baseline of structuredClone over the same transcript.
// Usage: npm run bench:context [-- --json] [-- --fresh-corpus]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { readFileSync } from "node:fs";
import { adapters, archiveKey, createWorkspace, fromAnthropic, prepareHistory, textOf, toAnthropic, unwrapConversation } from "../dist/context/index.js";
import { buildCorpus, rng } from "./context.corpus.mjs";

const JSON_OUT = process.argv.includes("--json");

const WORDS = ["request", "handler", "timeout", "retry", "cache", "module", "parse", "token", "stream", "buffer", "index", "worker"];
const word = (r) => WORDS[Math.floor(r() * WORDS.length)];
const hex = (r, n) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join("");

const KINDS = {
  log(r, size) {
    let s = "";
    for (let i = 0; s.length < size; i++) {
      const lvl = r() < 0.03 ? "ERROR" : r() < 0.1 ? "WARN" : "INFO";
      s += `2026-11-29T10:${String(i % 60).padStart(2, "0")}:${String(Math.floor(r() * 60)).padStart(2, "0")}.${Math.floor(r() * 1000)}Z ${lvl} ${word(r)}.${word(r)} id=${hex(r, 8)} took ${Math.floor(r() * 900)}ms\n`;
    }
    return s;
  },
  diff(r, size) {
    let s = "";
    while (s.length < size) {
      const f = `src/${word(r)}/${word(r)}.ts`;
      s += `diff --git a/${f} b/${f}\nindex ${hex(r, 7)}..${hex(r, 7)} 100644\n--- a/${f}\n+++ b/${f}\n@@ -${Math.floor(r() * 400)},7 +${Math.floor(r() * 400)},8 @@\n`;
      for (let i = 0; i < 8; i++) s += `${r() < 0.3 ? "-" : r() < 0.5 ? "+" : " "}  const ${word(r)}${i} = ${word(r)}(${Math.floor(r() * 100)});\n`;
    }
    return s;
  },
  json(r, size) {
    const items = [];
    let len = 2;
    while (len < size) {
      const item = { id: hex(r, 12), name: `${word(r)}-${word(r)}`, count: Math.floor(r() * 1e6), ok: r() < 0.8, tags: [word(r), word(r)] };
      len += JSON.stringify(item).length + 1;
      items.push(item);
    }
    return JSON.stringify(items, null, r() < 0.5 ? 2 : 0);
  },
  source(r, size) {
    let s = 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n';
    while (s.length < size)
      s += `func ${word(r)}${hex(r, 4)}(x int) int {\n\tif x > ${Math.floor(r() * 99)} {\n\t\tfmt.Println("${word(r)}")\n\t}\n\treturn x * ${Math.floor(r() * 9)}\n}\n\n`;
    return s;
  },
  tests(r, size) {
    let s = "";
    while (s.length < size)
      s += ` ${r() < 0.05 ? "FAIL" : "✓"} test/${word(r)}.test.ts > ${word(r)} ${word(r)} returns ${word(r)} (${Math.floor(r() * 50)}ms)\n`;
    return s + `\n Test Files  ${Math.floor(r() * 9)} failed | 120 passed\n`;
  },
};
const KIND_NAMES = Object.keys(KINDS);

/** 100 B – 200 KB, log-uniform: most results are small, a few are huge (as in real sessions). */
function resultSize(r) {
  return Math.floor(100 * Math.pow(2000, r()));
}

/** An Anthropic transcript of `n` messages, a quarter of them tool results, parsed from JSON like a real request. */
function transcript(n, seed) {
  const r = rng(seed);
  const msgs = [];
  let turn = 0;
  while (msgs.length < n) {
    msgs.push({ role: "user", content: `step ${turn}: ${word(r)} the ${word(r)} ${hex(r, 6)}` });
    // one call per turn, and every fourth turn a batch of three plus six chat messages: a quarter are results either way
    const calls = turn % 4 === 3 ? 3 : 1;
    const ids = Array.from({ length: calls }, (_, i) => `toolu_${seed}_${turn}_${i}`);
    msgs.push({
      role: "assistant",
      content: [
        { type: "text", text: `Checking ${word(r)}.` },
        ...ids.map((id) => ({ type: "tool_use", id, name: r() < 0.5 ? "read" : "grep", input: { q: word(r) } })),
      ],
    });
    msgs.push({
      role: "user",
      content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: KINDS[KIND_NAMES[Math.floor(r() * KIND_NAMES.length)]](r, resultSize(r)) })),
    });
    msgs.push({ role: "assistant", content: `Result ${turn}: ${word(r)} ${word(r)}.` });
    if (calls === 3) {
      msgs.push({ role: "user", content: `and the ${word(r)}?` }, { role: "assistant", content: `The ${word(r)} is fine.` });
      msgs.push({ role: "user", content: `ok, ${word(r)} next` }, { role: "assistant", content: "Will do." });
      msgs.push({ role: "user", content: `and ${word(r)}` }, { role: "assistant", content: "Noted." });
    }
    turn++;
  }
  return JSON.parse(JSON.stringify(msgs.slice(0, n)));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function run(n, samples) {
  const first = [];
  const second = [];
  const clone = [];
  let before = 0;
  let after = 0;
  let toolResults = 0;
  let messagesOut = 0;
  for (let s = 0; s < samples + 1; s++) {
    const wire = transcript(n, 1000 * n + s);
    const neutral = fromAnthropic(wire);
    const root = mkdtempSync(join(tmpdir(), "spool-bench-"));
    try {
      const workspace = createWorkspace({ root, sessionId: "bench", env: {} });
      const t0 = performance.now();
      const out = prepareHistory(neutral, { workspace, env: {} });
      const t1 = performance.now();
      let again;
      const reps = 10;
      const t2 = performance.now();
      for (let i = 0; i < reps; i++) again = prepareHistory(out.messages, { workspace, env: {} });
      const t3 = performance.now();
      if (again.messages !== out.messages) throw new Error("second pass changed the history");
      const t4 = performance.now();
      structuredClone(neutral);
      const t5 = performance.now();
      if (s === 0) continue; // warm-up sample
      first.push(t1 - t0);
      second.push((t3 - t2) / reps);
      clone.push(t5 - t4);
      before = out.report.charsBefore;
      after = out.report.charsAfter;
      toolResults = neutral.filter((m) => m.role === "tool").length;
      messagesOut = toAnthropic(out.messages).length;
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return { n, samples, toolResults, messagesOut, first: median(first), second: median(second), clone: median(clone), before, after };
}

/** One corpus session through prepareHistory as `spool compact` runs it, with the recall and fixed-point checks. */
function corpusRow({ name, format, file }) {
  const json = JSON.parse(readFileSync(file, "utf8"));
  const adapter = adapters[format];
  const input = adapter.fromProvider(unwrapConversation(json).items);
  const root = mkdtempSync(join(tmpdir(), "spool-bench-corpus-"));
  try {
    const workspace = createWorkspace({ root, sessionId: "corpus", env: {} });
    const t0 = performance.now();
    const out = prepareHistory(input, { workspace, env: {}, format, assertValid: true });
    const ms = performance.now() - t0;
    const bytes = JSON.stringify(adapter.toProvider(out.messages));
    const again = prepareHistory(adapter.fromProvider(JSON.parse(bytes)), { workspace, env: {}, format });
    const fixedPoint = JSON.stringify(adapter.toProvider(again.messages)) === bytes;
    const kept = new Set(out.messages.filter((m) => m.role === "tool").map(textOf));
    const shown = out.messages.map(textOf).join("\n");
    let cut = 0;
    let recalled = 0;
    for (const m of input) {
      if (m.role !== "tool") continue;
      const original = textOf(m);
      if (original === "" || kept.has(original)) continue;
      cut++;
      const key = archiveKey(original);
      if (shown.includes(`<<ccr:${key}>>`) && workspace.get(key) === original) recalled++;
    }
    const r = out.report;
    return {
      name,
      format,
      results: r.resultsBefore,
      before: r.charsBefore,
      after: r.charsAfter,
      reduction: 1 - r.charsAfter / r.charsBefore,
      cut,
      recalled,
      fixedPoint,
      failedKept: r.microcompact.failedKept,
      ms,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const corpus = buildCorpus({ fresh: process.argv.includes("--fresh-corpus") }).map(corpusRow);
const misses = corpus.filter((c) => (c.results >= 50 && c.reduction < 0.6) || c.recalled !== c.cut || !c.fixedPoint);
if (JSON_OUT) {
  for (const c of corpus)
    console.log(
      JSON.stringify({
        bench: "context-corpus",
        session: c.name,
        format: c.format,
        toolResults: c.results,
        toolResultCharsBefore: c.before,
        toolResultCharsAfter: c.after,
        reduction: +c.reduction.toFixed(4),
        cutTexts: c.cut,
        recalledByteIdentical: c.recalled,
        fixedPoint: c.fixedPoint,
        failedKept: c.failedKept,
        firstPassMs: +c.ms.toFixed(1),
      }),
    );
} else {
  console.log(`bench:context corpus — real command output from this machine (bench/context.corpus.mjs), node ${process.version}`);
  console.log(
    "session                    | format           | results | tool-result chars before → after | reduction | cut texts recalled byte-identical | 2nd pass same bytes | 1st pass ms",
  );
  for (const c of corpus) {
    console.log(
      `${c.name.padEnd(26)} | ${c.format.padEnd(16)} | ${String(c.results).padStart(7)} | ${`${c.before} → ${c.after}`.padStart(32)} | ${`${(c.reduction * 100).toFixed(1)}%`.padStart(9)} | ${`${c.recalled}/${c.cut}`.padStart(33)} | ${String(c.fixedPoint).padStart(19)} | ${c.ms.toFixed(1).padStart(11)}`,
    );
  }
  console.log(
    misses.length === 0
      ? "goal met: ≥ 60% fewer tool-result chars on every session of ≥ 50 results; every cut text recalled byte-identically"
      : `goal NOT met: ${misses.map((m) => m.name).join(", ")}`,
  );
  console.log("");
}

const rows = [run(200, 9), run(2000, 5)];
if (JSON_OUT) {
  for (const r of rows) {
    console.log(
      JSON.stringify({
        bench: "context",
        messages: r.n,
        samples: r.samples,
        toolResults: r.toolResults,
        firstPassMs: +r.first.toFixed(2),
        secondPassMs: +r.second.toFixed(3),
        secondOverFirst: +(r.second / r.first).toFixed(4),
        baselineStructuredCloneMs: +r.clone.toFixed(2),
        toolResultCharsBefore: r.before,
        toolResultCharsAfter: r.after,
        reduction: +(1 - r.after / r.before).toFixed(4),
      }),
    );
  }
} else {
  console.log(`bench:context — node ${process.version}, median of samples, fresh transcript + workspace per sample`);
  console.log("messages | tool results | 1st pass ms | 2nd pass ms | 2nd/1st | structuredClone ms (baseline) | tool-result chars before → after | reduction");
  for (const r of rows) {
    console.log(
      `${String(r.n).padStart(8)} | ${String(r.toolResults).padStart(12)} | ${r.first.toFixed(1).padStart(11)} | ${r.second.toFixed(3).padStart(11)} | ${(r.second / r.first).toFixed(4).padStart(7)} | ${r.clone.toFixed(2).padStart(29)} | ${r.before} → ${r.after} | ${((1 - r.after / r.before) * 100).toFixed(1)}%`,
    );
  }
}
if (misses.length > 0) process.exitCode = 1;
