// The three backends behind one factory, so the conformance suite runs unchanged against each.
import { join } from "node:path";
import { createMemoryStore, openJsonlStore, openPostgresStore, openSqliteStore, type Durability, type Store } from "../../../src/store/index.js";
import { removeTempDirs as removeScratch, tempDir as scratch } from "../../support/temp.js";
import { stopTestDatabase, testDatabase, uniqueSchema, uniqueSession } from "./pg.js";

export interface Backend {
  readonly name: "memory" | "jsonl" | "sqlite" | "postgres";
  readonly durable: boolean;
  /** A fresh, empty session. */
  fresh(): Promise<Session>;
}

export interface Session {
  store: Store;
  /** Close (if still open) and open the same session again. Memory sessions cannot. */
  reopen(): Promise<Store>;
  readonly path: string;
}

/** The shared scratch directories (test/support/temp.ts), named for the store by default. */
export const tempDir = (prefix = "spool-store-"): string => scratch(prefix);
/** Removes the temp dirs, and stops the throwaway PostgreSQL cluster if this file started one. */
export function removeTempDirs(): Promise<void> {
  removeScratch();
  return stopTestDatabase();
}

function durableSession(open: (path: string) => Promise<Store>, file: string): () => Promise<Session> {
  return async () => {
    const path = join(tempDir(), file);
    const s: Session = {
      path,
      store: await open(path),
      async reopen() {
        await s.store.close();
        s.store = await open(path);
        return s.store;
      },
    };
    return s;
  };
}

const pgSchema = uniqueSchema("conf");

export function backends(durability: Durability = "process"): Backend[] {
  return [
    {
      name: "memory",
      durable: false,
      async fresh() {
        return {
          path: ":memory:",
          store: createMemoryStore(),
          reopen: () => Promise.reject(new Error("memory sessions cannot reopen")),
        };
      },
    },
    { name: "jsonl", durable: true, fresh: durableSession((p) => openJsonlStore(p, { durability }), "session.jsonl") },
    { name: "sqlite", durable: true, fresh: durableSession((p) => openSqliteStore(p, { durability }), "session.sqlite") },
    {
      name: "postgres",
      durable: true,
      async fresh() {
        const { url } = await testDatabase();
        const sessionId = uniqueSession();
        const open = () => openPostgresStore(url, { schema: pgSchema, sessionId, durability });
        const s: Session = {
          path: `${url}#${sessionId}`,
          store: await open(),
          async reopen() {
            await s.store.close();
            s.store = await open();
            return s.store;
          },
        };
        return s;
      },
    },
  ];
}
