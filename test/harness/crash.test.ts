// Crash test with real processes: a child node process runs a real bash call through a harness over a
// JSONL session and is SIGKILLed at a random moment; the parent reopens the session and checks that
// recovery returns exactly the last durable flush. The child reports every batch it is about to commit
// (INTENT) and every commit that resolved (ACK), with the hash of the fold through that batch.
//
// The precise claim: a call's commits are serialised, so at most one batch is in flight when the child
// dies. Recovery must return the fold through batch m where m = lastAck, or m = lastAck + 1 when that
// batch's INTENT was reported (written, not yet acknowledged) — never older than an acknowledged flush,
// never a batch that was not handed to commit, never a torn mix.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkspace } from "../../src/context/index.js";
import { createBashTool, createHarness } from "../../src/harness/index.js";
import { openSessionRepo } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(here, "../../dist/harness/index.js"))) throw new Error("the crash test runs its child from dist/: run `npm run build` first");
const CHILD = join(here, "fixtures", "crash-child.mjs");
const RUNS = process.env["SPOOL_LONG"] ? 100 : 20;
const PARALLEL = 3;

const root = tempDir("spool-crash-");
afterAll(removeTempDirs);

interface Report {
  n: number;
  len: number;
  sha: string;
}
interface ChildRun {
  id: string;
  intents: Report[];
  acks: Report[];
  pgid: number | undefined;
  settled: boolean;
  killedAfterMs: number;
  groupSurvivedParent: boolean;
}

/**
 * Whether any process of the group is still running. A killed process stays a zombie until its new
 * parent (init, here) reaps it, and kill(-pgid, 0) counts zombies — init in this sandbox reaps lazily
 * (seen: > 1 s) — so on Linux read /proc and ignore state Z.
 */
function alive(pgid: number): boolean {
  if (existsSync("/proc/self/stat")) {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      } catch {
        continue; // exited while we looked
      }
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z") return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the group has exited within `ms`. */
function gone(pgid: number, ms: number): Promise<boolean> {
  return until(() => !alive(pgid), "the group to exit", ms).then(
    () => true,
    () => false,
  );
}

/** Start a child, SIGKILL it a random 0–1.9 s after its first acknowledged flush, return what it reported. */
function runChild(id: string): Promise<ChildRun> {
  const run: ChildRun = {
    id,
    intents: [],
    acks: [],
    pgid: undefined,
    settled: false,
    killedAfterMs: Math.floor(Math.random() * 1900),
    groupSurvivedParent: false,
  };
  const child = spawn(process.execPath, [CHILD, root, id, "op1"], { stdio: ["ignore", "pipe", "inherit"] });
  let buf = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const [kind, a, b, c] = buf.slice(0, i).split(" ");
      buf = buf.slice(i + 1);
      if (kind === "PGID") run.pgid = Number(a);
      else if (kind === "SETTLED") run.settled = true;
      else if (kind === "INTENT" || kind === "ACK") {
        (kind === "ACK" ? run.acks : run.intents).push({ n: Number(a), len: Number(b), sha: c! });
        if (kind === "ACK" && timer === undefined) timer = setTimeout(() => child.kill("SIGKILL"), run.killedAfterMs);
      }
    }
  });
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", async () => {
      clearTimeout(guard);
      if (timer) clearTimeout(timer);
      if (run.pgid !== undefined) {
        // The command runs in its own session (setsid), so nothing signals it when the harness dies; this
        // one dies at its next write (EPIPE). Count groups still running 300 ms later, then kill the
        // group as a supervisor would, and check below that it is really gone.
        run.groupSurvivedParent = !(await gone(run.pgid, 300));
        if (run.groupSurvivedParent) {
          try {
            process.kill(-run.pgid, "SIGKILL");
          } catch {}
        }
      }
      resolve(run);
    });
  });
}

const sha = (v: unknown) => createHash("sha256").update(JSON.stringify(v)).digest("hex");

async function check(run: ChildRun) {
  const repo = openSessionRepo(root, { backend: "jsonl" });
  const dir = join(root, run.id);
  const file = join(dir, "session.jsonl");
  const store = await repo.open(run.id);
  const workspace = createWorkspace({ dir, keep: true });
  const harness = createHarness({ store, workspace, tools: [createBashTool()] });
  const recovered = harness.recover();
  let recoveredInFlight = false;
  const lastAck = run.acks.at(-1)!;
  if (run.settled) {
    // Finished before the kill landed: nothing to recover, one result in the transcript.
    expect(recovered).toEqual([]);
  } else {
    expect(recovered.map((o) => o.operationId)).toEqual(["op1"]);
    const output = recovered[0]!.calls[0]!.output;
    expect(output).toBeDefined();
    const hash = sha(output);
    const candidates = [lastAck, ...run.intents.filter((i) => i.n === lastAck.n + 1)];
    const match = candidates.find((c) => c.sha === hash);
    recoveredInFlight = match !== undefined && match.n > lastAck.n;
    expect(match, `recovered ${output!.content[0].text.length} chars; last ack ${lastAck.n}, intents up to ${run.intents.at(-1)?.n}`).toBeDefined();
    expect(output!.content[0].text.length).toBe(match!.len);
    // The child rebases every 4 flushes, so recovery never replays more than that.
    expect(recovered[0]!.calls[0]!.replayed).toBeLessThanOrEqual(4);
    // Settling afterwards: bash is not replay-safe, so it settles as interrupted with that output.
    const [result] = await harness.resume("op1");
    expect(result!.isError).toBe(true);
    expect((result!.content[0] as { text: string }).text.startsWith(output!.content[0].text)).toBe(true);
    expect(harness.recover()).toEqual([]);
  }
  expect(harness.transcript()).toHaveLength(1);
  const sidecars = existsSync(`${file}.scopes`) ? readdirSync(`${file}.scopes`) : [];
  expect(sidecars).toEqual([]);
  await store.close();
  // Durable, not just in memory: a fresh open agrees.
  const again = await repo.open(run.id);
  const h2 = createHarness({ store: again, workspace, tools: [createBashTool()] });
  expect(h2.recover()).toEqual([]);
  expect(h2.transcript()).toHaveLength(1);
  await again.close();
  return { settled: run.settled, inFlight: !run.settled && recoveredInFlight };
}

describe("crash recovery with real processes", () => {
  it(`SIGKILL at ${RUNS} random moments mid-run: recover() returns the last acknowledged flush (or the one in flight), resume settles and retires the scope, no process group survives`, async () => {
    const runs: ChildRun[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < RUNS) {
          const id = `crash${next++}`;
          runs.push(await runChild(id));
        }
      }),
    );
    expect(runs).toHaveLength(RUNS);
    const outcomes = [];
    for (const run of runs) {
      expect(run.acks.length, `${run.id} never acknowledged a flush`).toBeGreaterThan(0);
      expect(run.pgid, `${run.id} never reported its bash process group`).toBeDefined();
      outcomes.push(await check(run));
      expect(await gone(run.pgid!, 2000), `bash process group ${run.pgid} of ${run.id} is still alive`).toBe(true);
      const pidFile = join(root, run.id, "bash.pid");
      expect(readFileSync(pidFile, "utf8").trim()).toBe(String(run.pgid));
    }
    // Most kills must land mid-run, or the test is not testing recovery.
    expect(outcomes.filter((o) => !o.settled).length).toBeGreaterThanOrEqual(Math.ceil(RUNS * 0.6));
    const survived = runs.filter((r) => r.groupSurvivedParent).length;
    console.log(
      `crash runs: ${RUNS}, killed mid-run: ${outcomes.filter((o) => !o.settled).length}, recovered the unacknowledged in-flight batch: ${outcomes.filter((o) => o.inFlight).length}, bash groups alive 300 ms after their parent died: ${survived}`,
    );
  }, 180_000);
});
