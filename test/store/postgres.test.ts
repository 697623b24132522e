// The PostgreSQL backend beyond the shared conformance suite: the writer lease across processes,
// faults at connect time and mid-run (against a real server that the test stops), spills, live
// notifications, retention, the repository, and names PostgreSQL text cannot hold as they are.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendList,
  createSpillUpload,
  deleteList,
  DatabaseError,
  ephemeralScope,
  followPostgresCommits,
  followPostgresSession,
  gcPostgresSessions,
  list,
  listPostgresSessions,
  openJsonlStore,
  openPostgresSpill,
  openPostgresStore,
  openSessionRepo,
  readPostgresSnapshot,
  retireScope,
  SessionLockedError,
  setValue,
  SPILL_CHUNK_BYTES,
  value,
  type CommitNotice,
  type ConnectionEvent,
} from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";
import { compileStoreForChildren } from "./helpers/compile-store.js";
import { ownCluster, testDatabase, uniqueSchema, uniqueSession, type Cluster } from "./helpers/pg.js";

const schema = uniqueSchema("pgt");
let url = "";
beforeAll(async () => {
  url = (await testDatabase()).url;
});
afterAll(() => removeTempDirs());

const A = ephemeralScope("op:A");
const open = (sessionId = uniqueSession(), extra: Parameters<typeof openPostgresStore>[1] = {}) => openPostgresStore(url, { schema, sessionId, ...extra });
const admin = async <R>(fn: (c: pg.Client) => Promise<R>): Promise<R> => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
};
const withPassword = (u: string, password: string) => {
  const x = new URL(u);
  x.password = password;
  return x.toString();
};
const passwordOf = (u: string) => decodeURIComponent(new URL(u).password);

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe("the writer lease", () => {
  it("refuses a second writer in this process, and frees the session on close", async () => {
    const sid = uniqueSession();
    const first = await open(sid);
    await expect(open(sid)).rejects.toBeInstanceOf(SessionLockedError);
    await expect(open(sid)).rejects.toThrow(new RegExp(`process ${process.pid}`));
    await first.close();
    const second = await open(sid);
    await second.close();
  });

  it("refuses a second writer while another process writes, and the writer's SIGKILL frees the session", async () => {
    const storeModule = compileStoreForChildren();
    const child = join(fileURLToPath(new URL(".", import.meta.url)), "fixtures/crash-child.mjs");
    const sid = uniqueSession("lease");
    const ackFile = join(tempDir(), "acks");
    const p = spawn(process.execPath, [child, storeModule, "postgres", `${url}#${schema}#${sid}`, "7", "process", ackFile], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    p.stderr!.on("data", (d) => (stderr += d));
    try {
      await new Promise<void>((resolve, reject) => {
        p.stdout!.on("data", (d: Buffer) => d.includes("ready") && resolve());
        p.once("exit", () => reject(new Error(`child exited: ${stderr}`)));
      });
      const refused = await open(sid).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(SessionLockedError);
      expect(String((refused as Error).message)).toContain(`process ${p.pid}`);
      const live = (await listPostgresSessions(url, { schema })).find((s) => s.id === sid);
      expect(live?.live).toBe(true);
    } finally {
      p.kill("SIGKILL");
    }
    await new Promise((r) => p.once("exit", r));
    const t0 = Date.now();
    let store: Awaited<ReturnType<typeof openPostgresStore>>;
    for (;;) {
      try {
        store = await open(sid);
        break;
      } catch (e) {
        if (!(e instanceof SessionLockedError) || Date.now() - t0 > 2000) throw e;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(existsSync(ackFile)).toBe(true);
    await store.close();
  });
});

describe("faults at connect time: one line naming host and database, never the password", () => {
  const checkLine = (e: unknown, secret: string) => {
    expect(e).toBeInstanceOf(DatabaseError);
    const m = (e as Error).message;
    expect(m).not.toContain("\n");
    expect(m).not.toContain(secret);
    expect(m).toMatch(/PostgreSQL at 127\.0\.0\.1:\d+, database "/);
    return m;
  };

  it("an unreachable server", async () => {
    const port = await closedPort();
    const t0 = Date.now();
    const e = await openPostgresStore(`postgres://spool:hunter2-secret@127.0.0.1:${port}/spool`, { schema }).catch((x: unknown) => x);
    const m = checkLine(e, "hunter2-secret");
    expect((e as DatabaseError).code).toBe("SPOOL_STORE_DB_UNREACHABLE");
    expect(m).toContain(`127.0.0.1:${port}, database "spool"`);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it("wrong credentials", async () => {
    const e = await openPostgresStore(withPassword(url, "wrong-pass-123"), { schema }).catch((x: unknown) => x);
    const m = checkLine(e, "wrong-pass-123");
    expect((e as DatabaseError).code).toBe("SPOOL_STORE_DB_AUTH");
    expect(m).toMatch(/authentication failed for user "spool"/);
  });

  it("missing permissions", async () => {
    const role = `lim_${randomBytes(4).toString("hex")}`;
    await admin((c) => c.query(`CREATE ROLE ${role} LOGIN PASSWORD 'lim-secret-pw'`));
    const u = new URL(url);
    u.username = role;
    u.password = "lim-secret-pw";
    const e = await openPostgresStore(u.toString(), { schema: uniqueSchema("denied") }).catch((x: unknown) => x);
    const m = checkLine(e, "lim-secret-pw");
    expect((e as DatabaseError).code).toBe("SPOOL_STORE_DB_PERMISSION");
    expect(m).toContain(`user "${role}"`);
  });

  it("a database that does not exist", async () => {
    const u = new URL(url);
    u.pathname = "/no_such_db";
    const e = await openPostgresStore(u.toString(), { schema }).catch((x: unknown) => x);
    checkLine(e, passwordOf(url));
    expect((e as DatabaseError).code).toBe("SPOOL_STORE_DB_MISSING");
    expect((e as Error).message).toContain('database "no_such_db"');
  });

  it("sslmode=require against a server without TLS is refused the way pg refuses it", async () => {
    const e = await openPostgresStore(`${url}?sslmode=require`, { schema }).catch((x: unknown) => x);
    const m = checkLine(e, passwordOf(url));
    expect(m).toMatch(/does not support SSL/);
  });

  it("the PG* environment variables name the server when no URL is given", async () => {
    const u = new URL(url);
    const saved = { ...process.env };
    Object.assign(process.env, { PGHOST: u.hostname, PGPORT: u.port, PGUSER: u.username, PGPASSWORD: passwordOf(url), PGDATABASE: u.pathname.slice(1) });
    try {
      const s = await openPostgresStore(undefined, { schema, sessionId: uniqueSession("env") });
      expect(s.target.port).toBe(Number(u.port));
      await s.commit([setValue(value("k"), 1)]);
      await s.close();
    } finally {
      for (const k of ["PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE"]) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });
});

describe("connection lost mid-run (the test stops the server)", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await ownCluster();
  });
  afterAll(() => cluster?.stop());

  it("reconnects with backoff when the server comes back, and loses nothing", async () => {
    const events: ConnectionEvent[] = [];
    const sid = uniqueSession("outage");
    const s = await openPostgresStore(cluster.url, { schema, sessionId: sid, reconnectTimeoutMs: 20_000, onConnection: (e) => events.push(e) });
    for (let i = 0; i < 5; i++) await s.commit([appendList(list("t"), i)]);
    await cluster.halt();
    const during = Array.from({ length: 20 }, (_, i) => [s.commit([appendList(list("t"), 5 + i)]), s.commit([setValue(value("n", "", A), i)])]).flat();
    await new Promise((r) => setTimeout(r, 700));
    await cluster.start();
    await Promise.all(during);
    await s.commit([retireScope(A)]);
    expect(events.map((e) => e.type)).toContain("lost");
    expect(events.map((e) => e.type)).toContain("restored");
    await s.close();
    const re = await openPostgresStore(cluster.url, { schema, sessionId: sid });
    expect(re.readList(list<number>("t"), { limit: 100 }).elements.map((e) => e.value)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(re.get(value("n", "", A))).toBeUndefined();
    await re.close();
  });

  it("moves the session to a local JSONL log when the server stays down, and keeps going there", async () => {
    const events: ConnectionEvent[] = [];
    const sid = uniqueSession("down");
    const fallbackPath = join(tempDir(), sid, "session.jsonl");
    const s = await openPostgresStore(cluster.url, { schema, sessionId: sid, reconnectTimeoutMs: 1500, fallbackPath, onConnection: (e) => events.push(e) });
    await s.commit([setValue(value("before"), "db")]);
    await s.commit([appendList(list("out", "", A), "a0", "base")]);
    await cluster.halt();
    const t0 = Date.now();
    const r = await s.commit([appendList(list("out", "", A), "a1")]);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await s.commit([setValue(value("after"), "local")]);
    expect(s.fallback?.path).toBe(fallbackPath);
    const fb = events.find((e) => e.type === "fallback");
    expect(fb?.message).toMatch(/PostgreSQL at 127\.0\.0\.1:\d+, database "spool": the database stayed unreachable/);
    expect(fb?.message).not.toContain(cluster.password);
    await s.close();
    const local = await openJsonlStore(fallbackPath, { create: false });
    expect(local.get(value("before"))).toBe("db");
    expect(local.get(value("after"))).toBe("local");
    const out = local.readList(list("out", "", A)).elements;
    expect(out.map((e) => [e.value, e.tag])).toEqual([
      ["a0", "base"],
      ["a1", undefined],
    ]);
    expect(out[1]!.seq).toBe(r.seq);
    await local.close();
    await cluster.start();
  });
});

describe("spills in the database", () => {
  it("stores a spill in chunks with backpressure and reads it back byte-identical", async () => {
    const s = await open();
    const total = 3 * SPILL_CHUNK_BYTES + 12345;
    const source = randomBytes(total);
    const upload = createSpillUpload(s, "call-1.log");
    // One write far larger than the stream's buffer asks the producer to wait.
    expect(upload.write(source.subarray(0, 2 * SPILL_CHUNK_BYTES))).toBe(false);
    await new Promise((r) => upload.once("drain", r));
    let off = 2 * SPILL_CHUNK_BYTES;
    await pipeline(
      Readable.from(
        (function* () {
          while (off < total) {
            const n = Math.min(1 + ((off * 7919) % 70_000), total - off);
            yield source.subarray(off, off + n);
            off += n;
          }
        })(),
      ),
      upload,
    );
    const chunks: Buffer[] = [];
    for await (const c of openPostgresSpill(url, s.sessionId, "call-1.log", { schema })) chunks.push(c as Buffer);
    const back = Buffer.concat(chunks);
    expect(back.length).toBe(total);
    expect(back.equals(source)).toBe(true);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(SPILL_CHUNK_BYTES);
    await s.close();
  });

  it("refuses a spill past its size limit with one clear line", async () => {
    const s = await open();
    const up = createSpillUpload(s, "big.log", { maxBytes: 1000 });
    await expect(pipeline(Readable.from([randomBytes(600), randomBytes(600)]), up)).rejects.toThrow(/larger than 1000 bytes, the limit/);
    await s.close();
  });

  it("says '1 byte' when the limit is one byte", async () => {
    const s = await open();
    const up = createSpillUpload(s, "tiny.log", { maxBytes: 1 });
    await expect(pipeline(Readable.from([Buffer.from("ab")]), up)).rejects.toThrow(/is larger than 1 byte, the limit/);
    await s.close();
  });
});

describe("live following through LISTEN/NOTIFY", () => {
  it("tells a follower each commit's session and seq, and nothing else", async () => {
    const got: CommitNotice[] = [];
    const follower = await followPostgresCommits(url, (n) => got.push(n), { schema });
    const raw: string[] = [];
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on("notification", (m) => raw.push(m.payload ?? ""));
    await listener.query(`LISTEN ${schema}_commits`);
    const s = await open();
    const r1 = await s.commit([setValue(value("secret"), "data that must not travel")]);
    const r2 = await s.commit([appendList(list("t"), 1), appendList(list("t"), 2)]);
    const deadline = Date.now() + 5000;
    while (got.filter((n) => n.sessionId === s.sessionId).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(got.filter((n) => n.sessionId === s.sessionId)).toEqual([
      { sessionId: s.sessionId, seq: r1.seq },
      { sessionId: s.sessionId, seq: r2.seq + 1 },
    ]);
    const mine = raw.map((p) => JSON.parse(p) as Record<string, unknown>).filter((o) => o.s === s.sessionId);
    expect(mine.every((o) => Object.keys(o).sort().join() === "q,s")).toBe(true);
    expect(raw.join()).not.toContain("must not travel");
    await s.close();
    await follower.close();
    await listener.end();
  });
});

describe("following a live session", () => {
  it("reads the session whole once, then only what was committed since; a retired scope is dropped, a cleared list reads it whole", async () => {
    const s = await open();
    const t = list<number>("t");
    const inA = list<string>("out", "", A);
    await s.commit([setValue(value("v"), 1), appendList(t, 1)]);
    const f = await followPostgresSession(url, s.sessionId, { schema });
    const same = async () => {
      const fresh = await readPostgresSnapshot(url, s.sessionId, { schema });
      expect(f.snapshot.readList(t, { limit: 1000 })).toEqual(fresh.readList(t, { limit: 1000 }));
      expect(f.snapshot.readList(inA, { limit: 1000 })).toEqual(fresh.readList(inA, { limit: 1000 }));
      expect(f.snapshot.get(value("v"))).toEqual(fresh.get(value("v")));
      expect(f.snapshot.stats()).toEqual(fresh.stats());
    };
    expect(await f.poll()).toBe(true);
    await same();
    expect(await f.poll()).toBe(false);
    for (let i = 2; i <= 20; i++) {
      await s.commit([appendList(t, i), setValue(value("v"), i)]);
      await s.commit([appendList(inA, `line ${i}`)]);
      expect(await f.poll()).toBe(true);
      await same();
    }
    await s.commit([retireScope(A)]);
    expect(await f.poll()).toBe(true);
    await same();
    expect(f.reads).toBe(1);
    await s.commit([deleteList(t), appendList(t, 100)]);
    expect(await f.poll()).toBe(true);
    await same();
    expect(f.reads).toBe(2);
    await f.close();
    await s.close();
  });

  it("a connection the server dropped between polls is replaced within the next poll, nothing read twice", async () => {
    const s = await open();
    const t = list<number>("t");
    await s.commit([appendList(t, 1)]);
    const f = await followPostgresSession(url, s.sessionId, { schema, applicationName: "spool-follow-test" });
    expect(await f.poll()).toBe(true);
    const cut = await admin((c) => c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'spool-follow-test'"));
    expect(cut.rowCount).toBe(1);
    await s.commit([appendList(t, 2)]);
    expect(await f.poll()).toBe(true);
    expect(f.snapshot.readList(t, { limit: 10 })).toEqual((await readPostgresSnapshot(url, s.sessionId, { schema })).readList(t, { limit: 10 }));
    expect(f.snapshot.readList(t, { limit: 10 }).elements.map((e) => e.value)).toEqual([1, 2]);
    expect(f.reads).toBe(1);
    await f.close();
    await s.close();
  });

  it("a poll cut after it applied new rows still says the session changed when it runs again", async () => {
    const s = await open();
    const t = list<number>("t");
    await s.commit([appendList(t, 1)]);
    const f = await followPostgresSession(url, s.sessionId, { schema });
    expect(await f.poll()).toBe(true);
    await s.commit([appendList(t, 2)]);
    // The connection "drops" on the per-scope counts, after the new rows were read and applied.
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const query = proto.query;
    let armed = true;
    proto.query = function (this: unknown, ...args: unknown[]) {
      if (armed && typeof args[0] === "string" && args[0].includes("count(*)")) {
        armed = false;
        return Promise.reject(new Error("Connection terminated unexpectedly"));
      }
      return query.apply(this, args);
    };
    let changed: boolean;
    try {
      changed = await f.poll();
    } finally {
      proto.query = query;
    }
    expect(armed).toBe(false);
    expect(changed).toBe(true);
    expect(f.snapshot.readList(t, { limit: 10 }).elements.map((e) => e.value)).toEqual([1, 2]);
    await f.close();
    await s.close();
  });

  it("a session that does not exist is a clear error on the first poll", async () => {
    const f = await followPostgresSession(url, uniqueSession(), { schema });
    await expect(f.poll()).rejects.toThrow(/session ".*" .*not found|no such session|not found/i);
    await f.close();
  });
});

describe("retention, snapshots and the repository", () => {
  it("gc removes sessions idle past the cutoff and keeps live ones", async () => {
    const gs = uniqueSchema("gc");
    const mk = async (id: string) => {
      const st = await openPostgresStore(url, { schema: gs, sessionId: id });
      await st.commit([appendList(list("t"), "x".repeat(100))]);
      return st;
    };
    await (await mk("old-1")).close();
    await (await mk("old-2")).close();
    const liveOld = await mk("old-live");
    await (await mk("recent")).close();
    await admin((c) => c.query(`UPDATE ${gs}.sessions SET updated_at = now() - interval '10 days' WHERE session_id LIKE 'old-%'`));
    const dry = await gcPostgresSessions(url, { schema: gs, olderThanMs: 7 * 86_400_000, dryRun: true });
    expect(dry.removed.map((x) => x.id)).toEqual(["old-1", "old-2"]);
    expect((await listPostgresSessions(url, { schema: gs })).length).toBe(4);
    const res = await gcPostgresSessions(url, { schema: gs, olderThanMs: 7 * 86_400_000 });
    expect(res.removed.map((x) => x.id)).toEqual(["old-1", "old-2"]);
    expect(res.removed[0]!.bytes).toBeGreaterThan(100);
    expect(res.keptLive).toBe(1);
    expect((await listPostgresSessions(url, { schema: gs })).map((x) => x.id)).toEqual(["old-live", "recent"]);
    await liveOld.close();
  });

  it("a snapshot reads a session another writer holds open", async () => {
    const s = await open();
    await s.commit([setValue(value("k"), { a: 1 }), appendList(list("t"), "e", "base")]);
    const snap = await readPostgresSnapshot(url, s.sessionId, { schema });
    expect(snap.get(value("k"))).toEqual({ a: 1 });
    expect(snap.readList(list("t")).elements).toEqual([{ seq: 2, value: "e", tag: "base" }]);
    await s.close();
  });

  it("the repository creates, opens, lists, forks and deletes sessions", async () => {
    const rs = uniqueSchema("repo");
    const repo = openSessionRepo(tempDir(), { backend: "postgres", url, postgres: { schema: rs } });
    const a = await repo.create({ id: "alpha" });
    expect(a.file).not.toContain(passwordOf(url));
    await a.store.commit([setValue(value("k"), 1), appendList(list("t"), "x")]);
    await a.store.commit([appendList(list("e", "", A), 1)]);
    await expect(repo.create({ id: "alpha" })).rejects.toThrow(/already exists/);
    await expect(repo.delete("alpha")).rejects.toBeInstanceOf(SessionLockedError);
    await a.store.close();
    const f = await repo.fork("alpha", { id: "beta" });
    const b = await repo.open(f.id);
    expect(b.get(value("k"))).toBe(1);
    expect(b.readList(list("e", "", A)).elements).toEqual([]);
    expect((await b.commit([setValue(value("k"), 2)])).seq).toBe(4);
    await b.close();
    expect((await repo.list()).map((s) => s.id)).toEqual(["alpha", "beta"]);
    await repo.delete("alpha");
    expect((await repo.list()).map((s) => s.id)).toEqual(["beta"]);
    await expect(repo.open("alpha")).rejects.toThrow(/not found/);
  });

  it("keeps names PostgreSQL text cannot hold as they are (U+0000)", async () => {
    const sid = uniqueSession();
    const s = await open(sid);
    const odd = ephemeralScope("op\u0000\u0001x");
    await s.commit([setValue(value("n\u0000", "k\u0001\u0000"), "v"), appendList(list("l", "\u0000"), "e", "t\u0000")]);
    await s.commit([setValue(value("n", "k", odd), 1)]);
    await s.close();
    const re = await open(sid);
    expect(re.get(value("n\u0000", "k\u0001\u0000"))).toBe("v");
    expect(re.readList(list("l", "\u0000")).elements).toEqual([{ seq: 2, value: "e", tag: "t\u0000" }]);
    expect(re.get(value("n", "k", odd))).toBe(1);
    await re.close();
  });
});

describe("a network partition (a proxy that stops forwarding without closing anything)", () => {
  it("a commit that gets no answer counts as a lost connection: the store moves to its fallback instead of hanging", async () => {
    const { createServer: tcpServer, connect: tcpConnect } = await import("node:net");
    const target = new URL(url);
    let blackhole = false;
    const sockets = new Set<import("node:net").Socket>();
    const proxy = tcpServer((client) => {
      const upstream = tcpConnect(Number(target.port), target.hostname);
      sockets.add(client).add(upstream);
      client.on("data", (d) => !blackhole && upstream.write(d));
      upstream.on("data", (d) => !blackhole && client.write(d));
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const via = new URL(url);
    via.port = String((proxy.address() as { port: number }).port);
    const fallbackPath = join(tempDir(), "partition", "session.jsonl");
    const events: ConnectionEvent[] = [];
    const s = await openPostgresStore(via.toString(), {
      schema,
      sessionId: uniqueSession("partition"),
      queryTimeoutMs: 1000,
      connectTimeoutMs: 1000,
      reconnectTimeoutMs: 2000,
      fallbackPath,
      onConnection: (e) => events.push(e),
    });
    await s.commit([setValue(value("k"), "before")]);
    blackhole = true;
    const t0 = Date.now();
    await s.commit([setValue(value("k"), "during")]);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(s.fallback?.path).toBe(fallbackPath);
    expect(events.map((e) => e.type)).toEqual(["lost", "fallback"]);
    await s.close();
    const local = await openJsonlStore(fallbackPath, { create: false });
    expect(local.get(value("k"))).toBe("during");
    await local.close();
    for (const x of sockets) x.destroy();
    await new Promise((r) => proxy.close(r));
  }, 30_000);
});
