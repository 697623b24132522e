// A SIGKILLed owner: its background processes (piped and under a pty) do not outlive it, and the
// session it leaves shows each of them as an unsettled operation with the output it had so far,
// which resume() settles as interrupted.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { groupMembers } from "../support/process-group.js";
import { createWorkspace } from "../../src/context/index.js";
import { createBashTool, createHarness, createProcessTools } from "../../src/harness/index.js";
import { openSessionRepo } from "../../src/store/index.js";

const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(here, "../../dist/harness/index.js"))) throw new Error("the crash test runs its child from dist/: run `npm run build` first");
const CHILD = join(here, "fixtures", "background-child.mjs");
const root = mkdtempSync(join(tmpdir(), "spool-bgcrash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it("a SIGKILLed owner leaves no background process behind, and its session shows them interrupted with their output so far", async () => {
  const child = spawn(process.execPath, [CHILD, root, "s1"], { stdio: ["ignore", "pipe", "inherit"] });
  const groups: number[] = [];
  const processes: { id: string; name: string }[] = [];
  let buf = "";
  child.stdout.setEncoding("utf8");
  await new Promise<void>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`child not ready: ${buf}`)), 20_000);
    child.stdout.on("data", (chunk: string) => {
      buf += chunk;
      for (const line of buf.split("\n")) {
        const [kind, a, b] = line.split(" ");
        if (kind === "PGID" && !groups.includes(Number(a))) groups.push(Number(a));
        if (kind === "PROCESS" && !processes.some((p) => p.id === a)) processes.push({ id: a!, name: b! });
        if (kind === "READY") {
          clearTimeout(guard);
          resolve();
        }
      }
    });
  });
  expect(groups).toHaveLength(2);
  for (const g of groups) expect(groupMembers(g).length).toBeGreaterThan(0);
  child.kill("SIGKILL");
  await new Promise((r) => child.on("close", r));
  // The orphan guard kills each group as soon as the owner's pipe to it closes.
  const until = Date.now() + 5000;
  while (Date.now() < until && groups.some((g) => groupMembers(g).length > 0)) await new Promise((r) => setTimeout(r, 20));
  for (const g of groups) expect(groupMembers(g)).toEqual([]);

  // What the session shows: each background process is an operation that never settled.
  const store = await openSessionRepo(root, { backend: "jsonl" }).open("s1");
  const harness = createHarness({
    store,
    workspace: createWorkspace({ dir: join(root, "s1"), keep: true }),
    tools: [createBashTool(), ...createProcessTools()],
  });
  const open = harness.recover();
  for (const p of processes) {
    const op = open.find((o) => o.operationId === p.id)!;
    expect(op, `${p.id} is an unsettled operation`).toBeDefined();
    expect(op.calls[0]!.toolName).toBe("bash");
    expect(op.calls[0]!.output!.content[0].text).toContain(`${p.name}-tick-3`);
    const [result] = await harness.resume(p.id);
    expect(result!.isError).toBe(true);
    expect(result!.content[0]).toMatchObject({ type: "text" });
    const text = (result!.content[0] as { text: string }).text;
    expect(text).toContain(`${p.name}-tick-3`);
    expect(text).toMatch(/\[interrupted: spool stopped while this call was running/);
  }
  expect(harness.recover()).toEqual([]);
});
