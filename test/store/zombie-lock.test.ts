// A session's writer SIGKILLed and not yet reaped — a zombie: kill(pid, 0) still succeeds on it, and
// its lock was respected as a live writer's, so a harness that kills spool and restarts it at once
// was refused ("session … is open in process N"). The writer runs under a parent that never waits
// for it (`sh -c 'writer & exec sleep'`), so it stays a zombie for as long as the test looks.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openSessionRepo } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";
import { stateOf } from "../support/process-group.js";

const here = dirname(fileURLToPath(import.meta.url));
const STORE_MODULE = join(here, "../../dist/store/index.js");
if (!existsSync(STORE_MODULE)) throw new Error("the writer child runs from dist/: run `npm run build` first");
const CHILD = join(here, "fixtures", "hold-session-child.mjs");

const parents: ChildProcess[] = [];
afterEach(() => {
  // The parent that never reaps: killed, its zombie child goes to init, which reaps it.
  for (const p of parents.splice(0)) p.kill("SIGKILL");
});
afterAll(removeTempDirs);

/** A writer holding session `id`, whose parent never waits for it; resolves with its pid once it holds the lock. */
async function unreapedWriter(root: string, backend: "jsonl" | "sqlite", id: string): Promise<number> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const writer = [process.execPath, CHILD, pathToFileURL(STORE_MODULE).href, root, backend, id].map(quote).join(" ");
  const parent = spawn("sh", ["-c", `${writer} & echo "pid $!"; exec sleep 60`], { stdio: ["ignore", "pipe", "inherit"] });
  parents.push(parent);
  let out = "";
  parent.stdout!.on("data", (d: Buffer) => (out += d));
  await until(() => out.includes("ready"), "the writer to hold the session", 15_000);
  return Number(/pid (\d+)/.exec(out)![1]);
}

describe.skipIf(!existsSync("/proc/self/stat"))("a writer killed and not yet reaped (a zombie) holds no lock", () => {
  it.each(["jsonl", "sqlite"] as const)(
    "%s: refused while the writer runs; opened at once once it is SIGKILLed, though its parent has not reaped it",
    async (backend) => {
      const root = tempDir("spool-zombie-lock-");
      const repo = openSessionRepo(root, { backend });
      const pid = await unreapedWriter(root, backend, "s");
      await expect(repo.open("s")).rejects.toThrow(`is open in process ${pid}`);
      process.kill(pid, "SIGKILL");
      await until(() => stateOf(pid) === "Z", "the writer to become a zombie", 5000);
      const store = await repo.open("s");
      expect(stateOf(pid)).toBe("Z"); // still unreaped: the lock was cleared because it is dead, not gone
      await store.close();
    },
  );
});
