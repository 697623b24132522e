// The session repository: one directory per session under a root (`.spool/sessions/<id>/`), holding
// the main log (`session.jsonl` or `session.sqlite`) next to the session's other files.
import { randomUUID } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { CorruptSessionError, SessionDirError, SessionExistsError, SessionNotFoundError } from "./errors.js";
import { checkSessionId, ensureDir, isSessionId } from "./layout.js";
import { removeSessionUnderLock } from "./remove-session-under-lock.js";
import { encodeHeader, encodeTransaction } from "./jsonl/records.js";
import { loadSession } from "./jsonl/replay.js";
import { createWithHeader, newSessionHeader, openJsonlStore } from "./jsonl/store.js";
import { openSingleWriter } from "./single-writer.js";
import { forkSqliteSession, openSqliteStore, requireSqlite } from "./sqlite/store.js";
import { openPostgresSessionRepo, type PostgresRepoOptions } from "./postgres/repo.js";
import type { Durability, Store } from "./store.js";

export type RepoBackend = "jsonl" | "sqlite" | "postgres";

export interface SessionOpenOptions {
  readonly durability?: Durability;
  /** JSONL only: see JsonlStoreOptions.syncIntervalMs. */
  readonly syncIntervalMs?: number;
}

export interface SessionInfo {
  readonly id: string;
  /** The session directory (also the workspace root for spill/, results/, archive/). */
  readonly dir: string;
  /** The main log file. */
  readonly file: string;
}

export interface SessionRepo {
  readonly root: string;
  readonly backend: RepoBackend;
  create(options?: SessionOpenOptions & { readonly id?: string }): Promise<SessionInfo & { readonly store: Store }>;
  /**
   * `create: true` starts the session when it does not exist yet — also in a directory that holds no
   * session (made by hand, by a workspace, or left by a crash before the log was written), which
   * `create` refuses as existing. The session's lock keeps two openers apart.
   */
  open(id: string, options?: SessionOpenOptions & { readonly create?: boolean }): Promise<Store>;
  /** Sessions sorted by id; anything that is not a session directory with its main log is ignored. */
  list(): Promise<SessionInfo[]>;
  /**
   * Removes the session under its lock (SessionLockedError while a writer, or `spool gc`, holds it):
   * sidecars and the rest of the directory first, the main log last (a removal cut short leaves the
   * session listed, whole enough to delete again), then the directory.
   */
  delete(id: string): Promise<void>;
  /** A new session holding the source's session-scoped state only: no ephemeral scopes, no retirements. */
  fork(id: string, options?: { readonly id?: string }): Promise<SessionInfo>;
}

const MAIN_FILE: Record<"jsonl" | "sqlite", string> = { jsonl: "session.jsonl", sqlite: "session.sqlite" };

/**
 * `backend: "postgres"` keeps sessions in the database named by `url` (or the PG* environment), with
 * a local directory per session under `root` for its files.
 */
export function openSessionRepo(
  root: string,
  options: { readonly backend: RepoBackend; readonly url?: string; readonly postgres?: PostgresRepoOptions },
): SessionRepo {
  const backend = options.backend;
  if (backend === "postgres") return openPostgresSessionRepo(options.url, root, options.postgres);
  if (backend !== "jsonl" && backend !== "sqlite")
    throw new TypeError(`unknown session backend ${JSON.stringify(backend)}: use "jsonl", "sqlite" or "postgres"`);
  if (backend === "sqlite") requireSqlite();
  const info = (id: string): SessionInfo => {
    const dir = join(root, id);
    return { id, dir, file: join(dir, MAIN_FILE[backend]) };
  };
  const openStore = (s: SessionInfo, create: boolean, o: SessionOpenOptions = {}): Promise<Store> =>
    backend === "jsonl"
      ? openJsonlStore(s.file, { ...o, create, sessionId: s.id })
      : openSingleWriter(s.file, (relock) => openSqliteStore(s.file, { durability: o.durability ?? "process", create, sessionId: s.id }, relock));
  const makeDir = (s: SessionInfo): void => {
    ensureDir(root);
    try {
      mkdirSync(s.dir, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") throw new SessionExistsError(s.dir);
      throw e;
    }
  };
  /**
   * A directory without the main log that still holds what belonged to one (its checkpoint, sidecars or
   * WAL, or the other backend's log) is not started afresh: a new log beside them would take them for
   * its own. Lock and temp files are no such remains: a run killed before its log was written leaves them.
   */
  const refuseRemains = (s: SessionInfo): void => {
    // Not a directory (a file of the session's name): ensureDir says so, where readdir said ENOTDIR.
    if (!statSync(s.dir, { throwIfNoEntry: false })?.isDirectory()) return;
    const other = MAIN_FILE[backend === "jsonl" ? "sqlite" : "jsonl"];
    if (existsSync(join(s.dir, other))) throw new SessionExistsError(`${join(s.dir, other)} (a ${backend === "jsonl" ? "SQLite" : "JSONL"} session)`);
    const log = basename(s.file);
    const remains = readdirSync(s.dir).filter(
      (n) => (n.startsWith(`${log}.`) || n.startsWith(`${log}-`)) && !n.startsWith(`${log}.lock`) && !n.endsWith(".tmp"),
    );
    if (remains.length > 0) {
      throw new CorruptSessionError(
        s.file,
        0,
        `the log is missing but ${remains.map((n) => join(s.dir, n)).join(", ")} ${remains.length === 1 ? "is" : "are"} still there`,
      );
    }
  };
  /**
   * A symbolic link in place of a session directory is not followed: list() and every reader skip it,
   * so a writer that followed it wrote a session no one sees, outside the root (`run --session ID`).
   */
  const refuseLink = (s: SessionInfo): void => {
    if (lstatSync(s.dir, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new SessionDirError(
        s.dir,
        "it is a symbolic link, which spool does not follow (sessions, inspect and gc would not see the session); put the session directory itself there",
      );
    }
  };
  const existing = (id: string): SessionInfo => {
    const s = info(checkSessionId(id));
    refuseLink(s);
    if (!existsSync(s.file)) throw new SessionNotFoundError(s.file);
    return s;
  };

  return {
    root,
    backend,
    async create(o = {}) {
      const s = info(checkSessionId(o.id ?? randomUUID()));
      makeDir(s);
      return { ...s, store: await openStore(s, true, o) };
    },
    async open(id, o = {}) {
      if (o.create !== true) return openStore(existing(id), false, o);
      const s = info(checkSessionId(id));
      refuseLink(s);
      if (!existsSync(s.file)) refuseRemains(s);
      ensureDir(s.dir);
      return openStore(s, true, o);
    },
    async list() {
      if (!existsSync(root)) return [];
      return readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory() && isSessionId(e.name))
        .map((e) => info(e.name))
        .filter((s) => existsSync(s.file))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    async delete(id) {
      const s = existing(id);
      // Under the session's lock, as gc removes: checking the lock, then removing, removed the session
      // of a writer that opened it in between.
      if (removeSessionUnderLock(s.dir, s.file) === "gone") throw new SessionNotFoundError(s.file);
    },
    async fork(id, o = {}) {
      const src = existing(id);
      const dst = info(checkSessionId(o.id ?? randomUUID()));
      makeDir(dst);
      try {
        if (backend === "sqlite") {
          forkSqliteSession({ path: src.file, sessionId: src.id }, { path: dst.file, sessionId: dst.id });
        } else {
          // Read-only: a writer may be appending; a torn tail is ignored, never repaired from here.
          const loaded = loadSession(src.file, { repair: false, sessionOnly: true });
          let lines = "";
          for (const r of loaded.state.sessionRecords()) lines += encodeTransaction(r.seq, "", [r.write]);
          const header = newSessionHeader(dst.id, loaded.highWater + 1, { sessionId: loaded.header.sessionId, seq: loaded.highWater });
          createWithHeader(dst.file, encodeHeader(header), false, lines);
        }
      } catch (e) {
        rmSync(dst.dir, { recursive: true, force: true });
        throw e;
      }
      return dst;
    },
  };
}
