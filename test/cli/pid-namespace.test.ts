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
  it.each([
    { name: "sharing the host's hostname", hostname: undefined, where: "a container on this machine (another PID namespace)" },
    // Docker's default: a hostname of its own. The kernel's boot id still says it is this machine.
    { name: "with a hostname of its own", hostname: "spool-test-ctr", where: "spool-test-ctr, a container on this machine (another PID namespace)" },
  ])("$name: live while its namespace runs, and interrupted, its lock broken, once the namespace is gone", async ({ hostname, where }) => {
    const cwd = tempDir("spool-pidns-");
    // node is pid 1 of the new namespace: what a container's entry point is.
    const entry = [process.execPath, SPOOL_BIN, "run", "-q", "--", "echo inside; sleep 60"];
    const container = spawn(
      "unshare",
      hostname === undefined
        ? ["--pid", "--fork", "--kill-child", "--mount-proc", ...entry]
        : ["--pid", "--uts", "--fork", "--kill-child", "--mount-proc", "sh", "-c", `hostname ${hostname} && exec "$@"`, "sh", ...entry],
      { cwd, stdio: "ignore" },
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
    const owner = JSON.parse(lock()!) as { pid: number; host: string; boot?: string; pidns?: string };
    expect(owner.pid).toBe(1);
    expect(owner.pidns).toMatch(/^pid:\[\d+\]$/);
    expect(owner.boot).toBe(readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim());
    if (hostname !== undefined) expect(owner.host).toBe(hostname);
    const [{ id }] = sessions(cwd) as [Row];

    // Live: the lock is respected, and the message says where its holder is.
    const refused = runSpool(["run", "-q", "--session", id, "--", "echo outside"], { cwd });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`is open in process 1 on ${where}`);

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
