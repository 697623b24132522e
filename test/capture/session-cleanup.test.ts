// Job control (`set -m`, an interactive shell) puts each `&` job in a process group of its own inside
// the command's session, and spool ended the command's group only: `set -m; sleep 300 & echo x` left
// the sleep running after the call ended, timed out, was aborted, or spool itself was SIGKILLed. Now
// every group of the session is ended (process-group.ts). Real processes, on pipes, on a file the
// command writes itself (direct spill) and on a terminal.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { exec, type ExecOptions } from "../../src/capture/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const started: number[] = [];
afterAll(() => {
  for (const pid of started) if (isOurs(pid)) process.kill(pid, "SIGKILL");
  removeTempDirs();
});

/** kill(pid, 0) finds it, it is no zombie waiting to be reaped, and it is still the sleep we started. */
function isOurs(pid: number, seconds?: string): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z" && (seconds === undefined ? cmdline.startsWith("sleep 3") : cmdline === `sleep ${seconds}`);
  } catch {
    return false;
  }
}

/** The pid of the job, printed by the command as its first line. */
function jobPid(text: string): number {
  const pid = Number(text.trim().split(/\r?\n/)[0]);
  expect(pid).toBeGreaterThan(1);
  started.push(pid);
  return pid;
}

const paths: [string, () => ExecOptions][] = [
  ["pipes", () => ({})],
  ["a terminal", () => ({ pty: true })],
  ["the spill file the command writes", () => ({ capture: { spill: { dir: tempDir("spool-session-"), id: "out", direct: true } } })],
];

describe.runIf(process.platform === "linux")("a job in its own process group of the command's session (set -m) does not outlive the call", () => {
  describe.each(paths)("on %s", (_, options) => {
    it("when the command ends by itself", async () => {
      const r = await exec("set -m; sleep 300.1 & echo $!", options());
      expect(r.exitCode).toBe(0);
      const pid = jobPid(r.text);
      expect(r.endedLeftovers).toBe(true);
      // Ended with SIGTERM through the grace: it may still be a zombie waiting for init (~1.5 s here).
      await until(() => !isOurs(pid, "300.1"), "the job to be gone", 3000);
    });

    it("when the command times out", async () => {
      // The foreground job of a job-control shell is a group of its own too: it prints its pid and
      // becomes the sleep.
      const r = await exec("set -m; sleep 300.2 & echo $!; sh -c 'echo $$; exec sleep 30.2'", { ...options(), timeoutMs: 500 });
      expect(r.timedOut).toBe(true);
      const pid = jobPid(r.text);
      const foreground = Number(r.text.trim().split(/\r?\n/)[1]);
      expect(foreground).toBeGreaterThan(1);
      started.push(foreground);
      await until(() => !isOurs(pid, "300.2"), "the job to be gone", 3000);
      await until(() => !isOurs(foreground, "30.2"), "the foreground job to be gone", 3000);
    });

    it("when the call is aborted", async () => {
      const ac = new AbortController();
      const r = await exec("set -m; sleep 300.3 & echo $!; sleep 30", {
        ...options(),
        signal: ac.signal,
        minIntervalMs: 10,
        onUpdate: (u) => {
          if ((u.kind === "append" ? u.text : u.kind === "replace" ? u.view.text : "").trim() !== "") ac.abort();
        },
      });
      expect(r.aborted).toBe(true);
      const pid = jobPid(r.text);
      await until(() => !isOurs(pid, "300.3"), "the job to be gone", 3000);
    });
  });

  it.each([
    ["pipes", "{}"],
    ["a terminal", "{ pty: true }"],
  ])("when the capturing process is SIGKILLed, on %s: the orphan guard ends the job too", async (_, options) => {
    const dir = tempDir("spool-session-orphan-");
    const script = join(dir, "capturer.mjs");
    const dist = fileURLToPath(new URL("../../dist/capture/index.js", import.meta.url));
    writeFileSync(
      script,
      `import { exec } from ${JSON.stringify(dist)};
       let told = false;
       await exec("set -m; sleep 300.5 & echo $!; wait", { ...${options}, minIntervalMs: 10,
         onUpdate: (u) => { const t = u.kind === "replace" ? u.view.text : u.kind === "append" ? u.text : "";
           if (!told && t.trim()) { told = true; process.stdout.write(t.trim() + "\\n"); } },
       });`,
    );
    const capturer = spawn("node", [script], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((r) => capturer.once("exit", r));
    try {
      const pid = await new Promise<number>((resolve) => capturer.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))));
      started.push(pid);
      // The pid is printed between fork and exec: wait until it is really our sleep.
      await until(() => isOurs(pid, "300.5"), "the job to be our sleep", 3000);
      capturer.kill("SIGKILL");
      await exited;
      await until(() => !isOurs(pid, "300.5"), "the guard to end the job", 5000);
    } finally {
      capturer.kill("SIGKILL");
    }
  });
});
