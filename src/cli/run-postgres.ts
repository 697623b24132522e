// What `spool run` does differently on a PostgreSQL store: it reports connection trouble as one line
// on stderr while the command keeps running, completes the spill's upload (spill-tail.ts), and, when
// the database stayed down, ends with a line that says where the session is kept.
import type { PostgresRepoOptions, PostgresStore, Store } from "../store/index.js";
import type { SpillTail } from "./spill-tail.js";

/**
 * SPOOL_PG_RECONNECT_SECONDS: how long a run waits for a lost database before it keeps the session
 * locally (default 30). `announceEnd`: say a fallback or a failure (another writer took the session) at
 * once, for a server that runs on; otherwise they are left to the line a run ends with.
 */
export function postgresRepoOptions(options: { readonly announceEnd?: boolean } = {}): PostgresRepoOptions {
  const seconds = Number(process.env.SPOOL_PG_RECONNECT_SECONDS);
  return {
    ...(Number.isFinite(seconds) && seconds > 0 ? { reconnectTimeoutMs: seconds * 1000 } : {}),
    onConnection: (e) => {
      // `spool run` says these once at the end instead: the fallback with the command that reads the
      // local session, the failure as the error its next commit fails with (the same sentence twice otherwise).
      if ((e.type !== "fallback" && e.type !== "failed") || options.announceEnd) process.stderr.write(`spool: ${e.message}\n`);
    },
  };
}

const isPostgres = (s: Store): s is PostgresStore => (s as Partial<PostgresStore>).kind === "postgres";

/** Completes the spill upload and returns the error line for a run whose database stayed down (else undefined). */
export async function finishPostgresRun(store: Store, spill: SpillTail, root: string, id: string): Promise<string | undefined> {
  if (!isPostgres(store)) return undefined;
  const warning = await spill.finish();
  if (warning !== undefined && store.fallback === undefined) process.stderr.write(`spool: ${warning}\n`);
  if (store.fallback === undefined) return undefined;
  return `${store.fallback.error.message} Read it with: spool inspect --store jsonl --root ${root} ${id}`;
}
