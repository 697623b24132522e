// SQLite focused tests: schema, atomic retirement, rollback, next_seq, query
// plans, shared-container isolation, forks and deletion.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import {
  appendList,
  CorruptSessionError,
  EmptySessionError,
  ephemeralScope,
  list,
  openSqliteStore,
  retireScope,
  setValue,
  value,
} from "../../src/store/index.js";
import { SQL } from "../../src/store/sqlite/schema.js";
import { deleteSqliteSession, forkSqliteSession } from "../../src/store/sqlite/store.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);

const A = ephemeralScope("op:A");
const dbPath = () => join(tempDir(), "session.sqlite");
const raw = (path: string) => new DatabaseSync(path);

describe("SQLite backend", () => {
  it("has scope_id in both tables and keeps untagged list rows' tag NULL", async () => {
    const path = dbPath();
    const store = await openSqliteStore(path);
    await store.commit([appendList(list("l", "", A), "x"), appendList(list("l", "", A), "y", "base")]);
    await store.close();
    const db = raw(path);
    for (const t of ["scalar_values", "list_values"]) {
      const cols = db.prepare(`PRAGMA table_info(${t})`).all() as { name: string; notnull: number; pk: number }[];
      expect(cols.find((c) => c.name === "scope_id")).toMatchObject({ notnull: 1 });
      expect(cols.find((c) => c.name === "scope_id")!.pk).toBeGreaterThan(0);
    }
    const tag = (db.prepare("PRAGMA table_info(list_values)").all() as { name: string; notnull: number }[]).find((c) => c.name === "tag");
    expect(tag).toMatchObject({ notnull: 0 });
    expect(db.prepare("SELECT scope_id, tag FROM list_values ORDER BY seq").all()).toEqual([
      { scope_id: "op:A", tag: null },
      { scope_id: "op:A", tag: "base" },
    ]);
    db.close();
  });

  it("deletes a scope's rows in the same transaction as the terminal session write, and next_seq advances", async () => {
    const path = dbPath();
    const store = await openSqliteStore(path);
    await store.commit([setValue(value("memo", "", A), 1), appendList(list("out", "", A), "x")]);
    const r = await store.commit([setValue(value("op"), "done"), retireScope(A)]);
    const db = raw(path);
    expect(db.prepare("SELECT count(*) AS n FROM scalar_values WHERE scope_id = 'op:A'").get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT count(*) AS n FROM list_values WHERE scope_id = 'op:A'").get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT value FROM scalar_values WHERE scope_id = '' AND namespace = 'op'").get()).toEqual({ value: '"done"' });
    expect(db.prepare("SELECT next_seq FROM sessions").get()).toEqual({ next_seq: r.seq + 2 });
    await store.commit([retireScope(ephemeralScope("absent"))]);
    expect(db.prepare("SELECT next_seq FROM sessions").get()).toEqual({ next_seq: r.seq + 3 });
    db.close();
    await store.close();
  });

  it("a forced failure inside the transaction rolls back the retirement and its sibling writes", async () => {
    const path = dbPath();
    const store = await openSqliteStore(path);
    await store.commit([appendList(list("out", "", A), "kept")]);
    const db = raw(path);
    db.exec("CREATE TRIGGER boom BEFORE INSERT ON scalar_values WHEN NEW.namespace = 'boom' BEGIN SELECT RAISE(ABORT, 'forced failure'); END");
    const before = db.prepare("SELECT next_seq FROM sessions").get();
    await expect(store.commit([setValue(value("first"), 1), retireScope(A), setValue(value("boom"), 2)])).rejects.toThrow(/forced failure/);
    expect(store.get(value("first"))).toBeUndefined();
    expect(store.readList(list("out", "", A)).elements.map((e) => e.value)).toEqual(["kept"]);
    expect(db.prepare("SELECT next_seq FROM sessions").get()).toEqual(before);
    db.close();
    await store.close();
  });

  it("reuse after retirement recreates rows with fresh seqs", async () => {
    const path = dbPath();
    const store = await openSqliteStore(path);
    await store.commit([appendList(list("out", "", A), "old")]);
    const r = await store.commit([retireScope(A)]);
    await store.commit([appendList(list("out", "", A), "new")]);
    expect(store.readList(list("out", "", A)).elements).toEqual([{ seq: r.seq + 1, value: "new" }]);
    await store.close();
  });

  it("pages lists on the scoped primary key with no temp b-tree, in both orders", async () => {
    const path = dbPath();
    await (await openSqliteStore(path)).close();
    const db = raw(path);
    for (const sql of [SQL.pageAsc, SQL.pageDesc]) {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all("s", "op", "ns", "k", 10, 100) as { detail: string }[]).map((r) => r.detail).join("\n");
      expect(plan).toMatch(/SEARCH list_values USING PRIMARY KEY \(session_id=\? AND scope_id=\? AND namespace=\? AND key=\? AND seq[<>]\?\)/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
    const get = (db.prepare(`EXPLAIN QUERY PLAN ${SQL.getValue}`).all("s", "op", "ns", "k") as { detail: string }[]).map((r) => r.detail).join("\n");
    expect(get).toMatch(/SEARCH scalar_values USING PRIMARY KEY/);
    db.close();
  });

  it("isolates sessions and scopes sharing one database file", async () => {
    const path = dbPath();
    const s1 = await openSqliteStore(path, { sessionId: "one" });
    const s2 = await openSqliteStore(path, { sessionId: "two" });
    await s1.commit([setValue(value("k", "", A), "one-a"), appendList(list("l", "", A), "one")]);
    await s2.commit([setValue(value("k", "", A), "two-a"), appendList(list("l", "", A), "two")]);
    await s1.commit([retireScope(A)]);
    expect(s1.get(value("k", "", A))).toBeUndefined();
    expect(s2.get(value("k", "", A))).toBe("two-a");
    expect(s2.readList(list("l", "", A)).elements.map((e) => e.value)).toEqual(["two"]);
    // Each session has its own sequence space.
    expect((await s2.commit([setValue(value("x"), 1)])).seq).toBe(3);
    await s1.close();
    await s2.close();
  });

  it("two connections on one session never share a seq", async () => {
    const path = dbPath();
    const a = await openSqliteStore(path);
    const b = await openSqliteStore(path);
    const seqs: number[] = [];
    for (let i = 0; i < 20; i++) seqs.push((await (i % 2 ? a : b).commit([appendList(list("t"), i), appendList(list("t"), -i)])).seq);
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => 1 + 2 * i));
    expect(a.readList(list("t"), { limit: 100 }).elements).toHaveLength(40);
    await a.close();
    await b.close();
  });

  it("forks copy only session-scoped rows and deletion removes every scope", async () => {
    const path = dbPath();
    const s = await openSqliteStore(path, { sessionId: "src" });
    await s.commit([setValue(value("k"), "session"), appendList(list("t"), "entry")]);
    await s.commit([setValue(value("k", "", A), "scoped"), appendList(list("t", "", A), "frame")]);
    const last = await s.commit([setValue(value("k2"), 2)]);
    forkSqliteSession({ path, sessionId: "src" }, { path, sessionId: "fork" });
    const other = join(tempDir(), "other.sqlite");
    forkSqliteSession({ path, sessionId: "src" }, { path: other, sessionId: "fork2" });
    for (const [p, id] of [
      [path, "fork"],
      [other, "fork2"],
    ] as const) {
      const f = await openSqliteStore(p, { sessionId: id, create: false });
      expect(f.get(value("k"))).toBe("session");
      expect(f.readList(list("t")).elements.map((e) => e.value)).toEqual(["entry"]);
      expect(f.get(value("k", "", A))).toBeUndefined();
      expect(f.readList(list("t", "", A)).elements).toEqual([]);
      expect((await f.commit([setValue(value("x"), 1)])).seq).toBe(last.seq + 1);
      await f.close();
    }
    await s.close();
    deleteSqliteSession(path, "src");
    const db = raw(path);
    expect(
      db
        .prepare("SELECT DISTINCT session_id AS s FROM list_values ORDER BY 1")
        .all()
        .map((r) => r.s),
    ).toEqual(["fork"]);
    expect(db.prepare("SELECT count(*) AS n FROM scalar_values WHERE session_id = 'src'").get()).toEqual({ n: 0 });
    db.close();
    await expect(openSqliteStore(path, { sessionId: "src", create: false })).rejects.toMatchObject({ code: "SPOOL_STORE_NOT_FOUND" });
  });

  it("refuses a file that is not a spool database", async () => {
    const path = dbPath();
    writeFileSync(path, "this is not a database, just text that is long enough to have a header".repeat(20));
    await expect(openSqliteStore(path)).rejects.toBeInstanceOf(CorruptSessionError);
    const other = dbPath();
    const db = raw(other);
    db.exec("CREATE TABLE foreign_table (x)");
    db.close();
    await expect(openSqliteStore(other)).rejects.toThrow(/not a spool session store/);
  });

  it("a refused file is left byte for byte: a foreign database keeps its journal mode, an empty file opened without create stays empty", async () => {
    const foreign = dbPath();
    const db = raw(foreign);
    db.exec("CREATE TABLE foreign_table (x)");
    db.close();
    const before = readFileSync(foreign);
    for (const create of [true, false]) {
      await expect(openSqliteStore(foreign, { create })).rejects.toThrow(/not a spool session store/);
      // The WAL switch came first: bytes 18-19 of the header went from 1 (rollback journal) to 2.
      expect(readFileSync(foreign).equals(before), `create: ${create}`).toBe(true);
    }
    const empty = dbPath();
    writeFileSync(empty, "");
    for (const open of [() => openSqliteStore(empty, { create: false }), async () => deleteSqliteSession(empty, "main")]) {
      await expect(open()).rejects.toBeInstanceOf(EmptySessionError);
      expect(statSync(empty).size).toBe(0); // it got the whole schema (16 KB) and then "session not found"
    }
    expect(readdirSync(dirname(empty))).toEqual(["session.sqlite"]);
  });
});
