// `spool mcp` out of file descriptors: more bash calls at once than `ulimit -n` has room for. Each call
// that cannot run fails on its own with a sentence saying so and what to do (it said "Check that the
// shell exists and is executable"), the others succeed, nothing is left open or running afterwards,
// and the next call works.
import { spawnSync } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, it } from "vitest";
import { SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { textOf, until } from "./helpers.js";

afterAll(removeTempDirs);

/** The server's open descriptors, without the pool of ready pipes (real-pipe.ts: up to 8 pairs, by design). */
const openFds = (pid: number): string[] =>
  readdirSync(`/proc/${pid}/fd`)
    .map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((target) => target !== "" && !/\/spool-pipes-\w+\/\d+ \(deleted\)$/.test(target));

describe.runIf(process.platform === "linux")("spool mcp under ulimit -n", () => {
  it("60 bash calls at once under ulimit -n 64: each that cannot run says why, nothing leaks", async () => {
    const dir = tempDir("spool-mcp-fds-");
    const transport = new StdioClientTransport({
      command: "bash",
      args: ["-c", `ulimit -n 64 && exec "$0" "$@"`, process.execPath, SPOOL_BIN, "mcp", "--root", join(dir, ".spool")],
      cwd: dir,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d));
    const client = new Client({ name: "spool-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const pid = transport.pid!;
      await client.callTool({ name: "bash", arguments: { command: "true" } }); // the pipe pool and the session's files opened
      const before = openFds(pid);
      const burst = async () => {
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            client
              .callTool({ name: "bash", arguments: { command: `sleep 1; echo out${i}` } })
              .then((r) => ({ i, text: textOf(r), isError: r.isError === true })),
          ),
        );
        const failed = results.filter((r) => r.text !== `out${r.i}\n`);
        // Measured: 18 ran and 42 could not (the limit leaves room for about 15 commands).
        expect(failed.length).toBeGreaterThan(0);
        expect(failed.length).toBeLessThan(60);
        for (const r of failed) {
          expect(r.isError).toBe(true);
          expect(r.text).toContain("spool has as many files open as it may");
          expect(r.text).toContain("run fewer commands at once, or raise the limit where spool is started");
          expect(r.text).not.toContain("Check that the shell exists");
        }
        // No command is left, and the files each call opened are closed.
        // (A shell just ended may show as a zombie for a moment, until the server reaps it.)
        const children = () => spawnSync("ps", ["--ppid", String(pid), "-o", "pid="], { encoding: "utf8" }).stdout.trim();
        await until(() => children() === "", "no child of the server left", 5000);
        const files = (fds: string[]) => fds.filter((f) => f.startsWith("/")).sort();
        await until(() => JSON.stringify(files(openFds(pid))) === JSON.stringify(files(before)), "the server's files to be closed", 5000);
        return openFds(pid).length;
      };
      // Nothing accumulates per call. Measured: after a burst 0 or 2 more descriptors than before, the
      // same after 3 bursts: a unix socket pair whose peer is closed (seen with ss -xap), not one a call.
      await burst();
      expect(await burst()).toBeLessThanOrEqual(before.length + 2);
      // Real pipes again once descriptors are free: one EMFILE had switched them off for the process,
      // and `> /dev/stdout` failed with ENXIO on the socketpairs left.
      const next = await client.callTool({ name: "bash", arguments: { command: "echo still-works > /dev/stdout" } });
      expect(textOf(next)).toBe("still-works\n");
      expect(stderr).not.toMatch(/Warning/);
    } finally {
      await client.close();
    }
  });
});
