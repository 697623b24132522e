// The PostgreSQL backend. One connection per open session holds the session's lease (an advisory
// lock) and carries its writes. The session's state is also kept in memory (loaded at open), because
// the Store contract reads synchronously; the writer is the only writer, so memory is authoritative.
// Commits are admitted synchronously (validated, seq allocated) and written by one serial pump that
// sends every queued commit as one transaction in one round trip (group commit).
// If the connection drops, the pump reconnects with backoff, takes the lease again and makes the
// database match memory; if the database stays down past `reconnectTimeoutMs`, the store either
// moves the session to a local JSONL log (`fallbackPath`) and carries on there, or fails. Memory is
// authoritative only while nobody else wrote: the lease ends with the connection, so another writer
// may have opened the session in between; the row's stamp (lease.ts) tells, and then the store stops.
import type { Client } from "pg";
import type { Value, ValueList } from "../address.js";
import { SessionExistsError, SessionLockedError, SessionNotFoundError, StoreClosedError } from "../errors.js";
import { checkSessionId } from "../layout.js";
import type { Scope } from "../scope.js";
import { ScopedState } from "../scoped-state.js";
import { getFromState, readListFromState } from "../state-reads.js";
import type { CommitResult, Durability, ListPage, ListReadOptions, Store, StoreStats } from "../store.js";
import { prepareTransaction, type Write } from "../write.js";
import { classify, connect, toDatabaseError, type ConnectOptions, type Connection } from "./connect.js";
import { DatabaseError, describeTarget, LeaseLostError, type DatabaseTarget } from "./errors.js";
import { toWrites, writeFallback } from "./fallback.js";
import { lockLease, newWriter, readStamp, stamp as stampOf, takeLease, type Stamp, type Writer } from "./lease.js";
import { backendOf, reclaimLease, type Backend } from "./reclaim-lease.js";
import { checkSchemaName, ensureSchema } from "./schema.js";
import { commitText, resyncText, type QueuedTx } from "./sql.js";
import { fromPgText, literal } from "./text.js";

export interface PostgresStoreOptions extends ConnectOptions {
  /** The session's id (default "main"). Many sessions share one database. */
  readonly sessionId?: string;
  /** Create the session when missing (default true). `"new"`: it must not exist yet. */
  readonly create?: boolean | "new";
  /** The PostgreSQL schema holding spool's tables (default "spool"); created on first use. */
  readonly schema?: string;
  /**
   * "process" (default): commits are acknowledged once the server has them (synchronous_commit off:
   * a server crash may lose the last few hundred ms). "os": once the server has flushed its WAL.
   */
  readonly durability?: Durability;
  /** How long the store keeps trying to reconnect before it gives up (default 30 000 ms). */
  readonly reconnectTimeoutMs?: number;
  /** When the database stays down: write the session here as a JSONL log and keep going locally. */
  readonly fallbackPath?: string;
  /** Told when the connection is lost, restored, or given up on (for a one-line notice). */
  readonly onConnection?: (event: ConnectionEvent) => void;
  /** Largest group of queued commits sent as one transaction (default 4 MiB of JSON text). */
  readonly maxBatchBytes?: number;
}

export type ConnectionEvent =
  | { readonly type: "lost"; readonly message: string }
  | { readonly type: "restored"; readonly message: string }
  | { readonly type: "fallback"; readonly message: string; readonly path: string }
  | { readonly type: "failed"; readonly message: string };

interface Pending extends QueuedTx {
  readonly bytes: number;
  readonly resolve: (r: CommitResult) => void;
  readonly reject: (e: unknown) => void;
}

/** Extra surface of a PostgreSQL-backed store (spills and identity); `store.kind === "postgres"`. */
export interface PostgresStore extends Store {
  readonly kind: "postgres";
  readonly sessionId: string;
  readonly schema: string;
  readonly target: DatabaseTarget;
  /** Set once the store gave up on the database and moved the session to `fallbackPath`. */
  readonly fallback: { readonly path: string; readonly error: DatabaseError } | undefined;
  /** Runs `task` on the session's connection, in order with commits (used for spill chunks). */
  withClient<R>(task: (client: Client) => Promise<R>): Promise<R>;
}

export { checkSessionId };

class PgStore implements PostgresStore {
  readonly kind = "postgres" as const;
  readonly sessionId: string;
  readonly schema: string;
  readonly target: DatabaseTarget;
  readonly #url: string | undefined;
  readonly #options: PostgresStoreOptions;
  readonly #state: ScopedState;
  /** The stamp this store put on the session's row when it opened it. */
  readonly #writer: Writer;
  /**
   * Every backend this store connected to (a few dozen bytes each, one per reconnect): a reconnect
   * that finds the lease held by one of them ends it (reclaim-lease.ts).
   */
  readonly #own: Backend[];
  #conn: Connection | undefined;
  #nextSeq: number;
  /** next_seq as of the last transaction the database acknowledged. */
  #durableNext: number;
  #queue: Pending[] = [];
  #tasks: (() => Promise<void>)[] = [];
  #pumping = false;
  #closing: Promise<void> | undefined;
  #failed: unknown;
  #local: Store | undefined;
  #fallback: PostgresStore["fallback"];
  #dirtySync = false;

  constructor(
    url: string | undefined,
    conn: Connection,
    sid: string,
    schema: string,
    state: ScopedState,
    nextSeq: number,
    writer: Writer,
    backend: Backend,
    options: PostgresStoreOptions,
  ) {
    this.#url = url;
    this.#writer = writer;
    this.#own = [backend];
    this.#conn = conn;
    this.target = conn.target;
    this.sessionId = sid;
    this.schema = schema;
    this.#state = state;
    this.#nextSeq = nextSeq;
    this.#durableNext = nextSeq;
    this.#options = options;
    this.#watch(conn);
  }

  get fallback(): PostgresStore["fallback"] {
    return this.#fallback;
  }

  /** A dropped idle connection loses the lease: reconnect at once rather than at the next commit. */
  #watch(conn: Connection): void {
    conn.client.once("end", () => {
      if (this.#conn !== conn || this.#closing !== undefined) return;
      this.#conn = undefined;
      this.#event({ type: "lost", message: `lost the connection to ${describeTarget(this.target)}; reconnecting` });
      this.#tasks.push(async () => void (await this.#reconnect()));
      this.#pump();
    });
  }

  #event(e: ConnectionEvent): void {
    try {
      this.#options.onConnection?.(e);
    } catch {
      /* a listener's failure is not the store's */
    }
  }

  commit<Sc extends Scope>(writes: readonly Write<Sc>[]): Promise<CommitResult> {
    try {
      if (this.#closing !== undefined) throw new StoreClosedError("commit");
      if (this.#failed !== undefined) throw this.#failed;
      const tx = prepareTransaction(writes);
      const seq = this.#nextSeq;
      this.#nextSeq += tx.writes.length;
      let bytes = 0;
      for (const w of tx.writes) bytes += "json" in w ? w.json.length + 64 : 64;
      return new Promise<CommitResult>((resolve, reject) => {
        this.#queue.push({ seq, scope: tx.scope, writes: tx.writes, bytes, resolve, reject });
        this.#pump();
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  withClient<R>(task: (client: Client) => Promise<R>): Promise<R> {
    if (this.#closing !== undefined) return Promise.reject(new StoreClosedError("use the database"));
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    return new Promise<R>((resolve, reject) => {
      this.#tasks.push(async () => {
        if (this.#local !== undefined) return reject(this.#fallback!.error);
        try {
          await this.#flushQueue();
          const conn = await this.#connection();
          try {
            resolve(await task(conn.client));
          } catch (e) {
            // A connection that timed out or broke under the task is not reused: its replies could
            // arrive late and be taken for the next query's. The next use reconnects and reconciles.
            if (classify(e) === "unreachable" && this.#conn === conn) {
              this.#conn = undefined;
              await conn.client.end().catch(() => {});
            }
            throw e;
          }
        } catch (e) {
          reject(this.#wrap(e));
        }
      });
      this.#pump();
    });
  }

  #wrap(e: unknown): unknown {
    return toDatabaseError(e, this.target, this.#conn?.password);
  }

  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    void (async () => {
      try {
        for (;;) {
          if (this.#queue.length > 0) await this.#flushQueue();
          else if (this.#tasks.length > 0) await this.#tasks.shift()!().catch(() => undefined);
          else break;
        }
      } finally {
        this.#pumping = false;
      }
    })();
  }

  async #flushQueue(): Promise<void> {
    while (this.#queue.length > 0) {
      const max = this.#options.maxBatchBytes ?? 4 * 1024 * 1024;
      let n = 0;
      let bytes = 0;
      while (n < this.#queue.length && (n === 0 || bytes + this.#queue[n]!.bytes <= max)) bytes += this.#queue[n++]!.bytes;
      const batch = this.#queue.slice(0, n);
      try {
        await this.#send(batch);
        this.#queue.splice(0, n);
      } catch (e) {
        // Everything queued fails together: nothing after a failed commit may land.
        this.#failed ??= e;
        const all = this.#queue.splice(0);
        for (const p of all) p.reject(this.#failed);
        return;
      }
      for (const p of batch) {
        this.#state.apply(p.scope, p.seq, p.writes);
        p.resolve({ seq: p.seq });
      }
    }
  }

  /** Writes one group; survives a dropped connection by reconnecting (or moving to the fallback). */
  async #send(batch: readonly Pending[]): Promise<void> {
    const last = batch[batch.length - 1]!;
    const next = last.seq + last.writes.length;
    if (this.#local !== undefined) return this.#sendLocal(batch);
    for (;;) {
      const conn = await this.#connection();
      if (this.#local !== undefined) return this.#sendLocal(batch);
      try {
        await conn.client.query(commitText(this.schema, this.sessionId, batch, next));
        this.#durableNext = next;
        this.#dirtySync = true;
        return;
      } catch (e) {
        if (classify(e) !== "unreachable") {
          await conn.client.query("ROLLBACK").catch(() => {});
          throw this.#wrap(e);
        }
        // Did the transaction land before the connection went? The reconnect finds out.
        if (this.#conn === conn) this.#conn = undefined;
        await conn.client.end().catch(() => {});
        this.#event({ type: "lost", message: `lost the connection to ${describeTarget(this.target)}; reconnecting` });
        const landed = await this.#reconnect(next);
        if (this.#local !== undefined) return this.#sendLocal(batch);
        if (landed) {
          this.#durableNext = next;
          return;
        }
      }
    }
  }

  async #sendLocal(batch: readonly Pending[]): Promise<void> {
    // The local log starts right above what memory holds, so it allocates the very same seqs.
    for (const p of batch) {
      const r = await this.#local!.commit(toWrites(p.scope, p.writes));
      if (r.seq !== p.seq) throw new Error(`the local log gave seq ${r.seq} to the commit admitted as ${p.seq}`);
    }
  }

  async #connection(): Promise<Connection> {
    if (this.#conn !== undefined) return this.#conn;
    await this.#reconnect();
    if (this.#conn === undefined) throw this.#fallback?.error ?? this.#failed;
    return this.#conn;
  }

  /**
   * Reconnects with backoff, retakes the lease, and reconciles: returns true when the database
   * already holds everything up to `pendingNext` (the lost transaction landed). Otherwise the
   * database is made to hold exactly what memory holds (acknowledged commits), ready for a resend.
   * Throws LeaseLostError, having written nothing, when another writer opened the session meanwhile.
   */
  async #reconnect(pendingNext?: number): Promise<boolean> {
    if (this.#conn !== undefined || this.#local !== undefined) return false;
    // Given up already (by the reconnect of a dropped idle connection, with commits queued behind it).
    if (this.#failed !== undefined) throw this.#failed;
    const deadline = Date.now() + (this.#options.reconnectTimeoutMs ?? 30_000);
    let delay = 100;
    let lastError: unknown;
    while (Date.now() < deadline && this.#closing === undefined) {
      let conn: Connection | undefined;
      try {
        conn = await connect(this.#url, {
          ...this.#options,
          connectTimeoutMs: Math.max(500, Math.min(deadline - Date.now(), this.#options.connectTimeoutMs ?? 10_000)),
        });
        this.#own.push(await backendOf(conn.client));
        // The server may have come back without our latest commits, or without the session row
        // or schema at all (it crashed before flushing them): recreate, then reconcile below.
        await ensureSchema(conn.client, this.schema, "writer");
        // A row that exists is left alone (DO NOTHING writes nothing); a lost or deleted one comes back bare.
        await conn.client.query(
          `INSERT INTO ${this.schema}.sessions (session_id, next_seq) VALUES (${literal(this.sessionId)}, 1) ON CONFLICT (session_id) DO NOTHING`,
        );
        await setup(conn.client, this.#options.durability);
        const client = conn.client;
        await lockLease(client, this.schema, this.sessionId, `${describeTarget(this.target)} session ${JSON.stringify(this.sessionId)}`).catch(async (e) => {
          if (!(e instanceof SessionLockedError)) throw e;
          // Held by this store's own old connection, which the server has not seen drop (half-open):
          // ended, and the lease taken. Its transaction, if one was open, is rolled back before it lets
          // go, so the stamp and next_seq read below are final. Anyone else's hold stops the writer.
          if (!(await reclaimLease(client, this.schema, this.sessionId, this.#own, RECLAIM_WAIT_MS))) {
            throw new LeaseLostError(this.target, this.sessionId, "held");
          }
        });
        const r = await conn.client.query<Stamp & { next_seq: string }>(
          `SELECT next_seq, writer_token, writer_host, writer_pid FROM ${this.schema}.sessions WHERE session_id = ${literal(this.sessionId)}`,
        );
        // Read under the lease, so no writer can come in between this check and the writes after it.
        const stamp = readStamp(r.rows[0], this.#writer);
        if (stamp === "taken") throw new LeaseLostError(this.target, this.sessionId);
        const dbNext = Number(r.rows[0]?.next_seq ?? -1);
        let landed = false;
        if (stamp === "mine" && pendingNext !== undefined && dbNext === pendingNext) landed = true;
        else if (stamp === "gone" || dbNext !== this.#durableNext) {
          // Still stamped by this writer but behind memory: the server lost acknowledged commits (it
          // crashed with synchronous_commit off; the stamp, a synchronous commit at open, outlives
          // them). Or the row is gone and was made again bare. Either way memory is the session:
          // rewrite it from memory, stamp included. Trap: a session deleted (`spool gc`, delete)
          // while its writer was away comes back this way, as it did before the stamp.
          await conn.client.query(resyncText(this.schema, this.sessionId, this.#state.allRecords(), this.#durableNext, stampOf(this.#writer)));
        }
        this.#conn = conn;
        this.#watch(conn);
        this.#event({ type: "restored", message: `reconnected to ${describeTarget(this.target)}` });
        return landed;
      } catch (e) {
        await conn?.client.end().catch(() => {});
        // Not moved to the fallback either: the database is up and the session there has moved on;
        // a local log written from memory would be a second, diverging copy under the same id.
        if (e instanceof LeaseLostError) {
          this.#failed = e;
          this.#event({ type: "failed", message: e.message });
          throw e;
        }
        lastError = e;
        // Only an unreachable server is worth waiting for; anything else will not heal by retrying.
        if (classify(e) !== "unreachable") break;
        await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
        delay = Math.min(delay * 2, 2000);
      }
    }
    const seconds = Math.round((this.#options.reconnectTimeoutMs ?? 30_000) / 1000);
    const cause = lastError === undefined ? "" : ` (${String((this.#wrap(lastError) as Error).message ?? lastError)})`;
    const why =
      lastError !== undefined && classify(lastError) !== "unreachable"
        ? "the session could not be restored after the connection dropped"
        : `the database stayed unreachable for ${seconds} s`;
    const path = this.#options.fallbackPath;
    if (path !== undefined && this.#closing === undefined) {
      const error = new DatabaseError("lost", this.target, `${why}${cause}; the session continues in the local log ${path}.`);
      this.#local = await writeFallback(path, this.sessionId, this.#state, this.#durableNext);
      this.#fallback = { path, error };
      this.#event({ type: "fallback", message: error.message, path });
      return false;
    }
    const error = new DatabaseError("lost", this.target, `${why}${cause}; nothing more was written to it.`);
    this.#failed = error;
    this.#event({ type: "failed", message: error.message });
    throw error;
  }

  #checkOpen(what: string): void {
    if (this.#closing !== undefined) throw new StoreClosedError(what);
  }

  get<T>(address: Value<T, Scope>): T | undefined {
    this.#checkOpen("read");
    return getFromState(this.#state, address);
  }

  readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T> {
    this.#checkOpen("read");
    return readListFromState(this.#state, address, options);
  }

  stats(): StoreStats {
    this.#checkOpen("read stats");
    return this.#state.stats();
  }

  sync(): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(new StoreClosedError("sync"));
    return new Promise<void>((resolve, reject) => {
      this.#tasks.push(async () => {
        try {
          await this.#flushQueue();
          if (this.#failed !== undefined) throw this.#failed;
          if (this.#local !== undefined) await this.#local.sync();
          else if (this.#dirtySync) {
            // A synchronous commit flushes the WAL up to it, and with it every earlier async commit.
            const conn = await this.#connection();
            await conn.client.query(
              `BEGIN; SET LOCAL synchronous_commit = on; UPDATE ${this.schema}.sessions SET updated_at = now() WHERE session_id = ${literal(this.sessionId)}; COMMIT;`,
            );
            this.#dirtySync = false;
          }
          resolve();
        } catch (e) {
          reject(this.#wrap(e));
        }
      });
      this.#pump();
    });
  }

  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#tasks.push(async () => {
        await this.#flushQueue();
        const conn = this.#conn;
        this.#conn = undefined;
        // Ending the connection releases the lease.
        await conn?.client.end().catch(() => {});
        await this.#local?.close();
        resolve();
      });
      this.#pump();
    });
    return this.#closing;
  }
}

/**
 * How long a reconnect waits for its own old backend to exit once told to. Measured from
 * pg_terminate_backend to the lock taken: median 2.2 ms, at most 13 ms in 20 tries (local PostgreSQL
 * 15, 2 cores). A backend that takes longer is left, and the writer stops as for another's hold.
 */
const RECLAIM_WAIT_MS = 5000;

/** Per-connection settings: durability, and literal strings as spool's SQL writes them. */
async function setup(client: Client, durability: Durability | undefined): Promise<void> {
  await client.query(`SET standard_conforming_strings = on; SET synchronous_commit = ${durability === "os" ? "on" : "off"};`);
}

interface Row {
  kind: number;
  scope_id: string;
  namespace: string;
  key: string;
  seq: string;
  value: string;
  tag: string | null;
}

/** Reads a session's records into memory (in seq order, as they were written). */
export async function loadState(client: Client, schema: string, sid: string): Promise<ScopedState> {
  const state = new ScopedState();
  await applyRowsSince(client, schema, sid, state, 0);
  return state;
}

/**
 * Applies the session's records written after `after` (a seq) to `state`, in seq order: new values,
 * values set again, list items appended. Returns the highest seq applied (`after` when none). Rows a
 * later transaction deleted are not seen here; a follower compares counts for those.
 */
export async function applyRowsSince(client: Client, schema: string, sid: string, state: ScopedState, after: number): Promise<number> {
  const S = literal(sid);
  const since = after > 0 ? ` AND seq > ${after}` : "";
  const rows = await client.query<Row>(
    `SELECT 0 AS kind, scope_id, namespace, key, seq, value, NULL AS tag FROM ${schema}.scalar_values WHERE session_id = ${S}${since} ` +
      `UNION ALL SELECT 1, scope_id, namespace, key, seq, value, tag FROM ${schema}.list_values WHERE session_id = ${S}${since} ORDER BY seq`,
  );
  let last = after;
  for (const r of rows.rows) {
    const seq = Number(r.seq);
    const scope = fromPgText(r.scope_id);
    const ns = fromPgText(r.namespace);
    const key = fromPgText(r.key);
    if (r.kind === 0) state.apply(scope, seq, [{ op: "set", ns, key, json: r.value }]);
    else state.apply(scope, seq, [{ op: "append", ns, key, json: r.value, tag: r.tag === null ? undefined : fromPgText(r.tag) }]);
    last = seq;
  }
  return last;
}

/** Opens (or creates) one session in a PostgreSQL database and takes its writer lease. */
export async function openPostgresStore(url: string | undefined, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const sid = checkSessionId(options.sessionId ?? "main");
  const schema = checkSchemaName(options.schema ?? "spool");
  const conn = await connect(url, options);
  const where = `${describeTarget(conn.target)} session ${JSON.stringify(sid)}`;
  try {
    // Schema and session row are created with synchronous commit; only data commits follow `durability`.
    await conn.client.query("SET standard_conforming_strings = on");
    await ensureSchema(conn.client, schema, "writer");
    const create = options.create ?? true;
    const inserted = create
      ? await conn.client.query(`INSERT INTO ${schema}.sessions (session_id, next_seq) VALUES (${literal(sid)}, 1) ON CONFLICT (session_id) DO NOTHING`)
      : undefined;
    if (create === "new" && inserted?.rowCount === 0) throw new SessionExistsError(where);
    const r = await conn.client.query<{ next_seq: string }>(`SELECT next_seq FROM ${schema}.sessions WHERE session_id = ${literal(sid)}`);
    if (r.rows.length === 0) throw new SessionNotFoundError(where);
    // Stamped with a synchronous commit, so a server crash that loses this writer's last commits keeps it (#reconnect).
    const writer = newWriter();
    // Known before the lease is taken: a connection that drops half-open from here on holds it.
    const backend = await backendOf(conn.client);
    await takeLease(conn.client, schema, sid, where, writer);
    await setup(conn.client, options.durability);
    // Read after the lease: a previous writer's last commit is in.
    const r2 = await conn.client.query<{ next_seq: string }>(`SELECT next_seq FROM ${schema}.sessions WHERE session_id = ${literal(sid)}`);
    const state = await loadState(conn.client, schema, sid);
    return new PgStore(url, conn, sid, schema, state, Number(r2.rows[0]!.next_seq), writer, backend, options);
  } catch (e) {
    await conn.client.end().catch(() => {});
    throw toDatabaseError(e, conn.target, conn.password);
  }
}
