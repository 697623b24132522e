// `spool serve`'s listing of a database store: the heads and sizes it reads agree with the full
// listing, a session's size follows its changes (summed again once its writer stops), and a deleted
// session leaves the list. A real server (the shared test database).
import { afterAll, describe, expect, it } from "vitest";
import { databaseLister } from "../../src/cli/database-listing.js";
import {
  appendList,
  deletePostgresSession,
  listPostgresSessionHeads,
  list,
  listPostgresSessions,
  openPostgresStore,
  postgresSessionBytes,
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
    const target = { kind: "postgres" as const, url, shown: "pg" };
    const lister = databaseLister(tempDir("spool-dblist-"), target);
    const id = uniqueSession();
    const store = await openPostgresStore(url, { sessionId: id });
    await store.commit([setValue(STATUS, "running"), appendList(LOG, "first line of the log")]);

    const full = async () => (await listPostgresSessions(url)).find((s) => s.id === id)!;
    const heads = (await listPostgresSessionHeads(url)).find((h) => h.id === id)!;
    const before = await full();
    expect(heads).toEqual({ id, live: true, nextSeq: before.nextSeq });
    expect(await postgresSessionBytes(url, [id, "no-such-session"])).toEqual(new Map([[id, before.bytes]]));
    expect(before.bytes).toBeGreaterThan(0);

    const first = (await lister()).find((e) => e.id === id)!;
    expect(first).toMatchObject({ backend: "postgres", live: true, nextSeq: before.nextSeq, storedBytes: before.bytes, file: `pg#${id}` });

    for (let i = 0; i < 20; i++) await store.commit([appendList(LOG, `line ${i} `.repeat(40))]);
    const grown = await full();
    const looked = (await lister()).find((e) => e.id === id)!;
    // The next seq is always current; the size is summed again at most once a second while it is live.
    expect(looked.nextSeq).toBe(grown.nextSeq);
    expect([before.bytes, grown.bytes]).toContain(looked.storedBytes);

    await store.commit([setValue(STATUS, "done")]);
    await store.close();
    const ended = await full();
    expect(ended.live).toBe(false);
    expect((await lister()).find((e) => e.id === id)).toMatchObject({ live: false, nextSeq: ended.nextSeq, storedBytes: ended.bytes });

    await deletePostgresSession(url, id);
    expect((await lister()).some((e) => e.id === id)).toBe(false);
  });
});
