// One writer per session: a session-level advisory lock on the writer's connection. PostgreSQL drops
// it the moment that connection ends, so a writer killed with SIGKILL frees the session at once (the
// kernel closes its socket); a writer whose machine vanishes frees it when TCP keepalive gives up.
// Because the lease ends with the connection, a writer that reconnects cannot tell from the lock alone
// whether someone else held the session in between: each writer also stamps the session's row with a
// token of its own when it opens it (the fence), and a reconnecting writer reads the stamp back.
import { createHash, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Client } from "pg";
import { SessionLockedError } from "../errors.js";
import { literal } from "./text.js";

/** A signed 64-bit key from the schema and session id (collisions are 2^-64 unlikely). */
export function leaseKey(schema: string, sid: string): string {
  return createHash("sha256").update(`spool\0${schema}\0${sid}`).digest().readBigInt64BE(0).toString();
}

/** Who stamped a session's row: a token new at each open, and the process (as `spool sessions` shows it). */
export interface Writer {
  readonly token: string;
  readonly host: string;
  readonly pid: number;
}

/** This process's stamp for a session it opens now. */
export const newWriter = (): Writer => ({ token: randomUUID(), host: hostname(), pid: process.pid });

/** The SET list that stamps the session's row with `w` (part of an UPDATE of the sessions table). */
export const stamp = (w: Writer): string => `writer_token = ${literal(w.token)}, writer_host = ${literal(w.host)}, writer_pid = ${w.pid}`;

/**
 * Takes the session's lease on `client` and stamps its row with `writer`, or throws SessionLockedError
 * naming the holder. The stamp is a synchronous commit whatever the server's default: a crash that
 * loses this writer's last asynchronous commits must not lose it with them (the writer would then take
 * the previous writer's stamp for a newer writer's and stop, instead of restoring its commits).
 */
export async function takeLease(client: Client, schema: string, sid: string, where: string, writer: Writer): Promise<void> {
  await lockLease(client, schema, sid, where);
  await client.query(`BEGIN; SET LOCAL synchronous_commit = on; UPDATE ${schema}.sessions SET ${stamp(writer)} WHERE session_id = ${literal(sid)}; COMMIT;`);
}

/** Takes the session's lease on `client` (no write), or throws SessionLockedError naming the holder. */
export async function lockLease(client: Client, schema: string, sid: string, where: string): Promise<void> {
  const r = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${leaseKey(schema, sid)}) AS ok`);
  if (!r.rows[0]?.ok) {
    const h = await client.query<{ writer_host: string | null; writer_pid: number | null }>(
      `SELECT writer_host, writer_pid FROM ${schema}.sessions WHERE session_id = ${literal(sid)}`,
    );
    const row = h.rows[0];
    const host = row?.writer_host ?? "";
    throw new SessionLockedError(where, row?.writer_pid ?? 0, host === hostname() ? "" : host);
  }
}

/** The stamp on a session's row, read back by its writer after a reconnect. */
export interface Stamp {
  readonly writer_token: string | null;
  readonly writer_host: string | null;
  readonly writer_pid: number | null;
}

/**
 * What a writer that reconnected finds on its session's row: its own stamp ("mine": nobody opened the
 * session since, so its memory is the session), no stamp at all ("gone": the row was lost or deleted
 * and made again just now, so memory is all there is), or another writer's ("taken").
 * Trap: a writer of a spool older than the stamp's token does not write one, and would leave this
 * writer's token in place; it does write its host and pid, so those are compared too.
 */
export function readStamp(row: Stamp | undefined, mine: Writer): "mine" | "gone" | "taken" {
  if (row === undefined || (row.writer_token === null && row.writer_host === null && row.writer_pid === null)) return "gone";
  return row.writer_token === mine.token && row.writer_host === mine.host && row.writer_pid === mine.pid ? "mine" : "taken";
}

/** pg_locks shows a bigint advisory key as its (classid, objid) halves, each read as an unsigned oid: `classid:objid`. */
export function leaseHalves(schema: string, sid: string): string {
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
  return (sid) => held.has(leaseHalves(schema, sid));
}

/** Is some connection holding the session's lease right now? */
export async function leaseHeld(client: Client, schema: string, sid: string): Promise<boolean> {
  return (await heldLeases(client, schema))(sid);
}
