// A SQLite session whose directory (or database file) is deleted while the store writes it (a model's
// `rm -rf .spool`, or the user cleaning up mid-run). Before, SQLite went on writing into the deleted
// file and its deleted WAL: every commit, before and after the deletion, was gone once the store
// closed. Now the database is written back from the open connection and reopened at its path, the
// session's lock is taken again, and a reopen reads everything committed. Real files and, for the
// kill, a real writer process.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { appendList, deleteValue, ephemeralScope, list, openSessionRepo, openSqliteStore, setValue, value, type Store } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";
import { compileStoreForChildren } from "./helpers/compile-store.js";
import { until } from "../support/until.js";

let storeModule = "";
beforeAll(() => {
  storeModule = compileStoreForChildren();
});
afterAll(removeTempDirs);
afterEach(() => {
  vi.useRealTimers();
});

const note = value<string>("notes", "n");
const op = ephemeralScope("op:long");
const out = list<string>("tool_output", "call_1", op);
const calls = list<string>("calls", "all");
const later = () => vi.setSystemTime(Date.now() + 2000);

/** Collects SPOOL_SESSION_DIR_REMOVED warnings while `fn` runs (and one tick after, when they are emitted). */
async function warningsDuring(fn: () => Promise<void>): Promise<string[]> {
  const warned: string[] = [];
  const onWarning = (w: Error & { code?: string }) => void (w.code === "SPOOL_SESSION_DIR_REMOVED" && warned.push(w.message));
  process.on("warning", onWarning);
  try {
    await fn();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off("warning", onWarning);
  }
  return warned;
}

describe("a SQLite session deleted under its writer", () => {
  it("is written back whole: what was committed before and after `rm -rf` of the root reads back on reopen; the lock is taken again; one warning", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const root = join(tempDir(), ".spool", "sessions");
    const repo = openSessionRepo(root, { backend: "sqlite" });
    const file = join(root, "s1", "session.sqlite");
    let store: Store | undefined;
    const warned = await warningsDuring(async () => {
      store = await repo.open("s1", { create: true });
      await store.commit([setValue(note, "before")]);
      await store.commit([appendList(calls, "call-0")]);
      await store.commit([appendList(out, "chunk-1 ", "base")]);
      rmSync(join(root, ".."), { recursive: true, force: true });
      // Committed to the deleted file, before the writer looks again: copied with it.
      await store.commit([appendList(calls, "call-1"), setValue(value<string>("notes", "m"), "in between")]);
      later();
      await store.commit([appendList(out, "chunk-2 ")]);
      expect(existsSync(file)).toBe(true);
      // The lock went with the directory and names this process again; another opener is refused.
      expect(JSON.parse(readFileSync(`${file}.lock`, "utf8")).pid).toBe(process.pid);
      await expect(repo.open("s1")).rejects.toMatchObject({ code: "SPOOL_STORE_LOCKED" });
      await store.commit([appendList(calls, "call-2"), setValue(note, "after")]);
      expect(store.get(note)).toBe("after");
      expect(store.readList(calls).elements.map((e) => e.value)).toEqual(["call-0", "call-1", "call-2"]);
      await store.close();
    });
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain(join(root, "s1"));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(root, "s1")).filter((n) => n.endsWith(".tmp") || n.endsWith(".lock"))).toEqual([]);

    const reopened = await repo.open("s1");
    expect(reopened.get(note)).toBe("after");
    expect(reopened.get(value<string>("notes", "m"))).toBe("in between");
    expect(reopened.readList(calls).elements.map((e) => e.value)).toEqual(["call-0", "call-1", "call-2"]);
    expect(reopened.readList(out).elements.map((e) => e.value)).toEqual(["chunk-1 ", "chunk-2 "]);
    // Seqs go on from where the session was: nothing reused.
    const { seq } = await reopened.commit([setValue(note, "next")]);
    expect(seq).toBe(9);
    await reopened.close();
  });

  it("a deletion found only at close is written back then, with the commits made since", async () => {
    const dir = join(tempDir(), "s2");
    const path = join(dir, "session.sqlite");
    const store = await openSqliteStore(path, { sessionId: "s2" });
    await store.commit([setValue(note, "first")]);
    rmSync(dir, { recursive: true, force: true });
    await store.commit([setValue(note, "last")]);
    await store.close();
    const reopened = await openSqliteStore(path, { sessionId: "s2", create: false });
    expect(reopened.get(note)).toBe("last");
    await reopened.close();
  });

  it("only the database file removed while a reader in another process has it open: the old WAL left at the path is not read as the copy's", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const dir = join(tempDir(), "s3");
    const path = join(dir, "session.sqlite");
    const store = await openSqliteStore(path, { sessionId: "s3" });
    // Large values interleaved with the calls, deleted below: the copy (VACUUM INTO) lays the calls'
    // pages out anew, so no page the old WAL holds fits it.
    const junk = (i: number) => value<string>("junk", `k${i}`);
    for (let i = 0; i < 400; i++) {
      await store.commit([setValue(junk(i), "x".repeat(3000))]);
      await store.commit([appendList(calls, `call-${i}`)]);
    }
    // Everything moved into the database file and the WAL started afresh, so the WAL the reader keeps
    // holds only what changes from here on, at the old page numbers.
    const side = new DatabaseSync(path);
    side.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    side.close();
    // A reader in another process (a `spool sessions --follow`): the writer's close is then not the
    // last one, so SQLite leaves the old -wal and -shm at the path. Opened over them, the copy read
    // "database disk image is malformed", and the writer went on committing into it without an error.
    // (A reader in this process does not show it: POSIX locks do not exclude each other in one process.)
    const reader = spawn(
      process.execPath,
      [
        "-e",
        `const db = new (require("node:sqlite").DatabaseSync)(process.argv[1]); db.prepare("SELECT count(*) FROM list_values").get(); console.log("open"); setTimeout(() => {}, 30000);`,
        path,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      let said = "";
      reader.stdout.on("data", (d: Buffer) => (said += d));
      await until(() => said.includes("open"), "the reader to open the database", 15_000);
      await store.commit(Array.from({ length: 400 }, (_, i) => deleteValue(junk(i))));
      rmSync(path);
      for (let i = 400; i < 450; i++) await store.commit([appendList(calls, `call-${i}`)]);
      later();
      for (let i = 450; i < 460; i++) await store.commit([appendList(calls, `call-${i}`)]);
      await store.close();
      const reopened = await openSqliteStore(path, { sessionId: "s3", create: false });
      expect(reopened.readList(calls, { limit: 1000 }).elements.map((e) => e.value)).toEqual(Array.from({ length: 460 }, (_, i) => `call-${i}`));
      expect(reopened.stats().values).toBe(0);
      await reopened.close();
    } finally {
      reader.kill("SIGKILL");
    }
  });

  it("when it cannot be written back (a file stands where the directory was) the store stops with SPOOL_STORE_LOG_REMOVED, for this write and every later one", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const dir = join(tempDir(), "s4");
    const store = await openSqliteStore(join(dir, "session.sqlite"), { sessionId: "s4" });
    await store.commit([setValue(note, "first")]);
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory");
    later();
    const failed = store.commit([setValue(note, "lost")]);
    await expect(failed).rejects.toMatchObject({ code: "SPOOL_STORE_LOG_REMOVED" });
    await expect(failed).rejects.toThrow(/session\.sqlite was deleted while the session was writing it.*start a new session/);
    await expect(store.commit([setValue(note, "later")])).rejects.toMatchObject({ code: "SPOOL_STORE_LOG_REMOVED" });
    // Still readable: the failure came before the old connection was closed.
    expect(store.get(note)).toBe("first");
    await store.close();
  });

  it("another database put at the path meanwhile is not merged into or overwritten: SPOOL_STORE_LOG_REMOVED", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const dir = join(tempDir(), "s5");
    const path = join(dir, "session.sqlite");
    const store = await openSqliteStore(path, { sessionId: "s5" });
    await store.commit([setValue(note, "mine")]);
    rmSync(dir, { recursive: true, force: true });
    const other = await openSqliteStore(path, { sessionId: "s5" });
    await other.commit([setValue(note, "theirs")]);
    await other.close();
    later();
    await expect(store.commit([setValue(note, "lost")])).rejects.toMatchObject({ code: "SPOOL_STORE_LOG_REMOVED" });
    await store.close();
    const reopened = await openSqliteStore(path, { sessionId: "s5", create: false });
    expect(reopened.get(note)).toBe("theirs");
    await reopened.close();
  });

  it("found only at close, a database that cannot be written back fails the close with SPOOL_STORE_LOG_REMOVED", async () => {
    const dir = join(tempDir(), "s6");
    const store = await openSqliteStore(join(dir, "session.sqlite"), { sessionId: "s6" });
    await store.commit([setValue(note, "first")]);
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory");
    await store.commit([setValue(note, "into the deleted file")]);
    await expect(store.close()).rejects.toMatchObject({ code: "SPOOL_STORE_LOG_REMOVED" });
  });

  it("a writer process SIGKILLed after the write-back: every acknowledged commit, before and after the deletion, is in the file", async () => {
    const root = join(tempDir(), ".spool", "sessions");
    const child = spawn(process.execPath, [join(import.meta.dirname, "fixtures/sqlite-removed-child.mjs"), pathToFileURL(storeModule).href, root, "k1"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d));
    const exited = new Promise((r) => child.once("exit", r));
    try {
      await until(() => text.includes("ready"), "the writer to open the session", 15_000);
      rmSync(join(root, ".."), { recursive: true, force: true });
      child.stdin.write("go\n");
      const file = join(root, "k1", "session.sqlite");
      // The check runs at most once a second: wait for the write-back, then for commits made after it.
      await until(() => existsSync(file), "the database to be written back", 15_000);
      const ackedNow = () => [...text.matchAll(/acked (\d+)/g)].length;
      const atRepublish = ackedNow();
      await until(() => ackedNow() >= atRepublish + 10 || text.includes("failed"), "commits after the write-back", 15_000);
      child.kill("SIGKILL");
      await exited;
    } finally {
      child.kill("SIGKILL");
    }
    expect(text).not.toContain("failed");
    const acked = [...text.matchAll(/acked (\d+)/g)].map((m) => Number(m[1]));
    expect(acked.length).toBeGreaterThan(10);
    const reopened = await openSessionRepo(root, { backend: "sqlite" }).open("k1");
    const items = reopened.readList(list<string>("t", "items"), { limit: 10_000 }).elements.map((e) => e.value);
    await reopened.close();
    const expected = [...Array.from({ length: 5 }, (_, i) => `before-${i}`), ...acked.map((n) => `after-${n}`)];
    // The commit in flight at the kill may be there too, never anything else.
    expect(items.slice(0, expected.length)).toEqual(expected);
    expect(items.length - expected.length).toBeLessThanOrEqual(1);
  }, 60_000);
});
