// Short-lived connections for everything that is not a session's writer: listing, snapshots for
// viewers, deletion, forks and retention. None of them takes a lease.
import type { Client } from "pg";
import { connect, toDatabaseError, type ConnectOptions } from "./connect.js";
import { checkSchemaName, ensureSchema } from "./schema.js";

export interface DatabaseOptions extends ConnectOptions {
  /** The schema holding spool's tables (default "spool"). */
  readonly schema?: string;
}

/** Runs `fn` on a fresh connection (schema ensured), then closes it; failures name host and database. */
export async function withDatabase<R>(url: string | undefined, options: DatabaseOptions, fn: (client: Client, schema: string) => Promise<R>): Promise<R> {
  const schema = checkSchemaName(options.schema ?? "spool");
  const conn = await connect(url, options);
  try {
    await conn.client.query("SET standard_conforming_strings = on");
    await ensureSchema(conn.client, schema);
    return await fn(conn.client, schema);
  } catch (e) {
    throw toDatabaseError(e, conn.target, conn.password);
  } finally {
    await conn.client.end().catch(() => {});
  }
}
