// One commit (or a group of queued commits) as one simple-protocol query string: BEGIN, the writes,
// the session's next_seq, the notification, COMMIT — a single round trip that PostgreSQL runs as
// one transaction. Consecutive appends become one multi-row INSERT.
import type { PreparedWrite } from "../write.js";
import { channelOf } from "./schema.js";
import { literal, toPgText } from "./text.js";

export interface QueuedTx {
  readonly seq: number;
  readonly scope: string;
  readonly writes: readonly PreparedWrite[];
}

const name = (s: string): string => literal(toPgText(s));

/** The statements that apply one transaction's writes. */
export function writeStatements(schema: string, sid: string, tx: QueuedTx, out: string[]): void {
  const S = literal(sid);
  const scope = name(tx.scope);
  let rows: string[] = [];
  const flushAppends = (): void => {
    if (rows.length === 0) return;
    out.push(`INSERT INTO ${schema}.list_values (session_id, scope_id, namespace, key, seq, value, tag) VALUES ${rows.join(",")}`);
    rows = [];
  };
  for (let i = 0; i < tx.writes.length; i++) {
    const w = tx.writes[i]!;
    const seq = tx.seq + i;
    if (w.op === "append") {
      rows.push(`(${S},${scope},${name(w.ns)},${name(w.key)},${seq},${literal(w.json)},${w.tag === undefined ? "NULL" : name(w.tag)})`);
      continue;
    }
    flushAppends();
    switch (w.op) {
      case "set":
        out.push(
          `INSERT INTO ${schema}.scalar_values (session_id, scope_id, namespace, key, seq, value) VALUES (${S},${scope},${name(w.ns)},${name(w.key)},${seq},${literal(w.json)}) ` +
            "ON CONFLICT (session_id, scope_id, namespace, key) DO UPDATE SET seq = excluded.seq, value = excluded.value",
        );
        break;
      case "delete":
        out.push(`DELETE FROM ${schema}.scalar_values WHERE session_id = ${S} AND scope_id = ${scope} AND namespace = ${name(w.ns)} AND key = ${name(w.key)}`);
        break;
      case "clear":
        out.push(`DELETE FROM ${schema}.list_values WHERE session_id = ${S} AND scope_id = ${scope} AND namespace = ${name(w.ns)} AND key = ${name(w.key)}`);
        break;
      case "retire":
        out.push(`DELETE FROM ${schema}.scalar_values WHERE session_id = ${S} AND scope_id = ${name(w.scope)}`);
        out.push(`DELETE FROM ${schema}.list_values WHERE session_id = ${S} AND scope_id = ${name(w.scope)}`);
        break;
    }
  }
  flushAppends();
}

/** The whole transaction text for a group of queued commits; `nextSeq` is the seq after the last one. */
export function commitText(schema: string, sid: string, txs: readonly QueuedTx[], nextSeq: number): string {
  const out = ["BEGIN"];
  for (const tx of txs) writeStatements(schema, sid, tx, out);
  out.push(`UPDATE ${schema}.sessions SET next_seq = ${nextSeq}, updated_at = now() WHERE session_id = ${literal(sid)}`);
  out.push(`SELECT pg_notify(${literal(channelOf(schema))}, ${literal(JSON.stringify({ s: sid, q: nextSeq - 1 }))})`);
  out.push("COMMIT");
  return out.join(";\n") + ";";
}

/** Replaces everything stored for the session with `records` (a resync after a reconnect); `stamp` is the writer's SET list (lease.ts). */
export function resyncText(
  schema: string,
  sid: string,
  records: Iterable<{ scope: string; seq: number; write: PreparedWrite }>,
  nextSeq: number,
  stamp: string,
): string {
  const S = literal(sid);
  const out = ["BEGIN", `DELETE FROM ${schema}.scalar_values WHERE session_id = ${S}`, `DELETE FROM ${schema}.list_values WHERE session_id = ${S}`];
  for (const r of records) writeStatements(schema, sid, { seq: r.seq, scope: r.scope, writes: [r.write] }, out);
  out.push(`UPDATE ${schema}.sessions SET next_seq = ${nextSeq}, updated_at = now(), ${stamp} WHERE session_id = ${S}`);
  out.push("COMMIT");
  return out.join(";\n") + ";";
}
