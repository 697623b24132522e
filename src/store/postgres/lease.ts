// One writer per session: a session-level advisory lock on the writer's connection. PostgreSQL drops
// it the moment that connection ends, so a writer killed with SIGKILL frees the session at once (the
// kernel closes its socket); a writer whose machine vanishes frees it when TCP keepalive gives up.
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type { Client } from "pg";
import { SessionLockedError } from "../errors.js";
import { literal } from "./text.js";

/** A signed 64-bit key from the schema and session id (collisions are 2^-64 unlikely). */
export function leaseKey(schema: string, sid: string): string {
  return createHash("sha256").update(`spool\0${schema}\0${sid}`).digest().readBigInt64BE(0).toString();
}

/** Takes the session's lease on `client` or throws SessionLockedError naming the holder. */
export async function takeLease(client: Client, schema: string, sid: string, where: string): Promise<void> {
  const r = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${leaseKey(schema, sid)}) AS ok`);
  if (!r.rows[0]?.ok) {
    const h = await client.query<{ writer_host: string | null; writer_pid: number | null }>(
      `SELECT writer_host, writer_pid FROM ${schema}.sessions WHERE session_id = ${literal(sid)}`,
    );
    const row = h.rows[0];
    const host = row?.writer_host ?? "";
    throw new SessionLockedError(where, row?.writer_pid ?? 0, host === hostname() ? "" : host);
  }
  await client.query(`UPDATE ${schema}.sessions SET writer_host = ${literal(hostname())}, writer_pid = ${process.pid} WHERE session_id = ${literal(sid)}`);
}

/** pg_locks shows a bigint advisory key as its (classid, objid) halves, each read as an unsigned oid. */
function halves(schema: string, sid: string): string {
  const key = BigInt(leaseKey(schema, sid));
  return `${(key >> 32n) & 0xffffffffn}:${key & 0xffffffffn}`;
}

/** The sessions' leases held right now, as one query: call the result with a session id. */
export async function heldLeases(client: Client, schema: string): Promise<(sid: string) => boolean> {
  const r = await client.query<{ k: string }>(
    "SELECT classid::bigint || ':' || objid::bigint AS k FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted " +
      "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
  );
  const held = new Set(r.rows.map((x) => x.k));
  return (sid) => held.has(halves(schema, sid));
}

/** Is some connection holding the session's lease right now? */
export async function leaseHeld(client: Client, schema: string, sid: string): Promise<boolean> {
  return (await heldLeases(client, schema))(sid);
}
