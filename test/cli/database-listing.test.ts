// `spool serve`'s listing of a database store: the heads and sizes its kept connection reads agree
// with the full listing, a session's size follows its changes (summed again once its writer stops, and
// shown once summed while it is quiet), a deleted session leaves the list, a connection the server
// dropped is replaced, and a row of another client's making is listed. A real server (the shared test
// database).
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { databaseLister } from "../../src/cli/database-listing.js";
import { watchSessions } from "../../src/cli/session-watch.js";
import type { SessionSummary } from "../../src/cli/session-view.js";
import { createStateHost } from "../../src/harness/index.js";
import {
  appendList,
  deletePostgresSession,
  list,
  listPostgresSessions,
  openPostgresCatalog,
  openPostgresStore,
  setValue,
  value,
} from "../../src/store/index.js";
import { stopTestDatabase, testDatabase, uniqueSession } from "../store/helpers/pg.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(async () => {
  removeTempDirs();
  await stopTestDatabase();
});

const LOG = list<string>("test", "log");
const STATUS = value<string>("test", "status");

describe("the database listing serve reads on every look", () => {
  it("heads and sizes agree with the full listing; a size follows its session; a deleted session leaves", async () => {
    const { url } = await testDatabase();
    const catalog = openPostgresCatalog(url);
    const lister = databaseLister(tempDir("spool-dblist-"), { kind: "postgres", url, shown: "pg" });
    try {
      const id = uniqueSession();
      const store = await openPostgresStore(url, { sessionId: id });
      await store.commit([setValue(STATUS, "running"), appendList(LOG, "first line of the log")]);

      const full = async () => (await listPostgresSessions(url)).find((s) => s.id === id)!;
      const before = await full();
      expect((await catalog.heads()).find((h) => h.id === id)).toEqual({ id, live: true, nextSeq: before.nextSeq });
      expect(await catalog.bytes([id, "no-such-session"])).toEqual(new Map([[id, before.bytes]]));
      expect(before.bytes).toBeGreaterThan(0);

      const first = (await lister.list()).find((e) => e.id === id)!;
      expect(first).toMatchObject({ backend: "postgres", live: true, nextSeq: before.nextSeq, storedBytes: before.bytes, file: `pg#${id}` });

      for (let i = 0; i < 20; i++) await store.commit([appendList(LOG, `line ${i} `.repeat(40))]);
      const grown = await full();
      const looked = (await lister.list()).find((e) => e.id === id)!;
      // The next seq is always current; the size is summed again at most once a second while it is live.
      expect(looked.nextSeq).toBe(grown.nextSeq);
      expect([before.bytes, grown.bytes]).toContain(looked.storedBytes);

      await store.commit([setValue(STATUS, "done")]);
      await store.close();
      const ended = await full();
      expect(ended.live).toBe(false);
      expect((await lister.list()).find((e) => e.id === id)).toMatchObject({ live: false, nextSeq: ended.nextSeq, storedBytes: ended.bytes });

      await deletePostgresSession(url, id);
      expect((await lister.list()).some((e) => e.id === id)).toBe(false);
    } finally {
      await lister.close();
      await catalog.close();
    }
  });

  it("a kept connection the server dropped is replaced within the same call", async () => {
    const { url } = await testDatabase();
    const catalog = openPostgresCatalog(url, { applicationName: "spool-catalog-test" });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const backends = async () =>
      (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = 'spool-catalog-test'")).rows.map((r) => r.pid);
    try {
      const id = uniqueSession();
      await (await openPostgresStore(url, { sessionId: id })).close();
      expect((await catalog.heads()).some((h) => h.id === id)).toBe(true);
      const [first] = await backends();
      await admin.query("SELECT pg_terminate_backend($1)", [first]);
      expect((await catalog.heads()).some((h) => h.id === id)).toBe(true);
      const now = await backends();
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(first);
      await deletePostgresSession(url, id);
    } finally {
      await catalog.close();
      await admin.end();
    }
    expect(await catalog.heads().catch((e: Error) => e.message)).toBe("this catalog is closed");
  });

  it("a live session that goes quiet shows the size summed after its last commit was read", async () => {
    const { url } = await testDatabase();
    const lister = databaseLister(tempDir("spool-dblist-"), { kind: "postgres", url, shown: "pg" });
    const host = createStateHost();
    const watch = watchSessions(host, { list: () => lister.list(), report: (line) => expect.fail(line) });
    const id = uniqueSession();
    const store = await openPostgresStore(url, { sessionId: id });
    try {
      await store.commit([appendList(LOG, "x")]);
      await watch.refresh();
      // A burst inside a second: its size is summed at most once, so the list may lag behind it.
      for (let i = 0; i < 10; i++) {
        await store.commit([appendList(LOG, "y".repeat(1000))]);
        await watch.refresh();
      }
      await new Promise((r) => setTimeout(r, 1200));
      await watch.refresh();
      const truth = (await listPostgresSessions(url)).find((x) => x.id === id)!.bytes;
      const shown = (host.get("sessions")!.value as { sessions: SessionSummary[] }).sessions.find((x) => x.id === id)!;
      expect(shown.bytes).toBe(truth);
    } finally {
      await store.close();
      await watch.close();
      await lister.close();
    }
  });

  it("a session id spool would not create (another client's row) is listed, not an error", async () => {
    const { url } = await testDatabase();
    const lister = databaseLister(tempDir("spool-dblist-"), { kind: "postgres", url, shown: "pg" });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const odd = `odd id ${uniqueSession()}`;
    try {
      await admin.query("INSERT INTO spool.sessions (session_id, next_seq) VALUES ($1, 1)", [odd]);
      expect((await lister.list()).find((e) => e.id === odd)).toMatchObject({ live: false, storedBytes: 0 });
    } finally {
      await admin.query("DELETE FROM spool.sessions WHERE session_id = $1", [odd]);
      await admin.end();
      await lister.close();
    }
  });
});
