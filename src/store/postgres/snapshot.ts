// A read-only view of one PostgreSQL session as it is right now, without its writer's lease: what
// `spool serve` and `spool inspect` read while another machine may still be writing.
import { SessionNotFoundError } from "../errors.js";
import type { SessionSnapshot } from "../jsonl/snapshot.js";
import { stateSnapshot } from "../state-reads.js";
import { describeTarget } from "./errors.js";
import { withDatabase, type DatabaseOptions } from "./session.js";
import { checkSessionId, loadState } from "./store.js";
import { literal } from "./text.js";
import { targetOf } from "./connect.js";

export async function readPostgresSnapshot(url: string | undefined, sessionId: string, options: DatabaseOptions = {}): Promise<SessionSnapshot> {
  const sid = checkSessionId(sessionId);
  const state = await withDatabase(url, options, async (client, schema) => {
    // One REPEATABLE READ transaction: the rows read belong to one commit boundary.
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    try {
      const r = await client.query(`SELECT 1 FROM ${schema}.sessions WHERE session_id = ${literal(sid)}`);
      if (r.rowCount === 0) throw new SessionNotFoundError(`${describeTarget(targetOf(client))} session ${JSON.stringify(sid)}`);
      return await loadState(client, schema, sid);
    } finally {
      await client.query("COMMIT").catch(() => {});
    }
  });
  return stateSnapshot(() => state);
}
