// Timeouts, aborts and the process group, with real processes.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { applyUpdate, exec, type CaptureUpdate, type CaptureView, type ExecResult } from "../../src/capture/index.js";
import { GUARD_SCRIPT } from "../../src/capture/process-group.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

afterAll(removeTempDirs);

/**
 * Whether `pid` is still the process we started (its command line is `expected`, so a pid reused by
 * another program on this shared machine does not count). A zombie has already died; it only waits
 * to be reaped by whoever inherited it.
 */
function isRunning(pid: number, expected: string): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z" && cmdline === expected;
  } catch {
    return false;
  }
}

function viewOf(r: ExecResult): CaptureView {
  const { exitCode: _e, signal: _s, timedOut: _t, aborted: _a, durationMs: _d, spillPauses: _p, ...view } = r;
  return view;
}

describe("process group", () => {
  it("a timeout kills a grandchild: its pid is gone afterwards", async () => {
    const r = await exec("sleep 61.25 & echo $!; wait", { timeoutMs: 300 });
    const grandchild = Number(r.text.trim());
    expect(grandchild).toBeGreaterThan(1);
    expect(r.timedOut).toBe(true);
    const alive = isRunning(grandchild, "sleep 61.25");
    expect(alive, alive ? readFileSync(`/proc/${grandchild}/stat`, "utf8") : "").toBe(false);
    expect(r.durationMs).toBeLessThan(3000);
  });

  it("a timeout result carries the latest bounded view and the forced final update matches it", async () => {
    let folded: CaptureView | undefined;
    const r = await exec("echo before; sleep 30", {
      timeoutMs: 300,
      onUpdate: (u: CaptureUpdate) => (folded = applyUpdate(folded, u)),
    });
    expect(r.timedOut).toBe(true);
    expect(r.aborted).toBe(false);
    expect(r.text).toBe("before\n");
    expect(r.exitCode).toBe(143);
    expect(folded).toEqual(viewOf(r));
  });

  it("an abort kills the group and returns the latest view", async () => {
    const ac = new AbortController();
    let folded: CaptureView | undefined;
    const r = await exec("echo one; sleep 0.1; echo two; sleep 30 & wait", {
      signal: ac.signal,
      onUpdate: (u) => {
        folded = applyUpdate(folded, u);
        if (folded.text.includes("two\n")) ac.abort();
      },
    });
    expect(r.aborted).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(r.text).toBe("one\ntwo\n");
    expect(folded).toEqual(viewOf(r));
  });

  it("a signal that times out (AbortSignal.timeout, the AI SDK's per-tool timeout) ends the command as timed out, not aborted", async () => {
    const r = await exec("echo start; sleep 30", { signal: AbortSignal.timeout(300) });
    expect(r.timedOut).toBe(true);
    expect(r.aborted).toBe(false);
    expect(r.text).toBe("start\n");
    expect(r.durationMs).toBeLessThan(3000);
  });

  it("an already-aborted signal still runs nothing to completion", async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await exec("sleep 30; echo never", { signal: ac.signal });
    expect(r.aborted).toBe(true);
    expect(r.text).toBe("");
    expect(r.durationMs).toBeLessThan(3000);
  });

  it("keeps reading the pipes after the kill, so output written while dying is not lost", async () => {
    const r = await exec("trap 'echo cleanup ran; exit 1' TERM; echo start; sleep 30 & wait", { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.text).toBe("start\ncleanup ran\n");
    expect(r.exitCode).toBe(1);
  });

  it("a process group that ignores SIGTERM is killed with SIGKILL after the grace period", async () => {
    const r = await exec("trap '' TERM; echo $$; while true; do sleep 0.05; done", {
      timeoutMs: 200,
      killGraceMs: 300,
      shell: "/bin/bash",
    });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(137);
    expect(r.signal).toBe("SIGKILL");
    expect(isRunning(Number(r.text.trim()), "/bin/bash -c trap '' TERM; echo $$; while true; do sleep 0.05; done")).toBe(false);
    expect(r.durationMs).toBeLessThan(3000);
  });
});

describe("when the capturing process itself dies", () => {
  it("a SIGKILLed capturing process leaves no orphans: the guard kills the command's group", async () => {
    const dir = tempDir("spool-orphan-");
    const script = join(dir, "capturer.mjs");
    const dist = fileURLToPath(new URL("../../dist/capture/index.js", import.meta.url));
    writeFileSync(
      script,
      `import { exec } from ${JSON.stringify(dist)};
       await exec("sleep 62.5 & echo $!; wait", {
         onUpdate: (u) => { if (u.kind === "replace" && u.view.text) process.stdout.write(u.view.text); },
       });`,
    );
    const capturer = spawn("node", [script], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((r) => capturer.once("exit", r));
    try {
      const grandchild = await new Promise<number>((resolve) => capturer.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))));
      // The pid is printed between fork and exec: wait until it is really our sleep.
      await until(() => isRunning(grandchild, "sleep 62.5"), "the grandchild to be our sleep", 3000);
      capturer.kill("SIGKILL");
      await exited;
      await until(() => !isRunning(grandchild, "sleep 62.5"), "the guard to kill the orphaned sleep", 3000);
    } finally {
      capturer.kill("SIGKILL");
    }
  });

  it("a normal finish leaves no guard process behind", async () => {
    const r = await exec("echo $$");
    const pgid = Number(r.text.trim());
    expect(isRunning(pgid, "/bin/bash -c echo $$")).toBe(false);
    // The guard is SIGKILLed as exec returns; wait for the kill to land, not for a fixed time.
    const guards = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p) && isRunning(Number(p), `/bin/sh -c ${GUARD_SCRIPT} ${pgid}`));
    await until(() => guards().length === 0, "the guard to exit", 1000);
  });
});
