// The session repository on PostgreSQL: sessions live in the database; each still has a local
// directory under `root` for the files a run writes beside its log (spill/, results/, archive/) and,
// if the database goes away mid-run, the local fallback log `session.jsonl`.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { SessionInfo, SessionOpenOptions, SessionRepo } from "../repo.js";
import type { Store } from "../store.js";
import { deletePostgresSession, forkPostgresSession, listPostgresSessions } from "./catalog.js";
import { redactUrl } from "./redact.js";
import { checkSessionId, openPostgresStore, type PostgresStoreOptions } from "./store.js";

export interface PostgresRepoOptions extends Omit<PostgresStoreOptions, "sessionId" | "create" | "fallbackPath"> {
  /** Keep the fallback log in each session's local directory (default true). */
  readonly localFallback?: boolean;
}

export function openPostgresSessionRepo(url: string | undefined, root: string, options: PostgresRepoOptions = {}): SessionRepo {
  const shown = url === undefined ? "postgres (PG* environment)" : redactUrl(url);
  const info = (id: string): SessionInfo => ({ id, dir: join(root, id), file: `${shown}#${id}` });
  const open = async (id: string, create: boolean | "new", o: SessionOpenOptions = {}): Promise<Store> => {
    const s = info(id);
    const made = !existsSync(s.dir);
    mkdirSync(s.dir, { recursive: true });
    try {
      return await openPostgresStore(url, {
        ...options,
        ...(o.durability !== undefined ? { durability: o.durability } : {}),
        sessionId: id,
        create,
        ...(options.localFallback === false ? {} : { fallbackPath: join(s.dir, "session.jsonl") }),
      });
    } catch (err) {
      // A session the database never took leaves no directory behind (nothing lists or collects it).
      if (made) rmSync(s.dir, { recursive: true, force: true });
      throw err;
    }
  };
  return {
    root,
    backend: "postgres",
    async create(o = {}) {
      const s = info(checkSessionId(o.id ?? randomUUID()));
      return { ...s, store: await open(s.id, "new", o) };
    },
    open: (id, o = {}) => open(checkSessionId(id), o.create === true, o),
    async list() {
      return (await listPostgresSessions(url, options)).map((s) => info(s.id));
    },
    delete: (id) => deletePostgresSession(url, id, options),
    async fork(id, o = {}) {
      const dst = info(checkSessionId(o.id ?? randomUUID()));
      await forkPostgresSession(url, id, dst.id, options);
      return dst;
    },
  };
}
