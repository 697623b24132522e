// Fuzzing every model-controlled argument of the agent tools (what MCP clients and AI SDK models send):
// any JSON for read's and recall's arguments (offsets and columns inside and past a 2 MB line included), and for bash's arguments other than the command text
// (random shell text is not run). Each call must settle in bounded time as a result — an error result
// with a one-line reason when the arguments are bad — and never throw or hang.
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, DEFAULT_RECALL_MAX_CHARS } from "../../dist/context/index.js";
import { bashDetails, openAgentSession, type AgentSession } from "../../dist/harness/index.js";
import { createMemoryStore } from "../../dist/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const RUNS = process.env["SPOOL_LONG"] ? 2000 : 150;
let dir: string;
let session: AgentSession;
let longKey: string;
beforeAll(async () => {
  dir = tempDir("spool-agent-fuzz-");
  session = await openAgentSession({
    label: "fuzz",
    store: createMemoryStore(),
    workspace: createWorkspace({ dir: join(dir, "ws"), keep: true }),
    tools: { cwd: dir },
  });
  const { writeFileSync } = await import("node:fs");
  writeFileSync(join(dir, "a.txt"), "alpha\nbeta\ngamma\n");
  writeFileSync(join(dir, "long.json"), `head\n${'{"k":"é😀"},'.repeat(150_000)}\ntail\n`);
  session.workspace.archive.put("archived line one\narchived line two\n");
  longKey = session.workspace.archive.put(`first\n${'{"k":"v"},'.repeat(150_000)}line\nlast\n`);
});
afterAll(async () => {
  await session.close();
  removeTempDirs();
});

const json = fc.jsonValue({ maxDepth: 2 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const num = fc.oneof(fc.integer({ min: -5, max: 10 }), fc.double(), fc.constantFrom(0, -0, 1e300, Number.MAX_SAFE_INTEGER), json);

async function settles(name: string, args: unknown): Promise<void> {
  await settled(name, args);
}

/** The outcome of a call that settled in bounded time, a one-line reason when it failed. */
async function settled(name: string, args: unknown): Promise<{ readonly text: string; readonly isError: boolean }> {
  const outcome = await Promise.race([
    session.call(name, args),
    // A bound, not a wait: the call must settle before it.
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${name} ${JSON.stringify(args)} did not settle in 10 s`)), 10_000)),
  ]);
  expect(typeof outcome.text).toBe("string");
  if (outcome.isError) {
    expect(outcome.text.trim().length).toBeGreaterThan(0);
    expect(outcome.text).not.toMatch(/\n\s+at .*:\d+:\d+/); // no stack trace
  }
  return outcome;
}

describe("agent tools under model-controlled arguments", () => {
  it("read: any path/offset/column/limit settles with a result or a clear error, a result within the bound", async () => {
    const path = fc.oneof(
      fc.constantFrom("a.txt", join(dir, "a.txt"), "long.json", ".", "/", "/dev/null", "/proc/self/status", "missing.txt", "../../etc/hostname", ""),
      fc.string(),
      json,
    );
    const column = fc.oneof(num, fc.integer({ min: 1, max: 2_500_000 }));
    await fc.assert(
      fc.asyncProperty(fc.record({ path, offset: maybe(num), column: maybe(column), limit: maybe(num) }, { requiredKeys: [] }), async (args) => {
        const outcome = await settled("read", args);
        // The shown text is within the tool's bound (50 KB); the notes after it are short.
        if (!outcome.isError) expect(Buffer.byteLength(outcome.text)).toBeLessThanOrEqual(51_200 + 1024);
      }),
      { numRuns: RUNS },
    );
  });

  it("recall: any key/offset/column/limit/grep settles with a result or a clear error, a result within the answer cap", async () => {
    const key = fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-f]{16}$/), fc.constant("<<ccr:0000000000000000>>"), json, fc.constant(longKey));
    const grep = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("(", "[", "line", "\\", "*", "k", ".*", 'v"}'), json);
    const column = fc.oneof(num, fc.integer({ min: 1, max: 2_000_000 }));
    await fc.assert(
      fc.asyncProperty(
        fc.record({ key, offset: maybe(num), column: maybe(column), limit: maybe(num), grep: maybe(grep) }, { requiredKeys: [] }),
        async (args) => {
          const outcome = await settled("recall", args);
          expect(outcome.text.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("bash: any non-text command or timeout settles with a result or a clear error", async () => {
    const command = fc.oneof(
      fc.constant("true"),
      fc.constant(""),
      fc.constant("   "),
      json.filter((v) => typeof v !== "string"),
    );
    await fc.assert(
      fc.asyncProperty(fc.record({ command, timeout: maybe(num) }, { requiredKeys: [] }), (args) => settles("bash", args)),
      { numRuns: RUNS },
    );
  });

  it("bash: any background/yieldSeconds/pty settles with a result or a clear error", async () => {
    const flag = fc.oneof(fc.boolean(), json);
    await fc.assert(
      fc.asyncProperty(fc.record({ background: maybe(flag), pty: maybe(flag), yieldSeconds: maybe(num) }, { requiredKeys: [] }), (extra) =>
        settles("bash", { command: "true", ...extra }),
      ),
      { numRuns: RUNS },
    );
  });

  it("process tools: any processId/input/waitSeconds settles with a result or a clear error", async () => {
    // A live process that prints every 10 ms, so a valid wait on it ends at once.
    const started = await session.call("bash", { command: "while :; do echo tick; sleep 0.01; done", background: true });
    const live = bashDetails(started.state?.details).processId!;
    expect(live).toMatch(/^proc-/);
    const processId = fc.oneof(fc.constant(live), fc.string({ maxLength: 12 }), json);
    const wait = maybe(num);
    const input = fc.oneof(fc.string({ maxLength: 20 }), json);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("process_output", "process_write", "process_list"), processId, input, wait, (name, id, text, waitSeconds) =>
        settles(name, { processId: id, input: text, waitSeconds }),
      ),
      { numRuns: RUNS },
    );
    const killed = await session.call("process_kill", { processId: live });
    expect(killed.text).toContain(`process ${live} was killed by SIGTERM`);
  });

  it("non-object arguments settle as errors for every tool", async () => {
    for (const name of ["bash", "read", "recall", "process_output", "process_write", "process_kill", "process_list"]) {
      for (const args of [null, undefined, 42, "x", [], true]) await settles(name, args);
    }
  });
});
