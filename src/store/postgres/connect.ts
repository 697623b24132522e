// Opening a connection: the `pg` driver reads the URL, sslmode and the PG* environment variables
// exactly as it does for any pg user; we only turn its failures into one line that names the host
// and database and never the password. `pg` is loaded on first use, so JSONL users never load it.
import type { Client, ClientConfig } from "pg";
import { DatabaseError, DatabaseUrlError, type DatabaseProblem, type DatabaseTarget } from "./errors.js";
import { redact, redactUrl } from "./redact.js";

export interface ConnectOptions {
  /** Give up on a connection attempt after this long (default 10 000 ms): never a hang. */
  readonly connectTimeoutMs?: number;
  /**
   * A query with no answer after this long counts as a lost connection (default 60 000 ms): a server
   * behind a network partition sends no FIN, and TCP keepalive alone would take minutes to notice.
   */
  readonly queryTimeoutMs?: number;
  /** Shown in pg_stat_activity. */
  readonly applicationName?: string;
}

type PgModule = typeof import("pg");
let pgModule: Promise<PgModule> | undefined;
export const loadPg = (): Promise<PgModule> => (pgModule ??= import("pg").then((m) => ((m as unknown as { default?: PgModule }).default ?? m) as PgModule));

const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "EPIPE", "57P01", "57P03"]);

export function classify(e: unknown): DatabaseProblem | undefined {
  const code = (e as { code?: unknown })?.code;
  const message = String((e as Error)?.message ?? "");
  if (code === "28P01" || code === "28000" || /password|SASL|SCRAM/i.test(message)) return "auth";
  if (code === "42501") return "permission";
  if (code === "3D000") return "missing-database";
  if (typeof code === "string" && (UNREACHABLE.has(code) || code.startsWith("08"))) return "unreachable";
  if (/timeout|terminated|Connection|ECONNRESET|socket|SSL|TLS|certificate/i.test(message)) return "unreachable";
  return undefined;
}

const ADVICE: Record<DatabaseProblem, string> = {
  unreachable: "check that the server is running and reachable from here (host, port, sslmode)",
  auth: "check the user and password in the URL or PGUSER/PGPASSWORD",
  permission: "grant this user CREATE on the database (or have an owner create spool's schema once) and the table privileges",
  "missing-database": "create the database or name an existing one",
  lost: "the store kept the session locally",
};

/** The database error for a driver failure, or the failure itself when it is something else. */
export function toDatabaseError(e: unknown, target: DatabaseTarget, password: string | undefined, problem = classify(e)): unknown {
  if (problem === undefined || e instanceof DatabaseError) return e;
  // spool's own errors (a held lease, a missing session) already say what to do.
  if (String((e as { code?: unknown })?.code ?? "").startsWith("SPOOL_")) return e;
  const raw = redact(String((e as Error)?.message ?? e), password);
  const what =
    problem === "auth"
      ? `authentication failed for user "${target.user}" (${raw})`
      : problem === "permission"
        ? `user "${target.user}" lacks a privilege spool needs (${raw})`
        : problem === "missing-database"
          ? `the database does not exist (${raw})`
          : `cannot connect (${raw})`;
  return new DatabaseError(problem, target, `${what}; ${ADVICE[problem]}.`);
}

export function targetOf(client: Client): DatabaseTarget {
  const c = client as unknown as { host: string; port: number; database: string; user: string };
  const user = c.user ?? "(none: set PGUSER or put one in the URL)";
  return { host: c.host, port: c.port, database: c.database ?? c.user ?? "(none: set PGDATABASE or put one in the URL)", user };
}

export interface Connection {
  readonly client: Client;
  readonly target: DatabaseTarget;
  readonly password: string | undefined;
}

/** Connects, or throws a DatabaseError naming the host and database. */
export async function connect(url: string | undefined, options: ConnectOptions = {}): Promise<Connection> {
  const pg = await loadPg();
  const config: ClientConfig = {
    ...(url !== undefined ? { connectionString: url } : {}),
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: options.applicationName ?? "spool",
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    query_timeout: options.queryTimeoutMs ?? 60_000,
  };
  let client: Client;
  try {
    client = new pg.Client(config);
  } catch (e) {
    throw new DatabaseUrlError(url === undefined ? "the PG* environment" : redactUrl(url), String((e as Error).message));
  }
  const target = targetOf(client);
  const password = (client as unknown as { password?: string }).password ?? undefined;
  // A connection that drops emits 'error'; without a listener that would crash the process.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    throw toDatabaseError(e, target, typeof password === "string" ? password : undefined, classify(e) ?? "unreachable");
  }
  return { client, target, password: typeof password === "string" ? password : undefined };
}
