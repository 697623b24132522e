// The PostgreSQL backend's failures: one line each, naming the server and database (never the
// password), saying what was wrong and what to do.
import { SpoolError } from "../../errors/index.js";

/** Where a store connects, as people read it: `host:port database db as user` (no password, ever). */
export interface DatabaseTarget {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
}

export const describeTarget = (t: DatabaseTarget): string => `PostgreSQL at ${t.host}:${t.port}, database "${t.database}"`;

export type DatabaseProblem = "unreachable" | "auth" | "permission" | "missing-database" | "lost";

const CODES: Record<DatabaseProblem, string> = {
  unreachable: "SPOOL_STORE_DB_UNREACHABLE",
  auth: "SPOOL_STORE_DB_AUTH",
  permission: "SPOOL_STORE_DB_PERMISSION",
  "missing-database": "SPOOL_STORE_DB_MISSING",
  lost: "SPOOL_STORE_DB_LOST",
};

/** The database could not be used: unreachable, refused our credentials or privileges, or went away. */
export class DatabaseError extends SpoolError {
  constructor(
    readonly problem: DatabaseProblem,
    readonly target: DatabaseTarget,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(CODES[problem], `${describeTarget(target)}: ${detail}`, options);
  }
}

/**
 * The session's writer lease (advisory lock) was lost while its connection was down and another writer
 * opened the session meanwhile (it may hold it still): this writer wrote nothing more, so nothing of
 * the other's was overwritten.
 */
export class LeaseLostError extends SpoolError {
  /**
   * `taken`: the session's row names another writer. `held`: its lease is held by another connection
   * at the reconnect. This store's own old connection, which the server keeps until it sees it drop
   * (TCP keepalive), is told apart by its backend's pid and start and ended (reclaim-lease.ts); `held`
   * is another writer, or an old connection of this process that could not be ended in time.
   */
  constructor(target: DatabaseTarget, sessionId: string, how: "taken" | "held" = "taken") {
    const what =
      how === "taken"
        ? `another writer opened session ${JSON.stringify(sessionId)} while this process was disconnected from the database`
        : `session ${JSON.stringify(sessionId)}'s lease was held by another connection when this process reconnected (another writer, or an old connection of this process that could not be ended)`;
    super(
      "SPOOL_STORE_LEASE_LOST",
      `${describeTarget(target)}: ${what}; ` +
        "this process stopped writing to it so as not to overwrite another writer's commits (its own commits since the disconnection were not saved). " +
        "Open the session again to continue from what it holds now.",
    );
  }
}

/** A spill read or write was refused (unknown name, or a spill larger than the documented limit). */
export class SpillStoreError extends SpoolError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super("SPOOL_STORE_SPILL", detail, options);
  }
}

/** A database URL the driver cannot read. */
export class DatabaseUrlError extends SpoolError {
  constructor(shown: string, detail: string) {
    super("SPOOL_STORE_DB_URL", `cannot read the database URL ${shown} (${detail}); use postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…].`);
  }
}
