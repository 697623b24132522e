// Following a SQLite session that another connection (another process) may still be writing. The
// follower keeps one read connection open: asking whether anything changed is one PRAGMA (SQLite's
// data_version, which moves whenever another connection commits to the file), and a look runs its
// reads inside one read transaction, so a writer committing in the middle of a look (a call settling
// between the transcript read and the open operations read) is seen whole by the next look, not half
// by this one. The transaction ends before look() returns: a reader that kept one open between looks
// would stop every checkpoint from resetting the WAL, which would then grow for as long as it watched.
// Read-only: it never writes and never takes the writer's lock.
import type { SessionSnapshot } from "../jsonl/snapshot.js";
import { ensureSession, openDatabase, pragma, SqliteStore } from "./store.js";

export interface SqliteFollower {
  /** True when another connection committed since the last call (true on the first). */
  changed(): boolean;
  /** Runs `read` over one consistent state of the session (a read transaction, ended before it returns). */
  look<R>(read: (snap: SessionSnapshot) => R): R;
  close(): void;
}

export function followSqliteSession(path: string, sessionId: string): SqliteFollower {
  const db = openDatabase(path, "process", false);
  let store: SqliteStore;
  try {
    ensureSession(db, path, sessionId, false);
    store = new SqliteStore(db, sessionId);
  } catch (e) {
    db.close();
    throw e;
  }
  let version: number | undefined;
  return {
    changed() {
      const now = pragma(db, "data_version");
      const was = version;
      version = now;
      return was !== now;
    },
    look(read) {
      db.exec("BEGIN");
      try {
        return read(store);
      } finally {
        db.exec("COMMIT");
      }
    },
    close() {
      void store.close();
    },
  };
}
