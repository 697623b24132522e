// The PostgreSQL schema: the SQLite layout (scope_id '' is the session scope) in a schema of its own
// (default "spool"), plus spill chunks. Values are stored as the exact JSON text spool wrote (text,
// not jsonb: jsonb would reorder keys and normalise numbers, so a read would not round-trip).
// Columns added later are added to an existing database by its first writer (`ensureSchema(…,
// "writer")`), within version 1: an older spool names its columns and never sees them.
import type { Client } from "pg";
import { WriteError } from "../errors.js";
import { targetOf } from "./connect.js";
import { DatabaseError } from "./errors.js";

export const SCHEMA_VERSION = 1;
/** Spill bytes are stored in rows of at most this many bytes. */
export const SPILL_CHUNK_BYTES = 256 * 1024;

const NAME = /^[a-z_][a-z0-9_]{0,62}$/;
export function checkSchemaName(name: string): string {
  if (typeof name !== "string" || !NAME.test(name)) throw new WriteError(`schema name ${JSON.stringify(name)}: use 1–63 lowercase letters, digits and "_"`);
  return name;
}

export const ddl = (s: string): string => `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.meta (
  key text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.sessions (
  session_id text PRIMARY KEY,
  next_seq bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  forked_from text,
  forked_at_seq bigint,
  writer_host text,
  writer_pid integer,
  writer_token text
);
CREATE INDEX IF NOT EXISTS sessions_updated_at ON ${s}.sessions (updated_at);
CREATE TABLE IF NOT EXISTS ${s}.scalar_values (
  session_id text NOT NULL,
  scope_id text NOT NULL,
  namespace text NOT NULL,
  key text NOT NULL,
  seq bigint NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (session_id, scope_id, namespace, key)
);
CREATE TABLE IF NOT EXISTS ${s}.list_values (
  session_id text NOT NULL,
  scope_id text NOT NULL,
  namespace text NOT NULL,
  key text NOT NULL,
  seq bigint NOT NULL,
  value text NOT NULL,
  tag text,
  PRIMARY KEY (session_id, scope_id, namespace, key, seq)
);
CREATE TABLE IF NOT EXISTS ${s}.spills (
  session_id text NOT NULL,
  name text NOT NULL,
  bytes bigint NOT NULL DEFAULT 0,
  chunks integer NOT NULL DEFAULT 0,
  complete boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, name)
);
CREATE TABLE IF NOT EXISTS ${s}.spill_chunks (
  session_id text NOT NULL,
  name text NOT NULL,
  chunk integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (session_id, name, chunk)
);
INSERT INTO ${s}.meta (key, value) VALUES ('version', '${SCHEMA_VERSION}') ON CONFLICT (key) DO NOTHING;
`;

/** Columns added to version 1 since it first shipped (the writer's fence, lease.ts). */
const added = (s: string): string => `ALTER TABLE ${s}.sessions ADD COLUMN IF NOT EXISTS writer_token text;`;

/**
 * Creates the schema when missing (serialised across processes by a transaction-scoped advisory lock).
 * A writer also adds the columns an older spool's database lacks; readers never need them, so a
 * reader's user needs no right to alter a table (only its owner may).
 */
export async function ensureSchema(client: Client, schema: string, role: "reader" | "writer" = "reader"): Promise<void> {
  const present = await client.query<{ t: string | null; c: boolean }>(
    "SELECT to_regclass($1) AS t, EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($2) AND attname = 'writer_token' AND NOT attisdropped) AS c",
    [`${schema}.spill_chunks`, `${schema}.sessions`],
  );
  const create = present.rows[0]?.t == null;
  const missing = create ? ddl(schema) : role === "writer" && !present.rows[0]?.c ? added(schema) : undefined;
  if (missing !== undefined) {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`spool-schema:${schema}`]);
      await client.query(missing);
      await client.query("COMMIT");
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      // Only a table's owner may alter it; a user granted just the table privileges gets this line.
      if (!create && (e as { code?: unknown }).code === "42501") {
        const target = targetOf(client);
        throw new DatabaseError(
          "permission",
          target,
          `user "${target.user}" may not add the column writer_token, which this version of spool needs, to ${schema}.sessions (${String((e as Error).message)}); ` +
            `have the table's owner open any session once, or run: ALTER TABLE ${schema}.sessions ADD COLUMN writer_token text;`,
          { cause: e },
        );
      }
      throw e;
    }
  }
  const v = await client.query<{ value: string }>(`SELECT value FROM ${schema}.meta WHERE key = 'version'`);
  const version = Number(v.rows[0]?.value);
  if (version !== SCHEMA_VERSION) {
    const { UnsupportedFormatError } = await import("../errors.js");
    throw new UnsupportedFormatError(`schema ${schema}`, v.rows[0]?.value);
  }
}

/** Channel that carries `{"s":session,"q":seq}` after each commit (never data). */
export const channelOf = (schema: string): string => `${schema}_commits`;
