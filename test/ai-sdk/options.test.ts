// createSpool's options: each one takes effect, and a bad one is refused when the spool is created,
// with an error naming the option in the units the developer passed — not later, on every model call,
// as tool text only the model reads.
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ModelMessage } from "ai";
import { afterAll, afterEach, expect, it, vi } from "vitest";
import { createSpool, type CreateSpoolOptions, type Spool, type SpoolToolOutput } from "../../dist/ai-sdk/index.js";
import { SpoolError } from "../../dist/errors/index.js";
import { DiskArchive } from "../../dist/context/index.js";
import { SESSION_RECORD } from "../../dist/harness/index.js";
import { readJsonlSnapshot } from "../../dist/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

/** `n` turns of one bash call each, every result `chars` long and different. */
function history(n: number, chars: number): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: "user", content: "go" }];
  for (let i = 0; i < n; i++) {
    const value = `result ${i}\n`.repeat(Math.ceil(chars / 10)).slice(0, chars);
    messages.push(
      { role: "assistant", content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: "bash", input: { command: "x" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: `c${i}`, toolName: "bash", output: { type: "text", value } }] },
    );
  }
  return messages;
}

it("context.archiveMaxBytes and archiveTtlMs bound the session's archive", async () => {
  const spool = await createSpool({ root: join(tempDir("spool-ai-sdk-opt-"), ".spool"), context: { archiveMaxBytes: 60_000, archiveTtlMs: 3_600_000 } });
  cleanups.push(() => spool.close());
  expect(spool.session.workspace.archive).toMatchObject({ maxBytes: 60_000, ttlMs: 3_600_000 });
  // 20 old results of 10 KB each are archived as they are compacted: 200 KB for a 60 KB archive. The
  // pass keeps all of them (the prompt it returns names every key)...
  spool.prepareStep({ messages: history(20, 10_000) });
  const dir = join(spool.sessionDir, "archive");
  const bytes = (): number => readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
  expect(bytes()).toBeGreaterThan(60_000);
  // ...and once they are no longer in use (half an hour on, within the TTL), the archive's cap applies.
  const earlier = new Date(Date.now() - 30 * 60_000);
  for (const f of readdirSync(dir)) utimesSync(join(dir, f), earlier, earlier);
  new DiskArchive({ dir, maxBytes: 60_000, ttlMs: 3_600_000 });
  expect(bytes()).toBeGreaterThan(0);
  expect(bytes()).toBeLessThanOrEqual(60_000);
});

/** Runs one AI SDK tool as the SDK's loop does (execute is an async iterable) and returns the final output. */
async function runTool(spool: Spool, name: string, input: Record<string, unknown>): Promise<SpoolToolOutput> {
  let last: SpoolToolOutput | undefined;
  const out = spool.tools[name]!.execute!(input as never, { toolCallId: `t-${name}`, messages: [], context: {} } as never) as AsyncIterable<SpoolToolOutput>;
  for await (const o of out) last = o;
  return last!;
}

const aFile = (): string => {
  const path = join(tempDir("spool-ai-sdk-opt-"), "file");
  writeFileSync(path, "x");
  return path;
};

it.each<[string, () => CreateSpoolOptions, string, RegExp]>([
  ["a negative timeout", () => ({ timeout: -1 }), "SPOOL_AI_SDK_OPTION", /^createSpool: timeout must be a number of seconds above 0 .*, got -1\b/],
  ["a zero timeout", () => ({ timeout: 0 }), "SPOOL_AI_SDK_OPTION", /timeout .* got 0\b/],
  ["a NaN timeout", () => ({ timeout: Number.NaN }), "SPOOL_AI_SDK_OPTION", /timeout .* got NaN/],
  ["limits.maxBytes 0", () => ({ limits: { maxBytes: 0 } }), "SPOOL_AI_SDK_OPTION", /^createSpool: limits\.maxBytes must be a whole number .*, got 0\b/],
  ["limits.maxLines -3", () => ({ limits: { maxLines: -3 } }), "SPOOL_AI_SDK_OPTION", /limits\.maxLines .* got -3\b/],
  ["limits.retain middle", () => ({ limits: { retain: "middle" as "head" } }), "SPOOL_AI_SDK_OPTION", /limits\.retain must be "head" or "tail", got "middle"/],
  ["limits.maxSpillBytes 0", () => ({ limits: { maxSpillBytes: 0 } }), "SPOOL_AI_SDK_OPTION", /limits\.maxSpillBytes must be a whole number .*, got 0\b/],
  [
    "limits.minFreeBytes -1",
    () => ({ limits: { minFreeBytes: -1 } }),
    "SPOOL_AI_SDK_OPTION",
    /limits\.minFreeBytes must be a whole number of 0 or more, got -1\b/,
  ],
  [
    "limits.maxBytes above the window's cap",
    () => ({ limits: { maxBytes: 1e15 } }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: limits\.maxBytes must be a whole number from 1 to 67,108,864, got 1000000000000000\.$/,
  ],
  [
    "limits.maxLines above the window's cap",
    () => ({ limits: { maxLines: 1_000_001 } }),
    "SPOOL_AI_SDK_OPTION",
    /limits\.maxLines .* from 1 to 1,000,000, got 1000001\b/,
  ],
  [
    "a root that is a file",
    () => ({ root: aFile() }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: root cannot hold sessions: ".*\/file" is not a directory; pass a directory\.$/,
  ],
  [
    "a root under a file",
    () => ({ root: join(aFile(), ".spool") }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: root cannot hold sessions: ".*\/file\/\.spool" is under ".*\/file", which is not a directory; pass a directory\.$/,
  ],
  ["a root that is a number", () => ({ root: 5 as unknown as string }), "SPOOL_AI_SDK_OPTION", /^createSpool: root must be a directory path, got 5\.$/],
  [
    "an unknown backend",
    () => ({ backend: "mysql" as "jsonl" }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: backend must be "jsonl", "sqlite", "postgres", got "mysql"\.$/,
  ],
  [
    "env as a string",
    () => ({ env: "FOO=1" as unknown as Record<string, string> }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: env must be an object .*, got "FOO=1"\.$/,
  ],
  [
    "an env name with =",
    () => ({ env: { "A=B": "x" } }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: env has the variable name "A=B"; a name is not empty and holds no "=" or NUL\.$/,
  ],
  ["an env value with a NUL byte", () => ({ env: { X: "a\0b" } }), "SPOOL_AI_SDK_OPTION", /^createSpool: env\.X holds a NUL byte/],
  ["an env value that is an object", () => ({ env: { X: {} as string } }), "SPOOL_AI_SDK_OPTION", /^createSpool: env\.X must be a string .*, got \{\}\.$/],
  ["an empty label", () => ({ label: "" }), "SPOOL_AI_SDK_OPTION", /^createSpool: label must be a non-empty string .*, got ""\.$/],
  [
    "an onPrepare that is not a function",
    () => ({ onPrepare: true as never }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: onPrepare must be a function, got true\.$/,
  ],
  [
    "a misspelt option",
    () => ({ rooot: "/tmp/elsewhere" }) as CreateSpoolOptions,
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: rooot is not an option; the options are root, backend, url, session, cwd, /,
  ],
  [
    "a url without backend postgres",
    () => ({ url: "postgres://u:secret@127.0.0.1:1/db" }),
    "SPOOL_AI_SDK_OPTION",
    /^createSpool: url is the database URL of backend "postgres"; add backend: "postgres", or leave url out\.$/,
  ],
  ["a missing cwd", () => ({ cwd: "/nonexistent/dir" }), "SPOOL_AI_SDK_OPTION", /^createSpool: cwd "\/nonexistent\/dir" does not exist/],
  ["a cwd that is a file", () => ({ cwd: aFile() }), "SPOOL_AI_SDK_OPTION", /cwd .* is not a directory/],
  [
    "context.maxResultChars 0",
    () => ({ context: { maxResultChars: 0 } }),
    "SPOOL_CONTEXT_CONFIG",
    /^context\.maxResultChars: expected a whole number .*, got 0\b/,
  ],
  [
    "context.turnBudgetChars below a recall answer's smallest part",
    () => ({ context: { turnBudgetChars: 8000 } }),
    "SPOOL_CONTEXT_CONFIG",
    /^context\.turnBudgetChars: is 8000, below 16384: a recall answer .* must fit in one turn, so set it ≥ 16384\.$/,
  ],
  ["context.maxResultChars -5", () => ({ context: { maxResultChars: -5 } }), "SPOOL_CONTEXT_CONFIG", /context\.maxResultChars: .* got -5\b/],
  ["context.maxResultChars NaN", () => ({ context: { maxResultChars: Number.NaN } }), "SPOOL_CONTEXT_CONFIG", /context\.maxResultChars: .* got NaN/],
  [
    'context.maxResultChars "100"',
    () => ({ context: { maxResultChars: "100" as unknown as number } }),
    "SPOOL_CONTEXT_CONFIG",
    /context\.maxResultChars: .* got "100"/,
  ],
  [
    "context.archiveTtlMs -1",
    () => ({ context: { archiveTtlMs: -1 } }),
    "SPOOL_CONTEXT_CONFIG",
    /context\.archiveTtlMs: .*0 = entries never expire.* got -1\b/,
  ],
  [
    "context.summarizeTurns below truncateTurns",
    () => ({ context: { truncateTurns: 5, summarizeTurns: 2 } }),
    "SPOOL_CONTEXT_CONFIG",
    /^context\.summarizeTurns: is 2, below context\.truncateTurns \(5\)/,
  ],
  [
    "context.truncateTurns above the default summarizeTurns",
    () => ({ context: { truncateTurns: 5 } }),
    "SPOOL_CONTEXT_CONFIG",
    /^context\.truncateTurns: is 5, above the default summarizeTurns \(4\); .* set it ≤ 4, or set context\.summarizeTurns ≥ 5 too\.$/,
  ],
  [
    "an unknown context option",
    () => ({ context: { maxResultChar: 5 } as never }),
    "SPOOL_CONTEXT_CONFIG",
    /^context\.maxResultChar: is not a context option; the options are maxResultChars, /,
  ],
])("%s is refused by createSpool, before any session is created", async (_name, options, code, message) => {
  const root = join(tempDir("spool-ai-sdk-opt-"), ".spool");
  const err = await createSpool({ root, ...options() }).then(
    (spool) => spool.close().then(() => undefined),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SpoolError);
  expect(err).toMatchObject({ code, message: expect.stringMatching(message) });
  expect(existsSync(root)).toBe(false);
});

it("backend postgres connects to the url given, not the PG* environment's server", async () => {
  vi.stubEnv("PGHOST", "127.0.0.2");
  vi.stubEnv("PGDATABASE", "from_env");
  try {
    // Nothing listens on port 1: the refusal names the server and database of the url.
    await expect(
      createSpool({ root: join(tempDir("spool-ai-sdk-opt-"), ".spool"), backend: "postgres", url: "postgres://u:secret@127.0.0.1:1/from_url" }),
    ).rejects.toMatchObject({
      code: "SPOOL_STORE_DB_UNREACHABLE",
      message: expect.stringMatching(/^PostgreSQL at 127\.0\.0\.1:1, database "from_url": cannot connect/),
    });
  } finally {
    vi.unstubAllEnvs();
  }
});

it("null options are refused in one line", async () => {
  await expect(createSpool(null as unknown as CreateSpoolOptions)).rejects.toMatchObject({
    code: "SPOOL_AI_SDK_OPTION",
    message: "createSpool: options must be an object (or left out), got null.",
  });
});

it("an empty root is refused, and nothing is written to the current directory", async () => {
  // "" resolved to the current directory: the session went to ./sessions/ beside the caller's files.
  const dir = tempDir("spool-ai-sdk-opt-");
  const before = process.cwd();
  process.chdir(dir);
  try {
    await expect(createSpool({ root: "" })).rejects.toMatchObject({
      code: "SPOOL_AI_SDK_OPTION",
      message: "createSpool: root is empty; pass a directory, or leave root out for its default (.spool).",
    });
  } finally {
    process.chdir(before);
  }
  expect(readdirSync(dir)).toEqual([]);
});

it("a relative cwd is the directory it named when createSpool was called, for every call and in the session record", async () => {
  const dir = tempDir("spool-ai-sdk-opt-");
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "sub", "x.txt"), "hello\n");
  const before = process.cwd();
  process.chdir(dir);
  let spool: Spool;
  try {
    spool = await createSpool({ root: join(dir, ".spool"), cwd: "sub" });
  } finally {
    process.chdir(before);
  }
  cleanups.push(() => spool.close());
  // The process has moved on (as a server's other work may move it): commands and reads stay in sub/.
  expect((await runTool(spool, "bash", { command: "pwd" })).text).toBe(`${join(dir, "sub")}\n`);
  expect((await runTool(spool, "read", { path: "x.txt" })).text).toMatch(/^hello\n/);
  await spool.close();
  expect(readJsonlSnapshot(join(spool.sessionDir, "session.jsonl")).get(SESSION_RECORD)).toMatchObject({ cwd: join(dir, "sub") });
});

it("limits.maxSpillBytes stops a runaway command: the bash tool's result says why and where its output is", async () => {
  const spool = await createSpool({ root: join(tempDir("spool-ai-sdk-opt-"), ".spool"), limits: { maxSpillBytes: 2_000_000 } });
  cleanups.push(() => spool.close());
  // execute yields the growing view while the command runs; the last yield is the result
  const execute = spool.tools.bash!.execute as (input: unknown, options: { toolCallId: string; messages: ModelMessage[] }) => AsyncIterable<unknown>;
  let last: unknown;
  for await (const output of execute({ command: "yes 'runaway output'" }, { toolCallId: "t1", messages: [] })) last = output;
  const result = JSON.stringify(last);
  expect(result).toMatch(/the command printed more than 2,000,000 bytes, the most its spill may keep \(spill\.maxBytes, --max-spill\)/);
});

it("an explicit context option wins over a bad environment variable for the same setting", async () => {
  vi.stubEnv("SPOOL_TOOL_RESULT_MAX_CHARS", "lots");
  try {
    const root = join(tempDir("spool-ai-sdk-opt-"), ".spool");
    await expect(createSpool({ root })).rejects.toMatchObject({
      code: "SPOOL_CONTEXT_CONFIG",
      message: expect.stringMatching(/^SPOOL_TOOL_RESULT_MAX_CHARS: /),
    });
    const spool = await createSpool({ root, context: { maxResultChars: 5_000 } });
    cleanups.push(() => spool.close());
    const messages = history(1, 8_000);
    const prepared = spool.prepareStep({ messages }).messages;
    const tool = prepared[2] as { content: { output: { value: string } }[] };
    expect(tool.content[0]!.output.value).toMatch(/^\[Partial tool result/);
  } finally {
    vi.unstubAllEnvs();
  }
});
