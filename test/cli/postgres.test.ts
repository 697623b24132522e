// The CLI on a PostgreSQL store, through the built binary against a real server: --store and
// SPOOL_STORE, faults at start (one line, password never shown, command not run), the server stopped
// in the middle of a run (command not killed, output kept, local session readable), spills stored in
// the database, sessions/inspect/gc on the database.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listPostgresSpills, openPostgresSpill } from "../../src/store/index.js";
import { ownCluster, type Cluster } from "../store/helpers/pg.js";
import { killStarted, runSpool, SPOOL_BIN, startSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await ownCluster();
});
afterAll(async () => {
  removeTempDirs();
  await cluster?.stop();
});
afterEach(killStarted);

const env = (extra: NodeJS.ProcessEnv = {}) => ({ ...process.env, SPOOL_STORE: "", ...extra });

/**
 * A run on the cluster that prints `${first}-${word}`, then `${second}-${word}` once released, then stays
 * quiet for a minute. printf assembles the lines, so the command — part of the session's state — does
 * not spell them out and a viewer that shows them shows the output.
 */
function gatedRun(cwd: string, first: string, second: string, word: string) {
  const go = join(cwd, "go");
  const run = startSpool(
    [
      "run",
      "--store",
      cluster.url,
      "--",
      "sh",
      "-c",
      `printf '${first}-%s\\n' ${word}; while [ ! -e ${go} ]; do sleep 0.05; done; printf '${second}-%s\\n' ${word}; sleep 60`,
    ],
    { cwd, env: env() },
  );
  return { run, release: () => writeFileSync(go, "") };
}

describe("spool run --store postgres://", () => {
  it("records the run in the database and lists and inspects it from there, spill included byte for byte", async () => {
    const cwd = tempDir("spool-pg-cli-");
    const r = runSpool(["run", "--json", "-q", "--store", cluster.url, "--", "sh", "-c", "seq 1 30000"], { cwd, env: env() });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { session: { id: string }; spillPath: string };
    const id = out.session.id;
    const listed = runSpool(["sessions", "--json"], { cwd, env: env({ SPOOL_STORE: cluster.url }) });
    expect(listed.status).toBe(0);
    expect((JSON.parse(listed.stdout) as { id: string; status: string }[]).map((s) => [s.id, s.status])).toEqual([[id, "succeeded"]]);
    const inspected = runSpool(["inspect", "--store", cluster.url, id], { cwd, env: env() });
    expect(inspected.status).toBe(0);
    expect(inspected.stdout).toContain(`Session ${id} (postgres) — succeeded`);
    expect(inspected.stdout).not.toContain(cluster.password);
    const spills = await listPostgresSpills(cluster.url, id);
    expect(spills).toEqual([{ name: "call-1.log", bytes: readFileSync(join(cwd, out.spillPath)).length, complete: true }]);
    const chunks: Buffer[] = [];
    for await (const c of openPostgresSpill(cluster.url, id, "call-1.log")) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(readFileSync(join(cwd, out.spillPath)))).toBe(true);
  });

  it("wrong credentials: one line naming host and database, no password, exit 1, the command not run", () => {
    const cwd = tempDir("spool-pg-cli-");
    const u = new URL(cluster.url);
    u.password = "not-the-password-42";
    const r = runSpool(["run", "--", "touch ran-anyway"], { cwd, env: env({ SPOOL_STORE: u.toString() }) });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`^spool run: PostgreSQL at 127\\.0\\.0\\.1:${cluster.port}, database "spool": authentication failed`));
    expect(r.stderr).not.toContain("not-the-password-42");
    expect(existsSync(join(cwd, "ran-anyway"))).toBe(false);
    // Nor a session directory: the database never took the session, and nothing would list or collect it.
    expect(readdirSync(join(cwd, ".spool", "sessions"))).toEqual([]);
  });

  it("a bad --store value is a usage error that never echoes a password", () => {
    const cwd = tempDir("spool-pg-cli-");
    const r = runSpool(["sessions", "--store", "mysql://u:pw-secret@h/db"], { cwd, env: env() });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--store must be jsonl, sqlite or a postgres:// URL");
    expect(r.stderr).not.toContain("pw-secret");
  });

  it("gc --older-than removes idle database sessions and keeps fresh ones", () => {
    const cwd = tempDir("spool-pg-cli-");
    const e = env({ SPOOL_STORE: cluster.url });
    expect(runSpool(["run", "-q", "--", "echo one"], { cwd, env: e }).status).toBe(0);
    const dry = runSpool(["gc", "--older-than", "1h", "--dry-run"], { cwd, env: e });
    expect(dry.stdout).toMatch(/Would free 0 B from 0 sessions/);
    const before = (JSON.parse(runSpool(["sessions", "--json"], { cwd, env: e }).stdout) as unknown[]).length;
    const gone = runSpool(["gc", "--older-than", "0s"], { cwd, env: e });
    expect(gone.status).toBe(0);
    expect(gone.stdout).toMatch(new RegExp(`from ${before} sessions? in postgres://spool:\\*\\*\\*@`));
    expect(JSON.parse(runSpool(["sessions", "--json"], { cwd, env: e }).stdout)).toEqual([]);
  });
});

describe("spool mcp --store postgres://", () => {
  it("records an MCP client's calls in the database", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const cwd = tempDir("spool-pg-mcp-");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SPOOL_BIN, "mcp", "--store", cluster.url],
      cwd,
      stderr: "pipe",
      env: env() as Record<string, string>,
    });
    const client = new Client({ name: "spool-test", version: "1.0.0" });
    await client.connect(transport);
    const r = await client.callTool({ name: "bash", arguments: { command: "echo from-mcp" } });
    expect(JSON.stringify(r.content)).toContain("from-mcp");
    await client.close();
    const rows = await until(async () => {
      const l = JSON.parse(runSpool(["sessions", "--json", "--store", cluster.url], { cwd, env: env() }).stdout) as {
        id: string;
        command: string;
        status: string;
      }[];
      const mine = l.filter((s) => s.command === "mcp" && s.status !== "running");
      return mine.length > 0 ? mine : undefined;
    }, "the mcp session in the database");
    const inspected = JSON.parse(runSpool(["inspect", "--json", "--store", cluster.url, rows[0]!.id], { cwd, env: env() }).stdout) as {
      backend: string;
      transcriptEntries: number;
    };
    expect(inspected).toMatchObject({ backend: "postgres", transcriptEntries: 1 });
  }, 30_000);
});

describe("spool serve --store postgres://", () => {
  it("follows a live run recorded from another directory (another machine's root) through LISTEN/NOTIFY", async () => {
    const viewerDir = tempDir("spool-pg-viewer-");
    const writerDir = tempDir("spool-pg-writer-");
    // A 1 h timer: the viewer can only learn of the run from its notifications.
    const serve = startSpool(["serve", "--port", "0", "--interval", "3600000", "--store", cluster.url], { cwd: viewerDir, env: env() });
    const at = await until(() => /at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(serve.err()), "the viewer URL");
    expect(serve.err()).not.toContain(cluster.password);
    const run = startSpool(["run", "--store", cluster.url, "--", "sh", "-c", "printf 'first-%s\\n' line; sleep 1.5; printf 'second-%s\\n' line; sleep 0.5"], {
      cwd: writerDir,
      env: env(),
    });
    await until(() => run.err().includes("first-line"), "the run's first line");
    const listed = JSON.parse(runSpool(["sessions", "--json", "--store", cluster.url], { cwd: viewerDir, env: env() }).stdout) as {
      id: string;
      status: string;
    }[];
    const id = listed.find((s) => s.status === "running")!.id;
    const res = await until(async () => {
      const r = await fetch(`${at[1]}/v1/state/${encodeURIComponent(`session:${id}`)}?token=${at[2]}`);
      return r.ok ? r : undefined;
    }, "the session's state on the viewer");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    const deadline = Date.now() + 15_000;
    while (!seen.includes("second-line") && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    await reader.cancel();
    expect(seen).toContain("first-line");
    expect(seen).toContain("second-line");
    expect(await run.exited).toBe(0);
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 40_000);
});

describe("spool serve --store postgres:// across a server restart", () => {
  it("keeps serving: its next look opens new connections, and the run's later output is shown", async () => {
    const viewerDir = tempDir("spool-pg-viewer-");
    const writerDir = tempDir("spool-pg-writer-");
    const serve = startSpool(["serve", "--port", "0", "--interval", "3600000", "--store", cluster.url], { cwd: viewerDir, env: env() });
    const at = await until(() => /at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(serve.err()), "the viewer URL");
    const { run, release } = gatedRun(writerDir, "before", "after", "restart");
    await until(() => run.err().includes("before-restart"), "the run's first line");
    await cluster.halt();
    await cluster.start();
    release();
    await until(() => run.err().includes("after-restart"), "the run's second line");
    const id = await until(async () => {
      const l = JSON.parse(runSpool(["sessions", "--json", "--store", cluster.url], { cwd: viewerDir, env: env() }).stdout) as { id: string; status: string }[];
      return l.find((s) => s.status === "running")?.id;
    }, "the running session");
    const text = await until(async () => {
      if (serve.child.exitCode !== null) throw new Error(`serve exited ${serve.child.exitCode}: ${serve.err()}`);
      const r = await fetch(`${at[1]}/v1/state/${encodeURIComponent(`session:${id}`)}?token=${at[2]}`);
      if (!r.ok) return undefined;
      const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      const stop = setTimeout(() => void reader.cancel(), 1000);
      for (;;) {
        const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (next.done) break;
        seen += next.value;
        if (seen.includes("after-restart")) break;
      }
      clearTimeout(stop);
      await reader.cancel().catch(() => {});
      return seen.includes("after-restart") ? seen : undefined;
    }, "the line printed after the restart on the viewer");
    expect(text).toContain("before-restart");
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
    run.child.kill("SIGINT");
    await run.exited;
  }, 60_000);
});

describe("spool serve --store postgres:// that cannot start", () => {
  it("a port in use: one line, exit 2, and the process ends (the database connections are closed)", async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const serve = startSpool(["serve", "--port", String(port), "--store", cluster.url], { cwd: tempDir("spool-pg-viewer-"), env: env() });
      const code = await Promise.race([serve.exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 15_000))]);
      expect(code).toBe(2);
      expect(serve.err().trim()).toBe(
        `spool serve: port ${port} on 127.0.0.1 is already in use by another program; pick another with --port N, or leave --port out for any free port`,
      );
    } finally {
      busy.close();
    }
  }, 30_000);
});

describe("spool serve --store postgres:// while a run is live", () => {
  it("Ctrl-C ends serve (exit 0, within 5 s) while it follows a live session", async () => {
    const viewerDir = tempDir("spool-pg-viewer-");
    const writerDir = tempDir("spool-pg-writer-");
    const run = startSpool(["run", "--store", cluster.url, "--", "sh", "-c", "echo live-line; sleep 30"], { cwd: writerDir, env: env() });
    await until(() => run.err().includes("live-line"), "the run's first line");
    const serve = startSpool(["serve", "--port", "0", "--interval", "3600000", "--store", cluster.url], { cwd: viewerDir, env: env() });
    const at = await until(() => /at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(serve.err()), "the viewer URL");
    const listed = JSON.parse(runSpool(["sessions", "--json", "--store", cluster.url], { cwd: viewerDir, env: env() }).stdout) as {
      id: string;
      status: string;
    }[];
    const id = listed.find((x) => x.status === "running")!.id;
    const r = await fetch(`${at[1]}/v1/state/${encodeURIComponent(`session:${id}`)}?token=${at[2]}`);
    expect(r.ok).toBe(true);
    await r.body?.cancel();
    const t0 = Date.now();
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5_000);
    run.child.kill("SIGINT");
    await run.exited;
  }, 40_000);
});

describe("spool serve --store postgres:// across a dropped LISTEN connection", () => {
  it("shows a commit whose notification was lost while it reconnected, with no commit after it", async () => {
    const viewerDir = tempDir("spool-pg-viewer-");
    const writerDir = tempDir("spool-pg-writer-");
    // ALTER DATABASE cannot run from inside the database it changes: the admin connection uses another.
    const adminUrl = new URL(cluster.url);
    adminUrl.pathname = "/postgres";
    const admin = new pg.Client({ connectionString: adminUrl.toString() });
    const db = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await db.connect();
    try {
      // The run prints one line, then a second one when released, then stays quiet (no commit after it).
      const { run, release } = gatedRun(writerDir, "first", "gap", "line");
      await until(() => run.err().includes("first-line"), "the run's first line");
      // A 1 h timer: serve looks only when notified or after its LISTEN connection comes back.
      const serve = startSpool(["serve", "--port", "0", "--interval", "3600000", "--store", cluster.url], { cwd: viewerDir, env: env() });
      const at = await until(() => /at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(serve.err()), "the viewer URL");
      const id = (await db.query<{ session_id: string }>("SELECT session_id FROM spool.sessions ORDER BY created_at DESC LIMIT 1")).rows[0]!.session_id;
      const seqNow = async () =>
        Number((await db.query<{ n: string }>("SELECT next_seq::text AS n FROM spool.sessions WHERE session_id = $1", [id])).rows[0]!.n);
      const res = await fetch(`${at[1]}/v1/state/${encodeURIComponent(`session:${id}`)}?token=${at[2]}`);
      expect(res.ok).toBe(true);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      const readUntil = async (text: string, ms: number): Promise<boolean> => {
        const deadline = Date.now() + ms;
        while (!seen.includes(text) && Date.now() < deadline) {
          const next = await Promise.race([reader.read(), new Promise<undefined>((r) => setTimeout(r, Math.max(0, deadline - Date.now())))]);
          if (next === undefined || next.done) break;
          seen += next.value;
        }
        return seen.includes(text);
      };
      expect(await readUntil("first-line", 15_000)).toBe(true);
      // New connections refused, then serve's LISTEN connection cut: it retries with backoff meanwhile.
      await admin.query("ALTER DATABASE spool ALLOW_CONNECTIONS false");
      const cut = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'spool' AND query LIKE 'LISTEN%'");
      expect(cut.rowCount).toBe(1);
      const listening = "SELECT 1 FROM pg_stat_activity WHERE datname = 'spool' AND query LIKE 'LISTEN%'";
      await until(async () => ((await admin.query(listening)).rowCount === 0 ? true : undefined), "serve's LISTEN connection gone");
      const before = await seqNow();
      release();
      await until(async () => ((await seqNow()) > before ? true : undefined), "the second line committed (its notification unheard)");
      // Every commit of that write lands while serve cannot hear: the seq stays put for a second.
      for (let last = await seqNow(), still = 0; still < 10; still++) {
        await new Promise((r) => setTimeout(r, 100));
        const now = await seqNow();
        if (now !== last) [last, still] = [now, 0];
      }
      await admin.query("ALTER DATABASE spool ALLOW_CONNECTIONS true");
      expect(await readUntil("gap-line", 20_000)).toBe(true);
      await reader.cancel();
      serve.child.kill("SIGINT");
      expect(await serve.exited).toBe(0);
      run.child.kill("SIGINT");
      await run.exited;
    } finally {
      await admin.query("ALTER DATABASE spool ALLOW_CONNECTIONS true").catch(() => {});
      await admin.end();
      await db.end();
    }
  }, 60_000);
});

describe("spool serve --store postgres:// and spills", () => {
  it("serves a spill recorded in another root from the database, byte for byte", async () => {
    const writerDir = tempDir("spool-pg-writer-");
    const viewerDir = tempDir("spool-pg-viewer-");
    const r = runSpool(["run", "--json", "-q", "--store", cluster.url, "--", "sh", "-c", "seq 1 40000"], { cwd: writerDir, env: env() });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { session: { id: string }; spillPath: string };
    const serve = startSpool(["serve", "--port", "0", "--store", cluster.url], { cwd: viewerDir, env: env() });
    const at = await until(() => /at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(serve.err()), "the viewer URL");
    const res = await fetch(`${at[1]}/files/${out.session.id}/spill/call-1.log?token=${at[2]}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(writerDir, out.spillPath)))).toBe(true);
    const missing = await fetch(`${at[1]}/files/${out.session.id}/spill/nope.log?token=${at[2]}`);
    expect(missing.status).toBe(404);
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 30_000);
});

describe("spills stream into the database while the command runs", () => {
  it("a spill is readable from the database before the run ends, and complete and identical after", async () => {
    const cwd = tempDir("spool-pg-cli-");
    const run = startSpool(["run", "--store", cluster.url, "--", "sh", "-c", "seq 1 300000; echo spilled; sleep 4"], { cwd, env: env() });
    await until(() => run.err().includes("spilled"), "the command's output");
    const id = await until(async () => {
      const l = JSON.parse(runSpool(["sessions", "--json", "--store", cluster.url], { cwd, env: env() }).stdout) as { id: string; status: string }[];
      return l.find((s) => s.status === "running")?.id;
    }, "the running session");
    const during = await until(async () => {
      const s = (await listPostgresSpills(cluster.url, id)).find((x) => x.name === "call-1.log");
      return s && s.bytes >= 1_000_000 ? s : undefined;
    }, "a megabyte of spill in the database");
    expect(run.child.exitCode).toBe(null);
    expect(during.complete).toBe(false);
    const early: Buffer[] = [];
    for await (const c of openPostgresSpill(cluster.url, id, "call-1.log")) early.push(c as Buffer);
    expect(await run.exited).toBe(0);
    const local = readFileSync(join(cwd, ".spool", "sessions", id, "spill", "call-1.log"));
    const partial = Buffer.concat(early);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.equals(local.subarray(0, partial.length))).toBe(true);
    const after = (await listPostgresSpills(cluster.url, id)).find((x) => x.name === "call-1.log")!;
    expect(after).toEqual({ name: "call-1.log", bytes: local.length, complete: true });
    const whole: Buffer[] = [];
    for await (const c of openPostgresSpill(cluster.url, id, "call-1.log")) whole.push(c as Buffer);
    expect(Buffer.concat(whole).equals(local)).toBe(true);
  }, 40_000);
});

describe("spool run when the database goes away mid-run (the test stops the server)", () => {
  const script = "for i in $(seq 1 30); do echo line $i; sleep 0.1; done";

  it("reconnects when the server comes back: the run succeeds and the database holds all of it", async () => {
    const cwd = tempDir("spool-pg-cli-");
    const run = startSpool(["run", "--store", cluster.url, "--", script], { cwd, env: env({ SPOOL_PG_RECONNECT_SECONDS: "20" }) });
    await until(() => run.err().includes("line 5"), "line 5");
    await cluster.halt();
    await new Promise((r) => setTimeout(r, 800));
    await cluster.start();
    expect(await run.exited).toBe(0);
    expect(run.out()).toContain("line 30");
    expect(run.err()).toMatch(/spool: lost the connection to PostgreSQL at 127\.0\.0\.1:\d+, database "spool"/);
    expect(run.err()).toMatch(/spool: reconnected/);
    const id = /Session: .*sessions\/(\S+)/.exec(run.out())![1]!;
    const inspected = runSpool(["inspect", "--json", "--store", cluster.url, id], { cwd, env: env() });
    const report = JSON.parse(inspected.stdout) as { status: string; transcriptEntries: number };
    expect(report).toMatchObject({ status: "succeeded", transcriptEntries: 1 });
  });

  it("stays down: the command finishes, nothing it printed is lost, one clear error, a local session inspect reads", async () => {
    const cwd = tempDir("spool-pg-cli-");
    const run = startSpool(["run", "--store", cluster.url, "--", script], { cwd, env: env({ SPOOL_PG_RECONNECT_SECONDS: "1" }) });
    await until(() => run.err().includes("line 5"), "line 5");
    await cluster.halt();
    const code = await run.exited;
    await cluster.start();
    expect(code).toBe(1);
    expect(run.out()).toContain("line 30");
    const errLines = run
      .err()
      .split("\n")
      .filter((l) => l.startsWith("spool run:"));
    expect(errLines).toHaveLength(1);
    expect(errLines[0]).toMatch(/PostgreSQL at 127\.0\.0\.1:\d+, database "spool": the database stayed unreachable for 1 s/);
    expect(errLines[0]).toMatch(/spool inspect --store jsonl --root \.spool \S+/);
    expect(run.err()).not.toContain(cluster.password);
    const id = /--root \.spool (\S+)/.exec(errLines[0]!)![1]!;
    const inspected = runSpool(["inspect", "--json", "--root", ".spool", id], { cwd, env: env() });
    expect(inspected.status).toBe(0);
    const report = JSON.parse(inspected.stdout) as { status: string; backend: string; calls: { outputChars: number }[] };
    expect(report.backend).toBe("jsonl");
    expect(report.status).toBe("succeeded");
    expect(report.calls.length).toBe(1);
  });
});
