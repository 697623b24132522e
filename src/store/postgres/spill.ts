// Spills in the database: a writable stream that stores a session's raw bytes in chunks of
// SPILL_CHUNK_BYTES rows (each write's callback waits for its rows, so a fast producer is held back
// by the database: backpressure, bounded memory), and a readable stream that reads them back one chunk
// at a time, byte-identical. A spill becomes visible as complete only when its stream finishes.
import { Buffer } from "node:buffer";
import { Readable, Writable } from "node:stream";
import { countOf } from "../../errors/index.js";
import { describeTarget } from "./errors.js";
import { SpillStoreError } from "./errors.js";
import { connect, toDatabaseError } from "./connect.js";
import { checkSchemaName, SPILL_CHUNK_BYTES } from "./schema.js";
import type { DatabaseOptions } from "./session.js";
import { checkSessionId, type PostgresStore } from "./store.js";
import { literal } from "./text.js";

/** Default largest spill stored in the database (see docs/scale.md for the limits and why). */
export const DEFAULT_MAX_SPILL_BYTES = 4 * 1024 ** 3;
const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;

function checkName(name: string): string {
  if (typeof name !== "string" || !NAME.test(name))
    throw new SpillStoreError(`spill name ${JSON.stringify(name)}: use 1–255 letters, digits, "_", "-", "." (not first)`);
  return name;
}

export interface SpillUploadOptions {
  /** Refuse a spill past this many bytes (default 4 GiB). */
  readonly maxBytes?: number;
}

/** A writable stream that stores `name`'s bytes for the store's session; replaces an earlier spill of that name. */
export function createSpillUpload(store: PostgresStore, name: string, options: SpillUploadOptions = {}): Writable {
  checkName(name);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SPILL_BYTES;
  const S = literal(store.sessionId);
  const N = literal(name);
  const s = store.schema;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let chunk = 0;
  let total = 0;
  const writeChunks = async (final: boolean): Promise<void> => {
    if (pendingBytes < SPILL_CHUNK_BYTES && !(final && pendingBytes > 0)) return;
    const all = Buffer.concat(pending, pendingBytes);
    let off = 0;
    const rows: Buffer[] = [];
    while (all.length - off >= SPILL_CHUNK_BYTES || (final && off < all.length)) {
      const end = Math.min(off + SPILL_CHUNK_BYTES, all.length);
      rows.push(all.subarray(off, end));
      off = end;
    }
    pending = off < all.length ? [all.subarray(off)] : [];
    pendingBytes = all.length - off;
    await store.withClient(async (client) => {
      for (const row of rows) {
        await client.query(`INSERT INTO ${s}.spill_chunks (session_id, name, chunk, data) VALUES (${S}, ${N}, $1, $2)`, [chunk++, row]);
      }
      await client.query(`UPDATE ${s}.spills SET bytes = $1, chunks = $2 WHERE session_id = ${S} AND name = ${N}`, [total, chunk]);
    });
  };
  return new Writable({
    highWaterMark: SPILL_CHUNK_BYTES,
    construct(cb) {
      store
        .withClient(async (client) => {
          await client.query("BEGIN");
          await client.query(`DELETE FROM ${s}.spill_chunks WHERE session_id = ${S} AND name = ${N}`);
          await client.query(
            `INSERT INTO ${s}.spills (session_id, name) VALUES (${S}, ${N}) ON CONFLICT (session_id, name) DO UPDATE SET bytes = 0, chunks = 0, complete = false, created_at = now()`,
          );
          await client.query("COMMIT");
        })
        .then(() => cb(), cb);
    },
    write(data: Buffer, _enc, cb) {
      total += data.length;
      if (total > maxBytes) {
        cb(
          new SpillStoreError(
            `${describeTarget(store.target)}: spill ${JSON.stringify(name)} is larger than ${countOf(maxBytes, "byte")}, the limit for spills stored in the database; the local spill file keeps every byte.`,
          ),
        );
        return;
      }
      pending.push(data);
      pendingBytes += data.length;
      writeChunks(false).then(() => cb(), cb);
    },
    final(cb) {
      writeChunks(true)
        .then(() =>
          store.withClient((client) =>
            client.query(`UPDATE ${s}.spills SET complete = true, bytes = $1, chunks = $2 WHERE session_id = ${S} AND name = ${N}`, [total, chunk]),
          ),
        )
        .then(() => cb(), cb);
    },
  });
}

export interface SpillInfo {
  readonly name: string;
  readonly bytes: number;
  readonly complete: boolean;
}

export async function listPostgresSpills(url: string | undefined, sessionId: string, options: DatabaseOptions = {}): Promise<SpillInfo[]> {
  const { withDatabase } = await import("./session.js");
  return withDatabase(url, options, async (client, schema) => {
    const r = await client.query<{ name: string; bytes: string; complete: boolean }>(
      `SELECT name, bytes, complete FROM ${schema}.spills WHERE session_id = $1 ORDER BY name`,
      [checkSessionId(sessionId)],
    );
    return r.rows.map((x) => ({ name: x.name, bytes: Number(x.bytes), complete: x.complete }));
  });
}

/** A readable stream of a stored spill, one chunk (one query) at a time, on a connection of its own. */
export function openPostgresSpill(url: string | undefined, sessionId: string, name: string, options: DatabaseOptions = {}): Readable {
  const sid = checkSessionId(sessionId);
  checkName(name);
  const schema = checkSchemaName(options.schema ?? "spool");
  async function* chunks(): AsyncGenerator<Buffer> {
    const conn = await connect(url, options);
    try {
      const head = await conn.client
        .query<{ chunks: number }>(`SELECT chunks FROM ${schema}.spills WHERE session_id = $1 AND name = $2`, [sid, name])
        .catch((e) => {
          throw toDatabaseError(e, conn.target, conn.password);
        });
      if (head.rows.length === 0)
        throw new SpillStoreError(`${describeTarget(conn.target)}: session ${JSON.stringify(sid)} has no spill ${JSON.stringify(name)}`);
      // Read up to the chunk count now, or further while a writer is still appending.
      for (let i = 0; ; i++) {
        const r = await conn.client.query<{ data: Buffer }>(`SELECT data FROM ${schema}.spill_chunks WHERE session_id = $1 AND name = $2 AND chunk = $3`, [
          sid,
          name,
          i,
        ]);
        if (r.rows.length === 0) break;
        yield r.rows[0]!.data;
      }
    } finally {
      await conn.client.end().catch(() => {});
    }
  }
  return Readable.from(chunks(), { objectMode: false, highWaterMark: SPILL_CHUNK_BYTES });
}
