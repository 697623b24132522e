// A writer SIGKILLed mid-call, then a new writer on its session — here the agent session over a store
// passed in (createSpool's `store`), as after a restart. The dead call must get its result before
// anything else runs: interrupted, with the output of its last durable flush (the last base and the
// batches after it), in one transaction with retiring its scope, so the transcript stays paired and
// the sidecar goes. Real processes: crash-child.mjs runs a real bash call and is killed.
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkspace } from "../../src/context/index.js";
import { OPEN_OPERATIONS, openAgentSession, outputList, readDurableOutput } from "../../src/harness/index.js";
import { openSessionRepo } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(here, "../../dist/harness/index.js"))) throw new Error("the crash test runs its child from dist/: run `npm run build` first");
const CHILD = join(here, "fixtures", "crash-child.mjs");
afterAll(removeTempDirs);

/** Runs the crash child's bash call and SIGKILLs it `afterMs` after its first acknowledged flush; true when it settled first. */
function killMidCall(root: string, id: string, backend: "jsonl" | "sqlite", afterMs: number): Promise<boolean> {
  const child = spawn(process.execPath, [CHILD, root, id, "op1", backend], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    out += chunk;
    if (timer === undefined && out.includes("ACK ")) timer = setTimeout(() => child.kill("SIGKILL"), afterMs);
  });
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(guard);
      resolve(out.includes("SETTLED"));
    });
  });
}

describe("a new writer settles the call its SIGKILLed predecessor left open", () => {
  it.each(["jsonl", "sqlite"] as const)(
    "%s: the agent session opens with the dead call settled as interrupted, holding its recovered output; its scope is retired with it",
    async (backend) => {
      const root = tempDir("spool-left-open-");
      expect(await killMidCall(root, "s", backend, 300), "the run settled before the kill: nothing to test").toBe(false);
      const repo = openSessionRepo(root, { backend });
      const dir = join(root, "s");

      // What the dead writer saved: read the way recovery reads it, before anyone settles it.
      const before = await repo.open("s");
      const saved = readDurableOutput(before, "op1", "call_crash").output!.content[0].text;
      expect(saved.length).toBeGreaterThan(0);
      expect(Object.keys(before.get(OPEN_OPERATIONS) ?? {})).toEqual(["op1"]);
      await before.close();

      const store = await repo.open("s");
      const session = await openAgentSession({ store, workspace: createWorkspace({ dir, keep: true }), label: "test" });
      const [dead, ...rest] = session.harness.transcript();
      expect(rest).toEqual([]);
      expect(dead).toMatchObject({ toolCallId: "call_crash", toolName: "bash", isError: true });
      const text = (dead!.content[0] as { text: string }).text;
      expect(text.startsWith(saved)).toBe(true);
      expect(text.slice(saved.length)).toMatch(
        /^\n?\[interrupted: spool stopped while this call was running \(it was killed or crashed\); the output above is what it had saved; it was not run again because the tool is not replay-safe\]$/,
      );
      expect(session.harness.recover()).toEqual([]);
      expect(store.get(OPEN_OPERATIONS)).toEqual({});
      expect(store.readList(outputList("op1", "call_crash")).elements).toEqual([]);
      if (backend === "jsonl") expect(readdirSync(join(dir, "session.jsonl.scopes"))).toEqual([]);

      // The session goes on: the next call takes a fresh id and settles after the dead one.
      const next = await session.call("bash", { command: "echo next" });
      expect(next.text).toBe("next\n");
      expect(session.harness.transcript().map((m) => m.toolCallId)).toEqual(["call_crash", next.result.toolCallId]);
      await session.close();
      await store.close();

      // Durable, not just in memory.
      const again = await repo.open("s");
      expect(again.get(OPEN_OPERATIONS)).toEqual({});
      await again.close();
    },
    60_000,
  );
});
