// Connections for everything that is not a session's writer: listing, snapshots for viewers,
// following, deletion, forks and retention. None of them takes a lease.
import type { Client } from "pg";
import { connect, toDatabaseError, type ConnectOptions, type Connection } from "./connect.js";
import { checkSchemaName, ensureSchema } from "./schema.js";

export interface DatabaseOptions extends ConnectOptions {
  /** The schema holding spool's tables (default "spool"). */
  readonly schema?: string;
}

/** A reader's connection: standard strings on, the schema ensured; closed again when that fails. */
export async function connectReader(url: string | undefined, options: DatabaseOptions): Promise<Connection> {
  const schema = checkSchemaName(options.schema ?? "spool");
  const conn = await connect(url, options);
  try {
    await conn.client.query("SET standard_conforming_strings = on");
    await ensureSchema(conn.client, schema);
    return conn;
  } catch (e) {
    await conn.client.end().catch(() => {});
    throw toDatabaseError(e, conn.target, conn.password);
  }
}

/** Runs `fn` on a fresh reader's connection, then closes it; failures name host and database. */
export async function withDatabase<R>(url: string | undefined, options: DatabaseOptions, fn: (client: Client, schema: string) => Promise<R>): Promise<R> {
  const schema = checkSchemaName(options.schema ?? "spool");
  const conn = await connectReader(url, options);
  try {
    return await fn(conn.client, schema);
  } catch (e) {
    throw toDatabaseError(e, conn.target, conn.password);
  } finally {
    await conn.client.end().catch(() => {});
  }
}
