// The SQLite backend (the built-in node:sqlite; no native build): every commit is one BEGIN
// IMMEDIATE transaction that reads and advances sessions.next_seq, so several connections (even
// processes) can share a file safely.
import { SpoolError } from "../../errors/index.js";
import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { dirname } from "node:path";
import type { Value, ValueList } from "../address.js";
import {
  CorruptSessionError,
  EmptySessionError,
  SessionExistsError,
  SessionIdError,
  SessionLogRemovedError,
  SessionNotFoundError,
  StoreClosedError,
  UnsupportedFormatError,
} from "../errors.js";
import { normalizeReadOptions } from "../read-options.js";
import { checkRegularFile } from "../regular-file.js";
import { scopeKey, type Scope } from "../scope.js";
import type { CommitResult, Durability, ListElement, ListPage, ListReadOptions, Store, StoreStats } from "../store.js";
import { prepareTransaction, type PreparedTransaction, type Write } from "../write.js";
import { warnSessionDirRemoved } from "../dir-removed.js";
import { ensureDir } from "../layout.js";
import { APPLICATION_ID, SCHEMA, SCHEMA_VERSION, SQL } from "./schema.js";
import { republishDatabase } from "./republish.js";

export interface SqliteStoreOptions {
  /** Default "process": WAL with synchronous=NORMAL. "os": synchronous=FULL (fsync per commit). */
  readonly durability?: Durability;
  /** Several sessions can share one database file (default "main"). */
  readonly sessionId?: string;
  /** Create the file / session row when missing (default true). */
  readonly create?: boolean;
}

type Db = DatabaseSync;

// Loaded on first use, not at import: Node 22 prints an ExperimentalWarning when node:sqlite loads,
// and a JSONL user should never see it.
// A Node without it (20, or 22 before 22.13 without --experimental-sqlite) gets one line saying so,
// before any file is made, rather than "Cannot read properties of undefined (reading 'DatabaseSync')".
const sqlite = (): typeof import("node:sqlite") => {
  const module =
    typeof process.getBuiltinModule === "function" ? (process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite") | undefined) : undefined;
  if (module === undefined) {
    throw new SpoolError(
      "SPOOL_STORE_NO_SQLITE",
      `the SQLite store needs Node's built-in node:sqlite, which Node ${process.version} does not have: run on Node 22.13 or newer, or use the JSONL store`,
    );
  }
  return module;
};

/** Throws SPOOL_STORE_NO_SQLITE now when this Node has no node:sqlite (openSessionRepo asks before making any directory). */
export function requireSqlite(): void {
  sqlite();
}

// SQLite result codes node:sqlite reports as `errcode` (primary code in the low byte).
const SQLITE_CORRUPT = 11;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;
const sqliteCode = (e: unknown): number => ((e as { errcode?: number }).errcode ?? -1) & 0xff;

/** Runs `fn` inside BEGIN IMMEDIATE … COMMIT (ROLLBACK on a throw). */
function immediate<T>(db: Db, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const out = fn();
    db.exec("COMMIT");
    return out;
  } catch (e) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw e;
  }
}

export const pragma = (db: Db, name: string): number => Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0] as number;

/** Journal and sync mode, per connection (WAL persists in the file once set). */
function setJournal(db: Db, durability: Durability): void {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${durability === "os" ? "FULL" : "NORMAL"}`);
}

/**
 * Opens a database file, creating or checking the schema. Nothing is written to a file before it
 * proves to be a spool store, or an empty one that `create` may give the schema: the WAL switch came
 * first and rewrote a foreign database's header before refusing it, and without `create` the schema
 * went into an empty file all the same (`spool sessions` wrote 16 KB into a 0-byte session.sqlite).
 */
export function openDatabase(path: string, durability: Durability, create: boolean): Db {
  if (path !== ":memory:") {
    if (create) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // Created private (0600) before SQLite opens it; SQLite gives its -wal and -shm files the same mode.
      if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
    } else if (!existsSync(path)) throw new SessionNotFoundError(path);
    checkRegularFile(path, "the database");
    // What a process that stopped between creating the file and committing the schema leaves.
    if (!create && statSync(path).size === 0) throw new EmptySessionError(path);
  }
  let db: Db;
  try {
    db = new (sqlite().DatabaseSync)(path);
  } catch (e) {
    if (sqliteCode(e) === SQLITE_CANTOPEN) throw new SessionNotFoundError(path);
    throw e;
  }
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const appId = pragma(db, "application_id");
    const version = pragma(db, "user_version");
    if (appId === 0 && version === 0) {
      const tables = db.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number };
      if (tables.n > 0) throw new CorruptSessionError(path, 0, "the database holds tables but is not a spool session store");
      if (!create) throw new EmptySessionError(path);
      setJournal(db, durability);
      immediate(db, () => {
        db.exec(SCHEMA);
        db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
        db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      });
    } else if (appId !== APPLICATION_ID) {
      throw new CorruptSessionError(path, 0, "the database is not a spool session store");
    } else if (version !== SCHEMA_VERSION) {
      throw new UnsupportedFormatError(path, version);
    } else {
      setJournal(db, durability);
    }
    return db;
  } catch (e) {
    db.close();
    const code = sqliteCode(e);
    if (code === SQLITE_NOTADB || code === SQLITE_CORRUPT) throw new CorruptSessionError(path, 0, (e as Error).message);
    throw e;
  }
}

interface Row {
  seq: number;
  value: string;
  tag: string | null;
}

/** What a store that writes needs to put its database back after it was deleted under it (republish.ts). */
export interface SqliteWriter {
  readonly path: string;
  readonly durability: Durability;
  /** Takes the session's lock again (its file went with the directory); throws if another process holds it. */
  readonly relock?: () => void;
}

type Statements = ReturnType<typeof prepareStatements>;

function prepareStatements(db: Db) {
  const p = <K extends keyof typeof SQL>(k: K) => db.prepare(SQL[k]);
  return {
    nextSeq: p("nextSeq"),
    setNextSeq: p("setNextSeq"),
    getValue: p("getValue"),
    setValue: p("setValue"),
    deleteValue: p("deleteValue"),
    append: p("append"),
    deleteList: p("deleteList"),
    retireValues: p("retireValues"),
    retireLists: p("retireLists"),
    pageAsc: p("pageAsc"),
    pageDesc: p("pageDesc"),
    countValues: p("countValues"),
    countLists: p("countLists"),
  };
}

/**
 * How often a commit checks that the database file still has its name (one stat of the path, compared
 * by device and inode: SQLite's descriptor is not ours to fstat, and a descriptor of our own on the file
 * would drop SQLite's POSIX locks when closed). The stat is ~3 µs here, the per-commit Date.now() ~55 ns
 * against 20–60 µs for a commit (no difference measurable over 20k commits). Checking late loses
 * nothing: commits to the deleted file are in the copy written back.
 */
const REMOVED_CHECK_MS = 1000;

/** The file at `path` as device and inode; undefined when no file has that name any more. */
function fileIdentity(path: string): { dev: number; ino: number } | undefined {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw e;
  }
}

export class SqliteStore implements Store {
  #db: Db;
  readonly #sid: string;
  #stmt: Statements;
  #closed = false;
  readonly #writer: SqliteWriter | undefined;
  /** The database file as opened (device and inode), to tell that it was deleted or replaced. */
  #identity: { dev: number; ino: number } | undefined;
  /** When the file was last checked for having been deleted under us (0: never). */
  #checkedAt = 0;
  /** Whether this store has committed (only such a store writes a deleted file back at close). */
  #committed = false;
  #failed: Error | undefined;
  /** False only after a failed write-back closed the old connection and opened no new one. */
  #dbOpen = true;

  /** Without `writer` (a reader: follow.ts) a deleted file is never written back. */
  constructor(db: Db, sessionId: string, writer?: SqliteWriter) {
    this.#db = db;
    this.#sid = sessionId;
    this.#stmt = prepareStatements(db);
    this.#writer = writer;
    if (writer !== undefined) this.#identity = fileIdentity(writer.path);
  }

  /** next_seq is read inside the IMMEDIATE transaction so other connections never get the same seq. */
  #run(tx: PreparedTransaction): number {
    const s = this.#stmt;
    const sid = this.#sid;
    return immediate(this.#db, () => {
      const seq = (s.nextSeq.get(sid) as { next_seq: number }).next_seq;
      const scope = tx.scope;
      for (let i = 0; i < tx.writes.length; i++) {
        const w = tx.writes[i]!;
        switch (w.op) {
          case "set":
            s.setValue.run(sid, scope, w.ns, w.key, seq + i, w.json);
            break;
          case "delete":
            s.deleteValue.run(sid, scope, w.ns, w.key);
            break;
          case "append":
            s.append.run(sid, scope, w.ns, w.key, seq + i, w.json, w.tag ?? null);
            break;
          case "clear":
            s.deleteList.run(sid, scope, w.ns, w.key);
            break;
          case "retire":
            s.retireValues.run(sid, w.scope);
            s.retireLists.run(sid, w.scope);
            break;
        }
      }
      s.setNextSeq.run(seq + tx.writes.length, sid);
      return seq;
    });
  }

  /**
   * A database deleted under the writer (`rm -rf .spool` while a run goes on) took every later commit
   * with it: SQLite wrote on into a file (and WAL) no name reached, and all of it was gone at close. It
   * is written back instead — the directory made again, the lock taken again, the database copied from
   * the open connection to its path (republish.ts) and opened there — and the user is warned once
   * (dir-removed.ts). A failure stops the store with SessionLogRemovedError, never a silent write into
   * the deleted file. A file that now stands at the path (another writer put it there) is not merged:
   * that too stops the store.
   */
  #republishIfRemoved(): void {
    const w = this.#writer;
    if (w === undefined || this.#identity === undefined) return;
    this.#checkedAt = Date.now();
    let now: ReturnType<typeof fileIdentity>;
    try {
      now = fileIdentity(w.path);
    } catch {
      return; // Cannot tell (EACCES on a directory above): the connection goes on; looked at again later.
    }
    if (now !== undefined && now.dev === this.#identity.dev && now.ino === this.#identity.ino) return;
    try {
      if (now !== undefined) throw new Error(`another file now stands at ${w.path}`);
      ensureDir(dirname(w.path));
      w.relock?.();
      republishDatabase(this.#db, w.path, () => {
        this.#db.close();
        this.#dbOpen = false;
      });
    } catch (e) {
      this.#failed = e instanceof SessionLogRemovedError ? e : new SessionLogRemovedError(w.path, e);
      throw this.#failed;
    }
    try {
      const db = openDatabase(w.path, w.durability, false);
      this.#db = db;
      this.#dbOpen = true;
      this.#stmt = prepareStatements(db);
      this.#identity = fileIdentity(w.path);
    } catch (e) {
      this.#failed = new SessionLogRemovedError(w.path, e);
      throw this.#failed;
    }
    warnSessionDirRemoved(dirname(w.path));
  }

  commit<Sc extends Scope>(writes: readonly Write<Sc>[]): Promise<CommitResult> {
    try {
      if (this.#closed) throw new StoreClosedError("commit");
      if (this.#failed !== undefined) throw this.#failed;
      const tx = prepareTransaction(writes);
      if (Date.now() - this.#checkedAt >= REMOVED_CHECK_MS) this.#republishIfRemoved();
      this.#committed = true;
      return Promise.resolve({ seq: this.#run(tx) });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #checkOpen(what: string): void {
    if (this.#closed) throw new StoreClosedError(what);
    // Failed while writing the file back, after the old connection was closed: nothing left to read.
    if (!this.#dbOpen) throw this.#failed;
  }

  get<T>(address: Value<T, Scope>): T | undefined {
    this.#checkOpen("read");
    const row = this.#stmt.getValue.get(this.#sid, scopeKey(address.scope), address.namespace, address.key) as { value: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.value) as T);
  }

  readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T> {
    this.#checkOpen("read");
    const o = normalizeReadOptions(options);
    const stmt = o.desc ? this.#stmt.pageDesc : this.#stmt.pageAsc;
    const bound = o.cursor ?? (o.desc ? Number.MAX_SAFE_INTEGER : 0);
    const elements: ListElement<T>[] = [];
    let stopped = false;
    let more = false;
    // Fetch one row past the page to know whether a cursor is due; the tag cut happens here, in
    // TypeScript, so the query keeps its primary-key plan.
    for (const row of stmt.iterate(
      this.#sid,
      scopeKey(address.scope),
      address.namespace,
      address.key,
      bound,
      o.limit + 1,
    ) as Iterable<unknown> as Iterable<Row>) {
      if (stopped || elements.length === o.limit) {
        more = true;
        break;
      }
      const value = JSON.parse(row.value) as T;
      elements.push(row.tag === null ? { seq: row.seq, value } : { seq: row.seq, value, tag: row.tag });
      if (row.tag !== null && row.tag === o.stopAtTag) stopped = true;
    }
    return more ? { elements, cursor: elements[elements.length - 1]!.seq } : { elements };
  }

  stats(): StoreStats {
    this.#checkOpen("read stats");
    const values = (this.#stmt.countValues.get(this.#sid) as { n: number }).n;
    const l = this.#stmt.countLists.get(this.#sid) as { lists: number; elements: number };
    return { values, lists: l.lists, listElements: l.elements };
  }

  sync(): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreClosedError("sync"));
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    // A FULL checkpoint fsyncs the WAL and the database file.
    this.#db.exec("PRAGMA wal_checkpoint(FULL)");
    return Promise.resolve();
  }

  /** A deletion is looked for once more at close by a store that committed (a reader never writes a file back). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    try {
      if (this.#failed === undefined && this.#committed) this.#republishIfRemoved();
    } catch (e) {
      return Promise.reject(e);
    } finally {
      if (this.#dbOpen) this.#db.close();
    }
    return Promise.resolve();
  }
}

export function ensureSession(db: Db, path: string, sessionId: string, create: boolean): void {
  const exists = db.prepare(SQL.nextSeq).get(sessionId) !== undefined;
  if (exists) return;
  if (!create) throw new SessionNotFoundError(`${path} session ${JSON.stringify(sessionId)}`);
  db.prepare("INSERT OR IGNORE INTO sessions (session_id, next_seq, created_at) VALUES (?, 1, ?)").run(sessionId, new Date().toISOString());
}

/**
 * Opens (or creates) one session in a SQLite database file. `relock` (the repository's single-writer
 * lock) is taken again when the file is written back after its directory was deleted.
 */
export async function openSqliteStore(path: string, options: SqliteStoreOptions = {}, relock?: () => void): Promise<Store> {
  const sessionId = options.sessionId ?? "main";
  if (typeof sessionId !== "string" || sessionId.length === 0) throw new SessionIdError(sessionId, "use a non-empty string");
  const create = options.create ?? true;
  const db = openDatabase(path, options.durability ?? "process", create);
  try {
    ensureSession(db, path, sessionId, create);
    const durability = options.durability ?? "process";
    return path === ":memory:" ? new SqliteStore(db, sessionId) : new SqliteStore(db, sessionId, { path, durability, ...(relock ? { relock } : {}) });
  } catch (e) {
    db.close();
    throw e;
  }
}

/** Copies the session-scoped rows (never scoped ones) of one session into a new session, possibly in another file. */
export function forkSqliteSession(from: { path: string; sessionId: string }, to: { path: string; sessionId: string }): void {
  const db = openDatabase(to.path, "process", true);
  try {
    const same = from.path === to.path;
    if (!same) db.prepare("ATTACH DATABASE ? AS src").run(from.path);
    const src = same ? "main" : "src";
    immediate(db, () => {
      const next = (db.prepare(`SELECT next_seq FROM ${src}.sessions WHERE session_id = ?`).get(from.sessionId) as { next_seq: number } | undefined)?.next_seq;
      if (next === undefined) throw new SessionNotFoundError(`${from.path} session ${JSON.stringify(from.sessionId)}`);
      if (db.prepare(SQL.nextSeq).get(to.sessionId) !== undefined) throw new SessionExistsError(`${to.path} session ${JSON.stringify(to.sessionId)}`);
      db.prepare(SQL.insertSession).run(to.sessionId, next, new Date().toISOString(), from.sessionId, next - 1);
      db.prepare(
        `INSERT INTO main.scalar_values SELECT ?, scope_id, namespace, key, seq, value FROM ${src}.scalar_values WHERE session_id = ? AND scope_id = ''`,
      ).run(to.sessionId, from.sessionId);
      db.prepare(
        `INSERT INTO main.list_values SELECT ?, scope_id, namespace, key, seq, value, tag FROM ${src}.list_values WHERE session_id = ? AND scope_id = ''`,
      ).run(to.sessionId, from.sessionId);
    });
    if (!same) db.prepare("DETACH DATABASE src").run();
  } finally {
    db.close();
  }
}

/** Removes a session and every one of its scopes from a shared database file. */
export function deleteSqliteSession(path: string, sessionId: string): void {
  const db = openDatabase(path, "process", false);
  try {
    immediate(db, () => {
      db.prepare("DELETE FROM scalar_values WHERE session_id = ?").run(sessionId);
      db.prepare("DELETE FROM list_values WHERE session_id = ?").run(sessionId);
      db.prepare("DELETE FROM sessions WHERE session_id = ?").run(sessionId);
    });
  } finally {
    db.close();
  }
}
