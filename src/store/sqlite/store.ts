// The SQLite backend (better-sqlite3): every commit is one BEGIN IMMEDIATE transaction that reads
// and advances sessions.next_seq, so several connections (even processes) can share a file safely.
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Value, ValueList } from "../address.js";
import { CorruptSessionError, SessionExistsError, SessionIdError, SessionNotFoundError, StoreClosedError, UnsupportedFormatError } from "../errors.js";
import { normalizeReadOptions } from "../read-options.js";
import { scopeKey, type Scope } from "../scope.js";
import type { CommitResult, Durability, ListElement, ListPage, ListReadOptions, Store, StoreStats } from "../store.js";
import { prepareTransaction, type PreparedTransaction, type Write } from "../write.js";
import { APPLICATION_ID, SCHEMA, SCHEMA_VERSION, SQL } from "./schema.js";

export interface SqliteStoreOptions {
  /** Default "process": WAL with synchronous=NORMAL. "os": synchronous=FULL (fsync per commit). */
  readonly durability?: Durability;
  /** Several sessions can share one database file (default "main"). */
  readonly sessionId?: string;
  /** Create the file / session row when missing (default true). */
  readonly create?: boolean;
}

type Db = Database.Database;

/** Opens a database file, creating or checking the schema. */
export function openDatabase(path: string, durability: Durability, create: boolean): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  let db: Db;
  try {
    db = new Database(path, { fileMustExist: !create });
  } catch (e) {
    if ((e as { code?: string }).code === "SQLITE_CANTOPEN") throw new SessionNotFoundError(path);
    throw e;
  }
  try {
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${durability === "os" ? "FULL" : "NORMAL"}`);
    const appId = db.pragma("application_id", { simple: true }) as number;
    const version = db.pragma("user_version", { simple: true }) as number;
    if (appId === 0 && version === 0) {
      const tables = db.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number };
      if (tables.n > 0) throw new CorruptSessionError(path, 0, "the database holds tables but is not a spool session store");
      db.transaction(() => {
        db.exec(SCHEMA);
        db.pragma(`application_id = ${APPLICATION_ID}`);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }).immediate();
    } else if (appId !== APPLICATION_ID) {
      throw new CorruptSessionError(path, 0, "the database is not a spool session store");
    } else if (version !== SCHEMA_VERSION) {
      throw new UnsupportedFormatError(path, version);
    }
    return db;
  } catch (e) {
    db.close();
    const code = (e as { code?: string }).code;
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") throw new CorruptSessionError(path, 0, (e as Error).message);
    throw e;
  }
}

interface Row {
  seq: number;
  value: string;
  tag: string | null;
}

class SqliteStore implements Store {
  readonly #db: Db;
  readonly #sid: string;
  readonly #run: (tx: PreparedTransaction) => number;
  readonly #stmt;
  #closed = false;

  constructor(db: Db, sessionId: string) {
    this.#db = db;
    this.#sid = sessionId;
    const p = <K extends keyof typeof SQL>(k: K) => db.prepare(SQL[k]);
    this.#stmt = {
      nextSeq: p("nextSeq").pluck(),
      setNextSeq: p("setNextSeq"),
      getValue: p("getValue").pluck(),
      setValue: p("setValue"),
      deleteValue: p("deleteValue"),
      append: p("append"),
      deleteList: p("deleteList"),
      retireValues: p("retireValues"),
      retireLists: p("retireLists"),
      pageAsc: p("pageAsc"),
      pageDesc: p("pageDesc"),
      countValues: p("countValues").pluck(),
      countLists: p("countLists"),
    };
    const s = this.#stmt;
    const sid = this.#sid;
    // next_seq is read inside the IMMEDIATE transaction so other connections never get the same seq.
    const run = db.transaction((tx: PreparedTransaction): number => {
      const seq = s.nextSeq.get(sid) as number;
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
    this.#run = (tx) => run.immediate(tx);
  }

  commit<Sc extends Scope>(writes: readonly Write<Sc>[]): Promise<CommitResult> {
    try {
      if (this.#closed) throw new StoreClosedError("commit");
      const tx = prepareTransaction(writes);
      return Promise.resolve({ seq: this.#run(tx) });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #checkOpen(what: string): void {
    if (this.#closed) throw new StoreClosedError(what);
  }

  get<T>(address: Value<T, Scope>): T | undefined {
    this.#checkOpen("read");
    const json = this.#stmt.getValue.get(this.#sid, scopeKey(address.scope), address.namespace, address.key) as string | undefined;
    return json === undefined ? undefined : (JSON.parse(json) as T);
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
    for (const row of stmt.iterate(this.#sid, scopeKey(address.scope), address.namespace, address.key, bound, o.limit + 1) as IterableIterator<Row>) {
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
    const values = this.#stmt.countValues.get(this.#sid) as number;
    const l = this.#stmt.countLists.get(this.#sid) as { lists: number; elements: number };
    return { values, lists: l.lists, listElements: l.elements };
  }

  sync(): Promise<void> {
    if (this.#closed) return Promise.reject(new StoreClosedError("sync"));
    // A FULL checkpoint fsyncs the WAL and the database file.
    this.#db.pragma("wal_checkpoint(FULL)");
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#db.close();
    }
    return Promise.resolve();
  }
}

function ensureSession(db: Db, path: string, sessionId: string, create: boolean): void {
  const exists = db.prepare(SQL.nextSeq).get(sessionId) !== undefined;
  if (exists) return;
  if (!create) throw new SessionNotFoundError(`${path} session ${JSON.stringify(sessionId)}`);
  db.prepare("INSERT OR IGNORE INTO sessions (session_id, next_seq, created_at) VALUES (?, 1, ?)").run(sessionId, new Date().toISOString());
}

/** Opens (or creates) one session in a SQLite database file. */
export async function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Promise<Store> {
  const sessionId = options.sessionId ?? "main";
  if (typeof sessionId !== "string" || sessionId.length === 0) throw new SessionIdError(sessionId, "use a non-empty string");
  const create = options.create ?? true;
  const db = openDatabase(path, options.durability ?? "process", create);
  try {
    ensureSession(db, path, sessionId, create);
    return new SqliteStore(db, sessionId);
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
    db.transaction(() => {
      const next = db.prepare(`SELECT next_seq FROM ${src}.sessions WHERE session_id = ?`).pluck().get(from.sessionId) as number | undefined;
      if (next === undefined) throw new SessionNotFoundError(`${from.path} session ${JSON.stringify(from.sessionId)}`);
      if (db.prepare(SQL.nextSeq).get(to.sessionId) !== undefined) throw new SessionExistsError(`${to.path} session ${JSON.stringify(to.sessionId)}`);
      db.prepare(SQL.insertSession).run(to.sessionId, next, new Date().toISOString(), from.sessionId, next - 1);
      db.prepare(
        `INSERT INTO main.scalar_values SELECT ?, scope_id, namespace, key, seq, value FROM ${src}.scalar_values WHERE session_id = ? AND scope_id = ''`,
      ).run(to.sessionId, from.sessionId);
      db.prepare(
        `INSERT INTO main.list_values SELECT ?, scope_id, namespace, key, seq, value, tag FROM ${src}.list_values WHERE session_id = ? AND scope_id = ''`,
      ).run(to.sessionId, from.sessionId);
    }).immediate();
    if (!same) db.prepare("DETACH DATABASE src").run();
  } finally {
    db.close();
  }
}

/** Removes a session and every one of its scopes from a shared database file. */
export function deleteSqliteSession(path: string, sessionId: string): void {
  const db = openDatabase(path, "process", false);
  try {
    db.transaction(() => {
      db.prepare("DELETE FROM scalar_values WHERE session_id = ?").run(sessionId);
      db.prepare("DELETE FROM list_values WHERE session_id = ?").run(sessionId);
      db.prepare("DELETE FROM sessions WHERE session_id = ?").run(sessionId);
    }).immediate();
  } finally {
    db.close();
  }
}
