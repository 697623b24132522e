// The sessions under a spool root (`.spool/sessions/<id>/`, JSONL or SQLite), read without disturbing a
// process that may still be writing one: JSONL through a lock-free snapshot, SQLite through its own
// connection (SQLite arbitrates readers itself).
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { SpoolError } from "../errors/index.js";
import { OPEN_OPERATIONS, operationScope, transcriptEntries } from "../harness/index.js";
import {
  ownerLiveness,
  isSessionId,
  listPostgresSessions,
  openSqliteStore,
  readJsonlSnapshot,
  readPostgresSnapshot,
  sessionsDir,
  sidecarDir,
  sidecarName,
  type PostgresSessionHead,
  type SessionSnapshot,
} from "../store/index.js";
import type { DatabaseTarget, StoreTarget } from "./store-option.js";
import { callRecords, directorySize, RUN_INFO, runInfoOf, sessionHeader, viewFromSnapshot, type SessionSummary, type SessionView } from "./session-view.js";

export interface SessionEntry {
  readonly id: string;
  readonly dir: string;
  readonly file: string;
  readonly backend: "jsonl" | "sqlite" | "postgres";
  /** postgres: the database URL (`file` shows it redacted), whether a writer holds it now, stored bytes. */
  readonly url?: string;
  readonly live?: boolean;
  readonly storedBytes?: number;
  /** postgres: the seq its next commit takes, as listed (what a file's size and mtime are to a file session). */
  readonly nextSeq?: number;
}

/** The sessions of the store named by --store: a root's directories, or a database's rows. */
export async function listEntries(root: string, target: StoreTarget): Promise<SessionEntry[]> {
  if (target.kind !== "postgres") return listSessions(root);
  return (await listPostgresSessions(target.url)).map((s) => databaseEntry(root, target, s, s.bytes));
}

/** A database session as the CLI lists it (`root`: where its local files would be). */
export function databaseEntry(root: string, target: DatabaseTarget, head: PostgresSessionHead, storedBytes: number): SessionEntry {
  return {
    id: head.id,
    dir: join(sessionsDir(root), head.id),
    file: `${target.shown}#${head.id}`,
    backend: "postgres",
    url: target.url,
    live: head.live,
    storedBytes,
    nextSeq: head.nextSeq,
  };
}

/** Accepts a full id or a unique prefix of one, in the store named by --store. */
export async function findEntry(root: string, target: StoreTarget, id: string): Promise<SessionEntry> {
  if (target.kind !== "postgres") return findSession(root, id);
  return pick(await listEntries(root, target), id, `in ${target.shown}`);
}

/** No session, or an ambiguous prefix: bad input (exit 2). */
export class SessionLookupError extends SpoolError {
  constructor(message: string) {
    super("SPOOL_CLI_NO_SUCH_SESSION", message);
  }
}

export function listSessions(root: string): SessionEntry[] {
  const dir = sessionsDir(root);
  if (!existsSync(dir)) return [];
  const out: SessionEntry[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory() || !isSessionId(e.name)) continue;
    const sdir = join(dir, e.name);
    if (existsSync(join(sdir, "session.jsonl"))) out.push({ id: e.name, dir: sdir, file: join(sdir, "session.jsonl"), backend: "jsonl" });
    else if (existsSync(join(sdir, "session.sqlite"))) out.push({ id: e.name, dir: sdir, file: join(sdir, "session.sqlite"), backend: "sqlite" });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Directories under the root that look like a session but cannot be listed as one, each with what is wrong. */
export function sessionDirWarnings(root: string): string[] {
  const dir = sessionsDir(root);
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const sdir = join(dir, e.name);
    if (e.isSymbolicLink() && isSessionId(e.name)) {
      out.push(`${e.name}: ${sdir} is a symbolic link, which spool does not follow; put the session directory itself there`);
      continue;
    }
    if (!e.isDirectory()) continue;
    try {
      accessSync(sdir, constants.R_OK | constants.X_OK);
    } catch (err) {
      // Removed since the directory was read (a gc running beside us): nothing to say about it.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      out.push(`${e.name}: ${sdir} cannot be read (${(err as NodeJS.ErrnoException).code}); fix its permissions to list it`);
      continue;
    }
    const main = join(sdir, "session.jsonl");
    if (!existsSync(main) && !existsSync(join(sdir, "session.sqlite")) && existsSync(sidecarDir(main))) {
      out.push(
        `${e.name}: sidecar directory ${sidecarDir(main)} has no main log ${main}; the session cannot be opened (restore the log, or delete the directory)`,
      );
    }
  }
  return out;
}

/**
 * A listed session whose main log is gone since it was listed: removed meanwhile (`spool gc` in
 * another process, or by hand). A reader that fails on it has nothing to report: it is no longer there.
 */
export function removedSinceListed(entry: SessionEntry): boolean {
  return entry.backend !== "postgres" && !existsSync(entry.file);
}

/** Accepts a full id, a unique prefix of one, or the session's directory (the path `spool run` prints). */
export function findSession(root: string, id: string): SessionEntry {
  const all = listSessions(root);
  if (id.includes(sep)) {
    const dir = resolve(id);
    const hit = all.find((s) => resolve(s.dir) === dir);
    if (hit) return hit;
    throw new SessionLookupError(`no session directory ${JSON.stringify(id)} under ${sessionsDir(root)}; give its id, or --root for the directory it is in`);
  }
  return pick(all, id, `under ${sessionsDir(root)}`);
}

function pick(all: SessionEntry[], id: string, where: string): SessionEntry {
  // Every id starts with "": an empty SESSION picked the only session there was (and `repair ''` repaired it).
  if (id === "") throw new SessionLookupError("SESSION is empty; give a session id (or a unique prefix of one) from `spool sessions`");
  const exact = all.find((s) => s.id === id);
  if (exact) return exact;
  const matches = all.filter((s) => s.id.startsWith(id));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    throw new SessionLookupError(
      `"${id}" matches ${matches.length} sessions (${matches
        .slice(0, 3)
        .map((s) => s.id)
        .join(", ")}…); give more of the id`,
    );
  // Quoted as JSON: an argument with escape sequences is shown, not played to the terminal.
  throw new SessionLookupError(`no session ${JSON.stringify(id)} ${where}; \`spool sessions\` lists them`);
}

/** `read` may be async (a report streamed out page by page): the snapshot stays open until it settles. */
export async function withSnapshot<R>(entry: SessionEntry, read: (snap: SessionSnapshot) => R | PromiseLike<R>): Promise<R> {
  if (entry.backend === "jsonl") return read(readJsonlSnapshot(entry.file));
  if (entry.backend === "postgres") return read(await readPostgresSnapshot(entry.url, entry.id));
  const store = await openSqliteStore(entry.file, { create: false, sessionId: entry.id });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

export interface LoadedSession {
  readonly entry: SessionEntry;
  readonly view: SessionView;
  readonly summary: SessionSummary;
  /** The process that records it is still running. */
  readonly live: boolean;
  /** That process, while it runs on this machine. */
  readonly writer?: number;
  /** Damage that does not stop the session loading, e.g. an open operation whose sidecar is missing. */
  readonly warnings: readonly string[];
}

/**
 * Whether the process recording this session still runs (`writer`: its pid, when it runs on this
 * machine where spool can see it). A recorder on another host, or in a container that is still up,
 * cannot be checked and counts as live; one in a container that is gone is not.
 */
export function writerLiveness(snap: Pick<SessionSnapshot, "get">): { live: boolean; writer?: number } {
  const info = snap.get(RUN_INFO);
  if (info?.status !== "running") return { live: false };
  const liveness = ownerLiveness(info);
  return liveness === "alive" ? { live: true, writer: info.pid } : { live: liveness === "unknown" };
}

/** A session's line in the session list; `bytes`: what its directory holds. */
export function summaryOf(
  entry: SessionEntry,
  view: Pick<SessionView, "command" | "status" | "reason" | "startedAt" | "endedAt" | "lastActivityAt" | "exitCode">,
  bytes: number,
): SessionSummary {
  return {
    id: entry.id,
    command: view.command,
    status: view.status,
    ...(view.reason !== undefined ? { reason: view.reason } : {}),
    startedAt: view.startedAt,
    endedAt: view.endedAt,
    lastActivityAt: view.lastActivityAt,
    exitCode: view.exitCode,
    bytes: bytes + (entry.storedBytes ?? 0),
  };
}

/** Whether the session's writer still runs, and which process it is when it runs on this machine. */
export function livenessOf(entry: SessionEntry, snap: Pick<SessionSnapshot, "get">): { live: boolean; writer?: number } {
  // A database session's writer may be on another machine: its lease says whether it lives.
  if (entry.backend === "postgres") return { live: entry.live === true };
  return writerLiveness(snap);
}

/** The view and summary of a session from a snapshot of it (a fresh one, or a follower's). */
export function sessionFromSnapshot(entry: SessionEntry, snap: Pick<SessionSnapshot, "get" | "readList">): LoadedSession {
  const liveness = livenessOf(entry, snap);
  const view = viewFromSnapshot(entry.id, snap, liveness.live);
  const summary = summaryOf(entry, view, directorySize(entry.dir));
  return { entry, view, summary, ...liveness, warnings: sessionWarnings(entry, snap, liveness.live) };
}

/** Damage that does not stop a session loading: an open operation of a stopped run whose sidecar is missing. */
export function sessionWarnings(entry: SessionEntry, snap: Pick<SessionSnapshot, "get">, live: boolean): string[] {
  const warnings: string[] = [];
  if (entry.backend === "jsonl" && !live) {
    for (const opId of Object.keys(snap.get(OPEN_OPERATIONS) ?? {})) {
      const sidecar = join(sidecarDir(entry.file), sidecarName(operationScope(opId).id));
      // A sidecar is made by an operation's first durable write: one that wrote nothing has none.
      if (!existsSync(sidecar)) {
        warnings.push(
          `${entry.id}: operation ${opId} was still open when its run stopped, and its sidecar ${sidecar} is missing: it wrote nothing durable before the stop, or the sidecar was removed and what it wrote is lost`,
        );
      }
    }
  }
  return warnings;
}

export async function loadSession(entry: SessionEntry): Promise<LoadedSession> {
  return withSnapshot(entry, (snap) => sessionFromSnapshot(entry, snap));
}

/** Transcript entries held at a time while a summary folds the call records. */
const SUMMARY_PAGE = 100;

/**
 * A session's summary without its view (`spool sessions`, `gc`): the latest activity folded over the
 * call records as the transcript is read page by page, so memory is one page whatever the session's
 * length (the whole view of a 1 GB `spool run` log held 1.3 GB). The same summary as sessionFromSnapshot's.
 */
export function summaryFromSnapshot(entry: SessionEntry, snap: Pick<SessionSnapshot, "get" | "readList">): Omit<LoadedSession, "view"> {
  const liveness = livenessOf(entry, snap);
  const info = runInfoOf(snap);
  const records = callRecords(snap, info);
  for (const m of transcriptEntries(snap, SUMMARY_PAGE)) records.record(m.toolCallId);
  for (const op of Object.values(snap.get(OPEN_OPERATIONS) ?? {})) for (const c of op.calls) records.record(c.toolCallId);
  const summary = summaryOf(entry, { ...sessionHeader(info, liveness.live), lastActivityAt: records.lastActivityAt }, directorySize(entry.dir));
  return { entry, summary, ...liveness, warnings: sessionWarnings(entry, snap, liveness.live) };
}

export async function loadSummary(entry: SessionEntry): Promise<Omit<LoadedSession, "view">> {
  return withSnapshot(entry, (snap) => summaryFromSnapshot(entry, snap));
}
