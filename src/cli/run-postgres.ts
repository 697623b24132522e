// What `spool run` does differently on a PostgreSQL store: it reports connection trouble as one line
// on stderr while the command keeps running, stores the spill in the database once the command is
// done, and, when the database stayed down, ends with a line that says where the session is kept.
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { basename } from "node:path";
import { createSpillUpload, type PostgresRepoOptions, type PostgresStore, type Store } from "../store/index.js";

/** SPOOL_PG_RECONNECT_SECONDS: how long a run waits for a lost database before it keeps the session locally (default 30). */
export function postgresRepoOptions(): PostgresRepoOptions {
  const seconds = Number(process.env.SPOOL_PG_RECONNECT_SECONDS);
  return {
    ...(Number.isFinite(seconds) && seconds > 0 ? { reconnectTimeoutMs: seconds * 1000 } : {}),
    onConnection: (e) => {
      if (e.type !== "fallback") process.stderr.write(`spool: ${e.message}\n`);
    },
  };
}

const isPostgres = (s: Store): s is PostgresStore => (s as Partial<PostgresStore>).kind === "postgres";

/** Uploads the spill and returns the error line for a run whose database stayed down (else undefined). */
export async function finishPostgresRun(store: Store, spillPath: unknown, root: string, id: string): Promise<string | undefined> {
  if (!isPostgres(store)) return undefined;
  if (store.fallback === undefined && typeof spillPath === "string") {
    try {
      await pipeline(createReadStream(spillPath), createSpillUpload(store, basename(spillPath)));
    } catch (e) {
      process.stderr.write(`spool: the spill stays only in ${spillPath}: ${(e as Error).message}\n`);
    }
  }
  if (store.fallback === undefined) return undefined;
  return `${store.fallback.error.message} Read it with: spool inspect --store jsonl --root ${root} ${id}`;
}
