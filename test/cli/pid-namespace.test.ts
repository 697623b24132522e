// A session recorded in a container (its own PID namespace) and read from the host: `spool run` as
// pid 1 of a fresh PID namespace (unshare, as a container runtime does), killed with its namespace.
// On the host, pid 1 is init and always alive, so a pid alone would keep the session "running" and
// its lock held forever. With the namespace recorded, the host sees the namespace is gone: the session
// shows as interrupted, and it can be continued. While the container runs, its session stays live and
// its lock is respected with a message that says where the holder is. Needs root (unshare --pid).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSpool, SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const containers: ChildProcess[] = [];
afterAll(() => {
  for (const c of containers) c.kill("SIGKILL");
  removeTempDirs();
});
// Only the initial PID namespace (the host's) sees every container's processes; elsewhere spool
// cannot tell a gone container from a running one, and keeps its sessions live.
const inInitialNamespace = (() => {
  try {
    return readlinkSync("/proc/self/ns/pid") === "pid:[4026531836]";
  } catch {
    return false;
  }
})();
const canUnshare = inInitialNamespace && spawnSync("unshare", ["--pid", "--fork", "--kill-child", "--mount-proc", "true"]).status === 0;

type Row = { id: string; status: string };
const sessions = (cwd: string): Row[] => JSON.parse(runSpool(["sessions", "--json"], { cwd }).stdout) as Row[];

describe.skipIf(!canUnshare)("a session recorded in another PID namespace", () => {
  it("is live while its namespace runs, and interrupted, its lock broken, once the namespace is gone", async () => {
    const cwd = tempDir("spool-pidns-");
    // node is pid 1 of the new namespace: what a container's entry point is.
    const container = spawn(
      "unshare",
      ["--pid", "--fork", "--kill-child", "--mount-proc", process.execPath, SPOOL_BIN, "run", "-q", "--", "echo inside; sleep 60"],
      {
        cwd,
        stdio: "ignore",
      },
    );
    containers.push(container);
    const lock = (): string | undefined => {
      try {
        const [id] = readdirSync(join(cwd, ".spool", "sessions"));
        return id === undefined ? undefined : readFileSync(join(cwd, ".spool", "sessions", id, "session.jsonl.lock"), "utf8");
      } catch {
        return undefined;
      }
    };
    await until(() => lock() !== undefined && sessions(cwd)[0]?.status === "running", "the run in the namespace to start", 10_000);
    const owner = JSON.parse(lock()!) as { pid: number; pidns?: string };
    expect(owner.pid).toBe(1);
    expect(owner.pidns).toMatch(/^pid:\[\d+\]$/);
    const [{ id }] = sessions(cwd) as [Row];

    // Live: the lock is respected, and the message says where its holder is.
    const refused = runSpool(["run", "-q", "--session", id, "--", "echo outside"], { cwd });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("is open in process 1 on this host, in another PID namespace (a container)");

    // The container goes: unshare SIGKILLs its init (--kill-child), which takes the namespace with it.
    container.kill("SIGKILL");
    await new Promise((resolve) => container.once("exit", resolve));
    await until(() => sessions(cwd)[0]?.status !== "running", "the session to stop showing as running", 10_000);
    expect(sessions(cwd)[0]?.status).toBe("interrupted");
    const continued = runSpool(["run", "-q", "--session", id, "--", "echo outside"], { cwd });
    expect(continued.stderr).toBe("");
    expect(continued.status).toBe(0);
    expect(continued.stdout).toContain("outside\n");
  });
});
