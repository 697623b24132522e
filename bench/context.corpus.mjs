// The corpus for bench:context: agent sessions whose every tool result is the real output of a real
// command run on this machine over a real source tree (this repository): TypeScript builds (one
// clean, one with type errors), test runs (passing and failing), `git log -p` / `git show`, file
// reads, greps and finds, listings. Each command runs once (stdout and stderr interleaved, exit
// status kept); sessions are then composed from those outputs with a seeded PRNG, in the shapes real
// agents write:
//   - mini-swe-agent (OpenAI Chat, bash only): `<returncode>N</returncode>\n<output>…</output>`;
//   - Codex (OpenAI Responses, `shell` only): JSON `{"output":…,"metadata":{"exit_code":N,…}}`;
//   - Claude Code (Anthropic): Read (`cat -n` arrows), Grep, Glob, Bash, Edit/Write acknowledgements,
//     parallel calls whose results arrive in the order they finished;
//   - an AI SDK agent (ModelMessage): read + bash;
//   - a short session (< 50 results), reported but not held to the savings goal.
// Nothing is committed but this script: CI (or anyone) regenerates the corpus by running it.
// Usage: node bench/context.corpus.mjs [--out DIR] [--fresh]   (default DIR: bench/.corpus)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** xorshift32: the seeded PRNG both bench files use. */
export function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** Runs `command` in bash at the repository root; output as a terminal would show it (2>&1), capped at 8 MB. */
function sh(command, cwd = root) {
  const r = spawnSync("/bin/bash", ["-c", `${command} 2>&1`], {
    cwd,
    encoding: "utf8",
    maxBuffer: 8 << 20,
    timeout: 180_000,
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", CI: "1", GIT_PAGER: "cat", PAGER: "cat" },
  });
  return { command, output: r.stdout ?? "", exit: r.status ?? 1 };
}

function listFiles(dir, ext) {
  const out = [];
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith(ext)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** A throwaway TypeScript project with real type errors, compiled by the repository's tsc. */
function failingBuild() {
  const dir = mkdtempSync(join(tmpdir(), "spool-corpus-tsc-"));
  try {
    const files = listFiles(join(root, "src", "context"), ".ts").slice(0, 6);
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      // break a few things the way an edit in progress does
      writeFileSync(
        join(dir, relative(join(root, "src", "context"), f).replace(/\//g, "_")),
        text.replace(/: string\b/, ": number").replace(/return /, "return undefined as unknown as never; return "),
      );
    }
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: "nodenext", target: "es2022", types: [] }, include: ["*.ts"] }),
    );
    return { ...sh(`${join(root, "node_modules", ".bin", "tsc")} -p tsconfig.json --pretty false`, dir), command: "npx tsc -p tsconfig.json" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A real vitest run of a test that fails (an off-by-one in an assertion), in a throwaway directory inside the repo. */
function failingTests() {
  const dir = join(root, "test-artifacts", `corpus-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    // the real test file plus one wrong expectation, as a work-in-progress change leaves it
    const source =
      readFileSync(join(root, "test", "context", "stubs.test.ts"), "utf8") +
      `\nimport { countLines as countLinesUnderTest } from "../../src/context/index.js";\n` +
      `describe("countLines", () => {\n  it("counts the empty line after a final newline", () => {\n    expect(countLinesUnderTest("a\\nb\\n")).toBe(3);\n  });\n});\n`;
    writeFileSync(join(dir, "stubs-broken.test.ts"), source);
    writeFileSync(
      join(dir, "vitest.config.mjs"),
      `export default { test: { root: ${JSON.stringify(root)}, include: [${JSON.stringify(`${relative(root, dir)}/*.test.ts`)}] } };\n`,
    );
    return {
      ...sh(`npx vitest run --config ${relative(root, dir)}/vitest.config.mjs --reporter=verbose`),
      command: "npx vitest run test/context/stubs.test.ts",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The command catalog: every output is produced by actually running it. */
function runCatalog() {
  const sources = listFiles(join(root, "src"), ".ts").map((p) => relative(root, p));
  const tests = listFiles(join(root, "test"), ".ts").map((p) => relative(root, p));
  const catalog = [];
  const add = (r, kind) => catalog.push({ ...r, kind });
  process.stderr.write("corpus: running commands");
  const step = () => process.stderr.write(".");
  add(sh("npx tsc -p tsconfig.json --noEmit --extendedDiagnostics"), "build"), step();
  add(failingBuild(), "build"), step();
  add(sh("npx tsc -p tsconfig.build.json --listEmittedFiles --outDir test-artifacts/corpus-build && rm -rf test-artifacts/corpus-build"), "build"), step();
  add(sh("npx vitest run test/delta/codec.test.ts test/context/content-kind.test.ts test/context/stubs.test.ts --reporter=verbose"), "test"), step();
  add(sh("npx vitest run test/context/pairing.test.ts --reporter=verbose"), "test"), step();
  add(failingTests(), "test"), step();
  for (const n of [3, 8, 20]) add(sh(`git log -p -n ${n} --no-color -- src/context`), "git"), step();
  add(sh("git log --stat -n 40 --no-color"), "git"), step();
  add(sh("git log --oneline -n 200 --no-color"), "git"), step();
  for (const ref of ["HEAD~1", "HEAD~4", "HEAD~9"]) add(sh(`git show --no-color ${ref}`), "git"), step();
  add(sh("git show --no-color no-such-ref"), "git"), step();
  add(sh("git diff --no-color HEAD~6 -- src"), "git"), step();
  add(sh("git blame -w src/context/pairing.ts"), "git"), step();
  for (const pattern of ["export function", "import type", "throw new", "TODO", "readonly", "SpoolError", "no-such-symbol-xyz"])
    add(sh(`grep -rn "${pattern}" src test`), "search"), step();
  add(sh('grep -n "function" node_modules/fast-check/lib/fast-check.js | head -400'), "search"), step();
  add(sh("find src test bench -type f | sort"), "search"), step();
  add(sh("find node_modules/typescript/lib -name '*.d.ts' | sort"), "search"), step();
  add(sh("ls -laR src"), "list"), step();
  add(sh("wc -l src/*/*.ts test/*/*.ts | sort -n"), "list"), step();
  add(sh("cat package.json"), "read"), step();
  add(sh("cat no/such/file.ts"), "read"), step();
  for (const f of sources.filter((_, i) => i % 2 === 0)) add(sh(`cat ${f}`), "read");
  for (const f of tests.filter((_, i) => i % 3 === 0)) add(sh(`cat ${f}`), "read");
  for (const f of sources.filter((_, i) => i % 5 === 1)) add(sh(`sed -n '1,80p' ${f}`), "read");
  // the small, targeted commands bash-only agents run most (on real mini-swe-agent sessions the median
  // output is under 1 KB): a range of lines, a grep in one file, a head, a listing, a status, a one-liner
  sources.forEach((f, i) => {
    if (i % 3 !== 0) return;
    const start = 1 + ((i * 37) % 60);
    add(sh(`nl -ba ${f} | sed -n '${start},${start + 25 + (i % 30)}p'`), "small");
    add(sh(`grep -n "${["const", "return", "export", "if (", "throw"][i % 5]}" ${f}`), "small");
    if (i % 2 === 0) add(sh(`head -20 ${f}`), "small");
    if (i % 4 === 0) add(sh(`git log --oneline -5 -- ${f}`), "small");
  });
  for (const d of ["src/context", "src/cli", "test/context", "bench"]) add(sh(`ls -la ${d}`), "small");
  add(sh("git status --short"), "small");
  add(sh("wc -l src/context/*.ts"), "small");
  add(sh(`node -e "import('./dist/context/index.js').then(m => console.log(m.countLines('a\\nb\\n'), m.archiveKey('x')))"`), "small");
  add(sh(`node -e "import('./dist/context/index.js').then(m => m.recall('<<ccr:0123456789abcdef>>', { get: () => undefined }))"`), "small");
  add(sh(`python3 -c "import json,sys; print(json.load(open('package.json'))['scripts']['test'])"`), "small");
  add(sh("node -e \"require('./no-such-module')\""), "run"), step();
  add(sh("npm ls --depth=0"), "run"), step();
  add(sh("node --version && npm --version && git --version"), "run"), step();
  process.stderr.write(` ${catalog.length} outputs\n`);
  return { sources, catalog };
}

/** Claude Code's Read tool output: `cat -n` numbering with an arrow. */
function claudeRead(path) {
  const text = readFileSync(join(root, path), "utf8");
  return text
    .split("\n")
    .map((line, i) => `${String(i + 1).padStart(6)}→${line}`)
    .join("\n");
}

function pick(r, list) {
  return list[Math.floor(r() * list.length)];
}

function miniSweAgent(catalog, n, seed) {
  const r = rng(seed);
  const wire = [
    { role: "system", content: "You are a helpful assistant that can interact multiple times with a computer shell to solve programming tasks." },
    { role: "user", content: "<pr_description>\nCompaction loses the order of parallel results. Fix it and add a test.\n</pr_description>" },
  ];
  const small = catalog.filter((c) => c.kind === "small");
  for (let i = 0; i < n; i++) {
    // most steps look at a few lines; every third or so reads a file, builds, tests or searches
    const c = pick(r, r() < 0.6 ? small : catalog);
    wire.push({
      role: "assistant",
      content: `THOUGHT: next I will run \`${c.command}\`.\n\n\`\`\`bash\n${c.command}\n\`\`\``,
      tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: c.command }) } }],
    });
    const out =
      c.output.length > 10_000
        ? `${c.output.slice(0, 5_000)}\n<elided_chars>\n${c.output.length - 10_000} characters elided\n</elided_chars>\n${c.output.slice(-5_000)}`
        : c.output;
    wire.push({ role: "tool", tool_call_id: `call_${i}`, content: `<returncode>${c.exit}</returncode>\n<output>\n${out}</output>` });
  }
  wire.push({ role: "assistant", content: "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" });
  return wire;
}

function codex(catalog, n, seed) {
  const r = rng(seed);
  const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: "Find why the context bench regressed and fix it." }] }];
  for (let i = 0; i < n; i++) {
    const c = pick(r, catalog);
    if (r() < 0.3) input.push({ type: "reasoning", summary: [{ type: "summary_text", text: `**Checking ${c.kind}**` }], encrypted_content: null });
    input.push({
      type: "function_call",
      name: "shell",
      arguments: JSON.stringify({ command: ["bash", "-lc", c.command], workdir: "/work/repo" }),
      call_id: `call_${seed}_${i}`,
    });
    input.push({
      type: "function_call_output",
      call_id: `call_${seed}_${i}`,
      output: JSON.stringify({ output: c.output, metadata: { exit_code: c.exit, duration_seconds: Math.round(r() * 300) / 100 } }),
    });
  }
  input.push({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Done: the regression is fixed." }] });
  return { model: "gpt-5-codex", input };
}

function claudeCode(catalog, sources, n, seed) {
  const r = rng(seed);
  const messages = [{ role: "user", content: "Implement byte-stable compaction and run the tests." }];
  let made = 0;
  let id = 0;
  while (made < n) {
    const batch = Math.min(n - made, r() < 0.3 ? 2 + Math.floor(r() * 2) : 1);
    const calls = [];
    for (let k = 0; k < batch; k++) {
      const t = r();
      const useId = `toolu_${seed}_${id++}`;
      if (t < 0.35) {
        const path = pick(r, sources);
        calls.push({ use: { type: "tool_use", id: useId, name: "Read", input: { file_path: `/repo/${path}` } }, content: claudeRead(path), error: false });
      } else if (t < 0.5) {
        const c = pick(
          r,
          catalog.filter((x) => x.kind === "search"),
        );
        calls.push({ use: { type: "tool_use", id: useId, name: "Grep", input: { pattern: c.command } }, content: c.output, error: false });
      } else if (t < 0.6) {
        const path = pick(r, sources);
        const lines = readFileSync(join(root, path), "utf8").split("\n").slice(0, 12);
        const ack = `The file /repo/${path} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${lines.map((l, i) => `${String(i + 1).padStart(6)}→${l}`).join("\n")}`;
        calls.push({
          use: { type: "tool_use", id: useId, name: "Edit", input: { file_path: `/repo/${path}`, old_string: "a", new_string: "b" } },
          content: ack,
          error: false,
        });
      } else {
        const c = pick(
          r,
          catalog.filter((x) => x.kind !== "read"),
        );
        const failed = c.exit !== 0;
        calls.push({
          use: { caller: { type: "direct" }, type: "tool_use", id: useId, name: "Bash", input: { command: c.command, description: `Run ${c.kind}` } },
          content: failed ? `Exit code ${c.exit}\n${c.output}` : c.output,
          error: failed,
        });
      }
    }
    messages.push({ role: "assistant", content: [{ type: "text", text: `Step ${made}: checking.` }, ...calls.map((c) => c.use)] });
    // parallel results arrive in the order the calls finish
    const order = calls.map((_, k) => k).sort(() => r() - 0.5);
    messages.push({
      role: "user",
      content: order.map((k) => ({
        tool_use_id: calls[k].use.id,
        type: "tool_result",
        content: calls[k].content,
        ...(calls[k].error ? { is_error: true } : {}),
      })),
    });
    made += batch;
  }
  messages.push({ role: "assistant", content: [{ type: "text", text: "All done." }] });
  return { model: "claude-sonnet", max_tokens: 32000, messages };
}

function aiSdk(catalog, n, seed) {
  const r = rng(seed);
  const messages = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: [{ type: "text", text: "Review the context layer." }] },
  ];
  for (let i = 0; i < n; i++) {
    const c = pick(r, catalog);
    const toolName = c.kind === "read" ? "read" : "bash";
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Running ${toolName}.` },
        { type: "tool-call", toolCallId: `tc_${i}`, toolName, input: { command: c.command } },
      ],
    });
    messages.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `tc_${i}`,
          toolName,
          output: c.exit === 0 ? { type: "text", value: c.output } : { type: "error-text", value: c.output },
        },
      ],
    });
  }
  messages.push({ role: "assistant", content: [{ type: "text", text: "Reviewed." }] });
  return messages;
}

/** Builds (or reuses) the corpus; returns [{ name, format, file }]. */
export function buildCorpus({ out = join(root, "bench", ".corpus"), fresh = false } = {}) {
  const index = join(out, "index.json");
  if (!fresh && existsSync(index)) return JSON.parse(readFileSync(index, "utf8"));
  const { sources, catalog } = runCatalog();
  mkdirSync(out, { recursive: true });
  const sessions = [
    { name: "mini-swe-agent (bash only)", format: "openai-chat", body: miniSweAgent(catalog, 70, 11) },
    { name: "codex (shell only)", format: "openai-responses", body: codex(catalog, 55, 12) },
    { name: "claude-code", format: "anthropic", body: claudeCode(catalog, sources, 90, 13) },
    { name: "ai-sdk agent", format: "ai-sdk", body: aiSdk(catalog, 50, 14) },
    { name: "short session", format: "openai-chat", body: miniSweAgent(catalog, 18, 15) },
  ];
  const list = sessions.map((s, i) => {
    const file = join(out, `session-${i}.${s.format}.json`);
    writeFileSync(file, JSON.stringify(s.body));
    return { name: s.name, format: s.format, file };
  });
  writeFileSync(join(out, "catalog.json"), JSON.stringify(catalog.map((c) => ({ command: c.command, kind: c.kind, exit: c.exit, chars: c.output.length }))));
  writeFileSync(index, JSON.stringify(list, null, 2));
  return list;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--out");
  const list = buildCorpus({ ...(at >= 0 ? { out: args[at + 1] } : {}), fresh: args.includes("--fresh") });
  for (const s of list) process.stdout.write(`${s.file}\t${s.format}\t${s.name}\n`);
}
