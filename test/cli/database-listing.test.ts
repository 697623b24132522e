// `spool serve`'s listing of a database store: the heads and sizes its kept connection reads agree
// with the full listing, a session's size follows its changes (summed again once its writer stops), a
// deleted session leaves the list, and a dropped connection fails one look and is opened again by the
// next. A real server (the shared test database).
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { databaseLister } from "../../src/cli/database-listing.js";
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

  it("a dropped connection fails one call with a database error; the next call opens a new one", async () => {
    const { url } = await testDatabase();
    const catalog = openPostgresCatalog(url, { applicationName: "spool-catalog-test" });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const id = uniqueSession();
      await (await openPostgresStore(url, { sessionId: id })).close();
      expect((await catalog.heads()).some((h) => h.id === id)).toBe(true);
      const cut = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'spool-catalog-test'");
      expect(cut.rowCount).toBe(1);
      const failed = await catalog.heads().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((failed as { code?: string }).code).toMatch(/^SPOOL_/);
      expect((await catalog.heads()).some((h) => h.id === id)).toBe(true);
      await deletePostgresSession(url, id);
    } finally {
      await catalog.close();
      await admin.end();
    }
  });
});
