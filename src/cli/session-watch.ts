// What `spool serve` keeps current: one `session:<id>` state per session under a root, and the
// `sessions` list. Each tick costs a few stats per session when nothing changed. A finished session is
// read once (and again only if its files change, e.g. a later `spool run --session` adds to it); a
// live JSONL session is followed from the byte offsets already read, a live SQLite session through one
// read connection that asks the database whether another connection committed; either way its view is
// kept current from what it already holds (session-follow.ts), so a change costs about what changed.
// A live database (PostgreSQL) session is followed through one connection that reads, when the
// listing shows a commit since (its next seq moved), what was committed since
// (store/postgres/follow-session.ts); a finished one is read when its writer goes or its next seq
// moves. A session that cannot be read is reported once, and tried again only when it changes — or at
// the next look when the database could not be reached.
// Measured before (every session re-read before the change check): 7 finished sessions, the largest
// log 150 MB, held 1.04 GB and 0.55 CPU-seconds per second with nobody watching, and a damaged session
// printed its "skipping" line every tick.
import { statSync, type Stats } from "node:fs";
import type { MutableState, StateHost } from "../harness/index.js";
import { DatabaseError, followJsonlSession, followPostgresSession, followSqliteSession, SessionChangedError, type SessionSnapshot } from "../store/index.js";
import { loadSession, removedSinceListed, sessionFromSnapshot, summaryOf, type LoadedSession, type SessionEntry, writerLiveness } from "./session-catalog.js";
import { followView, type FollowedView } from "./session-follow.js";
import { directorySize, type SessionSummary, type SessionView } from "./session-view.js";

export interface SessionWatch {
  /** Look at every session once: pick up new, changed, finished and removed ones. */
  refresh(): Promise<void>;
  /** Sessions served. */
  readonly count: number;
  /** No session is live and the last refresh found nothing changed: the looks may come less often. */
  readonly quiet: boolean;
  /** Times a followed session's view was read whole (on being followed, or after what it could not follow). */
  readonly rebuilds: number;
  /** Stops following: every session's store connection closed (after a refresh that is running). */
  close(): Promise<void>;
}

/** A session followed through its store while its writer runs (JSONL files, a SQLite or a PostgreSQL connection). */
interface Follower {
  /** Reads what changed since the last poll; true when anything did. */
  poll(): boolean | Promise<boolean>;
  /** Runs `read` over the session as of the last poll. */
  read<R>(read: (snap: SessionSnapshot) => R): R;
  /** The session was rewritten under the view: read it again from the start. */
  restart(): void;
  /** Damage the last poll left unread as a write in flight; throws it once no writer runs (files only). */
  settled?(): void;
  close(): void;
}

async function followerOf(entry: SessionEntry): Promise<Follower> {
  if (entry.backend === "postgres") {
    const db = await followPostgresSession(entry.url, entry.id);
    return { poll: () => db.poll(), read: (read) => read(db.snapshot), restart: () => {}, close: () => void db.close() };
  }
  if (entry.backend === "sqlite") {
    const db = followSqliteSession(entry.file, entry.id);
    return { poll: () => db.changed(), read: (read) => db.look(read), restart: () => {}, close: () => db.close() };
  }
  const files = followJsonlSession(entry.file);
  return {
    poll: () => files.poll(),
    read: (read) => read(files.snapshot),
    restart: () => void files.poll(),
    settled: () => {
      const damage = files.damage();
      if (damage) throw damage;
    },
    close: () => {},
  };
}

interface Watched {
  state?: MutableState<SessionView>;
  summary?: SessionSummary;
  /** While the session's writer runs: its store followed, and its view kept current. */
  follower?: Follower;
  view?: FollowedView;
  /** The main log's inode when the view was read whole: another file in its place is read whole again. */
  logIno?: number;
  /** The followed session's directory size when last walked, its main log's size then, and when to walk again. */
  walked?: { bytes: number; log: number; next: number };
  /** Size, time and inode of the session's files when last read (unfollowed sessions only). */
  stamp: string;
  /** A database session's stored bytes as counted in its summary (the listing sums them apart). */
  storedBytes?: number;
  live: boolean;
  reported?: string;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function statStamp(path: string): string {
  const st = statOrUndefined(path);
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : "-";
}

function fileStamp(entry: SessionEntry): string {
  return entry.backend === "jsonl"
    ? `${statStamp(entry.file)}|${statStamp(`${entry.file}.scopes`)}`
    : `${statStamp(entry.file)}|${statStamp(`${entry.file}-wal`)}`;
}

export interface WatchOptions {
  /** The sessions to serve, looked up on every refresh. */
  readonly list: () => Promise<SessionEntry[]>;
  /** One line per session that cannot be read (once per problem). */
  readonly report: (line: string) => void;
}

export function watchSessions(host: StateHost, options: WatchOptions): SessionWatch {
  const { report } = options;
  const stampOf = (entry: SessionEntry): string => (entry.backend === "postgres" ? `db:${entry.nextSeq ?? ""}:${entry.live === true}` : fileStamp(entry));
  const list = host.state("sessions", { sessions: [] as SessionSummary[] });
  const watched = new Map<string, Watched>();

  let rebuilds = 0;

  const publish = (id: string, w: Watched, loaded: Pick<LoadedSession, "view" | "summary" | "live">): void => {
    if (!w.state) w.state = host.state(`session:${id}`, loaded.view);
    // Assigned whole and diffed by the tracker: a grown output leaves as an append.
    else w.state.mutate((v) => Object.assign(v, loaded.view));
    w.summary = loaded.summary;
    w.live = loaded.live;
  };

  /**
   * A followed session's size. A walk stats every file (a long session's spill files make it O(calls)),
   * so it is walked at most every second or 100 times its own cost, and its main log's growth added in
   * between; walked again when its writer stops.
   */
  const followedBytes = (entry: SessionEntry, w: Watched, live: boolean, log: number): number => {
    const now = performance.now();
    if (w.walked === undefined || now >= w.walked.next || !live) {
      const bytes = directorySize(entry.dir);
      w.walked = { bytes, log, next: now + Math.max(1000, 100 * (performance.now() - now)) };
      return bytes;
    }
    return w.walked.bytes + log - w.walked.log;
  };

  /** A followed session's view brought up to date: from what it holds when it can, else read whole. */
  const follow = (entry: SessionEntry, w: Watched, follower: Follower, snap: SessionSnapshot, live: boolean): void => {
    const log = statOrUndefined(entry.file);
    if (w.view && w.state && log?.ino === w.logIno) {
      try {
        if (w.view.update(w.state, live)) {
          w.summary = summaryOf(entry, w.state.value, followedBytes(entry, w, live, log?.size ?? 0));
          w.storedBytes = entry.storedBytes;
          w.live = live;
          return;
        }
      } catch (err) {
        // The log was rewritten under the reader: read it again from the start, then whole.
        if (!(err instanceof SessionChangedError)) throw err;
        follower.restart();
      }
    }
    rebuilds++;
    w.storedBytes = entry.storedBytes;
    w.logIno = log?.ino;
    w.view = followView(entry.id, snap, live);
    publish(entry.id, w, { view: w.view.view, summary: summaryOf(entry, w.view.view, followedBytes(entry, w, live, log?.size ?? 0)), live });
  };

  /** True when the session's state or summary changed. */
  const look = async (entry: SessionEntry, w: Watched): Promise<boolean> => {
    if (w.follower) {
      const follower = w.follower;
      let grew: boolean;
      if (entry.backend === "postgres") {
        // Read only when the listing shows a commit since (its next seq moved) or the lease came or went.
        const stamp = stampOf(entry);
        grew = stamp !== w.stamp && (await follower.poll());
        w.stamp = stamp;
      } else grew = await follower.poll();
      let changed = follower.read((snap) => {
        const live = isLive(entry, snap);
        if (!grew && live === w.live) return false;
        follow(entry, w, follower, snap, live);
        return true;
      });
      if (!changed && w.summary && entry.storedBytes !== w.storedBytes) {
        // A database session's size, summed again by the listing after its last commit was read.
        w.summary = { ...w.summary, bytes: w.summary.bytes - (w.storedBytes ?? 0) + (entry.storedBytes ?? 0) };
        w.storedBytes = entry.storedBytes;
        changed = true;
      }
      if (!w.live) {
        unfollow(w);
        w.stamp = stampOf(entry);
      }
      return changed;
    }
    const stamp = stampOf(entry);
    if (stamp === w.stamp) return false;
    w.stamp = stamp;
    if (entry.backend === "postgres" && entry.live !== true) {
      publish(entry.id, w, await loadSession(entry));
      return true;
    }
    const follower = await followerOf(entry);
    let live: boolean;
    try {
      await follower.poll();
      live = follower.read((snap) => {
        if (!isLive(entry, snap)) {
          // Nobody writes it any more: what looked like a write in flight is damage, said as `sessions` says it.
          follower.settled?.();
          publish(entry.id, w, sessionFromSnapshot(entry, snap));
          return false;
        }
        w.view = undefined;
        follow(entry, w, follower, snap, true);
        return true;
      });
    } catch (err) {
      follower.close();
      throw err;
    }
    if (live) w.follower = follower;
    else follower.close();
    return true;
  };

  /** Whether the session's writer runs: a database session's lease says so, a file session's pid. */
  const isLive = (entry: SessionEntry, snap: SessionSnapshot): boolean => (entry.backend === "postgres" ? entry.live === true : writerLiveness(snap).live);

  /** Stops following a session (its writer stopped, it failed to read, or it is gone). */
  const unfollow = (w: Watched): void => {
    w.follower?.close();
    w.follower = undefined;
    w.view = undefined;
    w.walked = undefined;
  };

  /** One look at every session (refresh() runs these one at a time). */
  let lastChanged = true;
  const refreshOnce = async (): Promise<void> => {
    let changed = false;
    const present = new Set<string>();
    for (const entry of await options.list()) {
      present.add(entry.id);
      let w = watched.get(entry.id);
      if (!w) watched.set(entry.id, (w = { stamp: "", live: false }));
      try {
        if (await look(entry, w)) {
          changed = true;
          w.reported = undefined;
        }
      } catch (err) {
        if (removedSinceListed(entry)) {
          // Removed since the listing (a gc beside us): it leaves the list now, with nothing reported.
          present.delete(entry.id);
          continue;
        }
        unfollow(w);
        // A session that cannot be read is not read again until it changes, except when the database
        // could not be reached (a restart, a dropped connection): the next look tries again.
        w.stamp = err instanceof DatabaseError && err.problem === "unreachable" ? "" : stampOf(entry);
        const message = (err as Error).message;
        if (w.reported !== message) report(`spool serve: skipping ${entry.id}: ${message}`);
        w.reported = message;
      }
    }
    for (const [id, w] of watched) {
      if (present.has(id)) continue;
      watched.delete(id);
      unfollow(w);
      w.state?.close();
      changed = true;
    }
    lastChanged = changed;
    if (!changed) return;
    const summaries: SessionSummary[] = [];
    for (const id of [...watched.keys()].sort()) {
      const s = watched.get(id)!.summary;
      if (s) summaries.push(s);
    }
    list.mutate((l) => void (l.sessions = summaries));
  };

  // Refreshes never overlap: two at once would each start following a new live session (a database
  // follower holds a connection), and one would be lost. A refresh asked for while one runs makes
  // it look once more; its caller waits for that.
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;

  return {
    get count() {
      let n = 0;
      for (const w of watched.values()) if (w.state) n++;
      return n;
    },
    get rebuilds() {
      return rebuilds;
    },
    get quiet() {
      if (lastChanged) return false;
      for (const w of watched.values()) if (w.live) return false;
      return true;
    },
    refresh() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        try {
          do {
            again = false;
            await refreshOnce();
          } while (again && !closed);
        } finally {
          running = undefined;
        }
      })();
      return running;
    },
    async close() {
      closed = true;
      await running?.catch(() => {});
      for (const w of watched.values()) unfollow(w);
    },
  };
}
