// `spool run --session ID --store postgres://` whose connection was cut while a second run took the
// session over: the first run must not overwrite the second's commits when it reconnects, and says so
// in one line. The first run reaches the server through a TCP proxy, so the test decides when it
// gets back; the second connects directly.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ownCluster, type Cluster } from "../store/helpers/pg.js";
import { startTcpProxy, type TcpProxy } from "../store/helpers/tcp-proxy.js";
import { killStarted, runSpool, startSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

let cluster: Cluster;
let proxy: TcpProxy;
beforeAll(async () => {
  cluster = await ownCluster();
  proxy = await startTcpProxy(cluster.url);
});
afterAll(async () => {
  removeTempDirs();
  await proxy?.close();
  await cluster?.stop();
});
afterEach(killStarted);

const env = (extra: NodeJS.ProcessEnv = {}) => ({ ...process.env, SPOOL_STORE: "", ...extra });

describe("spool run --session on PostgreSQL, cut off while a second run took the session", () => {
  it("the first run stops writing and says so in one line; the second run's records are intact", async () => {
    const cwd = tempDir("spool-pg-fence-");
    const go = join(cwd, "go");
    const a = startSpool(["run", "--session", "shared", "--store", proxy.url, "--", `echo first-a; while [ ! -e ${go} ]; do sleep 0.05; done; echo second-a`], {
      cwd,
      env: env({ SPOOL_PG_RECONNECT_SECONDS: "30" }),
    });
    await until(() => a.err().includes("first-a"), "run A's first line");
    proxy.mode("refuse");
    const db = new pg.Client({ connectionString: cluster.url });
    await db.connect();
    try {
      // Run A's writer connection is the one holding a session lease (the only one on this cluster).
      const cut = await db.query("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted");
      expect(cut.rowCount).toBe(1);
      await until(() => a.err().includes("lost the connection"), "run A to notice");
      // Run B takes the session: it settles A's open call as interrupted and records its own.
      const b = runSpool(["run", "--session", "shared", "--store", cluster.url, "--", "echo from-b"], { cwd, env: env() });
      expect(b.status).toBe(0);
      proxy.mode("forward");
      writeFileSync(go, "");
      expect(await a.exited).toBe(1);
    } finally {
      await db.end();
    }
    // A's command ran to its end (shown live), then the one line that says why its session was not written.
    expect(a.err()).toContain("second-a");
    const lines = a
      .err()
      .split("\n")
      .filter((l) => l.startsWith("spool"));
    expect(lines.slice(0, 1)).toEqual([
      expect.stringMatching(/^spool: lost the connection to PostgreSQL at 127\.0\.0\.1:\d+, database "spool"; reconnecting$/),
    ]);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(
        /^spool run: PostgreSQL at 127\.0\.0\.1:\d+, database "spool": another writer opened session "shared" while this process was disconnected/,
      ),
    ]);
    expect(a.err()).not.toMatch(/\n\s+at /);
    const inspected = runSpool(["inspect", "--json", "--store", cluster.url, "shared"], { cwd, env: env() });
    expect(inspected.status).toBe(0);
    const report = JSON.parse(inspected.stdout) as { command: string; status: string; calls: { command: string; status: string }[] };
    expect(report.command).toBe("echo from-b");
    expect(report.status).toBe("succeeded");
    expect(report.calls.map((c) => [c.command.split(";")[0], c.status])).toEqual([
      ["echo first-a", "interrupted"],
      ["echo from-b", "succeeded"],
    ]);
  }, 60_000);
});
