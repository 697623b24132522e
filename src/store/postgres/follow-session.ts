// Following one PostgreSQL session that a writer (on this machine or another) is still writing: what
// `spool serve` keeps current while a commit is announced for it every flush. The session is read
// whole once; after that a poll reads only the records written since the last one (seq > the highest
// seen) and the number of records each scope holds, in one REPEATABLE READ transaction, so a poll
// sees one commit boundary and costs about what changed plus an index count — where reading the
// session whole on every announced commit cost the whole session's bytes each time.
// Deletions leave no row to read: a scope the database no longer holds was retired (a settled call's
// operation) and is dropped here; any other difference in a count (a deleted value, a cleared list)
// reads the session whole again. It writes no session data and takes no lease (like every reader, it
// makes sure the schema exists when it connects).
import type { Client } from "pg";
import { SessionNotFoundError } from "../errors.js";
import type { SessionSnapshot } from "../jsonl/snapshot.js";
import { ScopedState } from "../scoped-state.js";
import { stateSnapshot } from "../state-reads.js";
import { targetOf, toDatabaseError, type Connection } from "./connect.js";
import { DatabaseError, describeTarget } from "./errors.js";
import { checkSchemaName } from "./schema.js";
import { connectReader, type DatabaseOptions } from "./session.js";
import { applyRowsSince, checkSessionId } from "./store.js";
import { fromPgText, literal } from "./text.js";

export interface PostgresSessionFollower {
  /** The session as of the last poll. */
  readonly snapshot: SessionSnapshot;
  /** Reads what was committed since the last poll; true when anything changed. */
  poll(): Promise<boolean>;
  /** Times the session was read whole (the first poll, and after a deletion inside a scope). */
  readonly reads: number;
  close(): Promise<void>;
}

export async function followPostgresSession(url: string | undefined, sessionId: string, options: DatabaseOptions = {}): Promise<PostgresSessionFollower> {
  const sid = checkSessionId(sessionId);
  const schema = checkSchemaName(options.schema ?? "spool");
  const open = (): Promise<Connection> => connectReader(url, options);
  let conn = await open();
  let closed = false;
  let state = new ScopedState();
  let last = -1;
  let reads = 0;

  // Read into a new state, taken only once the read succeeded: a failed read leaves the last one whole.
  const readWhole = async (client: Client): Promise<void> => {
    reads++;
    const next = new ScopedState();
    last = await applyRowsSince(client, schema, sid, next, 0);
    state = next;
    edits++;
  };

  // Rows are applied only once a query returned all of them, and `last` moves with them, so a poll
  // that failed half-way can simply run again; `edits` counts what a failed attempt already changed.
  let edits = 0;
  const pollOnce = async (client: Client): Promise<boolean> => {
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      if (last < 0) {
        const r = await client.query(`SELECT 1 FROM ${schema}.sessions WHERE session_id = ${literal(sid)}`);
        if (r.rowCount === 0) throw new SessionNotFoundError(`${describeTarget(targetOf(client))} session ${JSON.stringify(sid)}`);
        await readWhole(client);
        return true;
      }
      const before = last;
      last = await applyRowsSince(client, schema, sid, state, last);
      let changed = last !== before;
      if (changed) edits++;
      const there = await recordCounts(client, schema, sid);
      for (const [scope, n] of state.recordCounts()) {
        const held = there.get(scope) ?? 0;
        if (held === n) continue;
        changed = true;
        if (held === 0) {
          state.retire(scope);
          edits++;
        } else {
          await readWhole(client);
          break;
        }
      }
      return changed;
    } catch (e) {
      throw e instanceof SessionNotFoundError ? e : toDatabaseError(e, conn.target, conn.password);
    } finally {
      await client.query("COMMIT").catch(() => {});
    }
  };

  return {
    snapshot: stateSnapshot(() => state),
    // A connection the server dropped since the last poll (a restart) is replaced once, within the poll.
    async poll() {
      const at = edits;
      try {
        return await pollOnce(conn.client);
      } catch (e) {
        if (!(e instanceof DatabaseError && e.problem === "unreachable")) throw e;
        await conn.client.end().catch(() => {});
        conn = await open();
        if (closed) await conn.client.end().catch(() => {});
        return (await pollOnce(conn.client)) || edits !== at;
      }
    },
    get reads() {
      return reads;
    },
    async close() {
      closed = true;
      await conn.client.end().catch(() => {});
    },
  };
}

/** Records per scope in the database (values plus list items), counted on the primary keys' indexes. */
async function recordCounts(client: Client, schema: string, sid: string): Promise<Map<string, number>> {
  const S = literal(sid);
  const r = await client.query<{ scope_id: string; n: string }>(
    `SELECT scope_id, sum(n) AS n FROM (SELECT scope_id, count(*) AS n FROM ${schema}.scalar_values WHERE session_id = ${S} GROUP BY scope_id ` +
      `UNION ALL SELECT scope_id, count(*) FROM ${schema}.list_values WHERE session_id = ${S} GROUP BY scope_id) c GROUP BY scope_id`,
  );
  const counts = new Map<string, number>();
  for (const row of r.rows) counts.set(fromPgText(row.scope_id), Number(row.n));
  return counts;
}
