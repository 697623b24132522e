// What `spool serve` keeps current: one `session:<id>` state per session under a root, and the
// `sessions` list. Each tick costs a few stats per session when nothing changed. A finished session is
// read once (and again only if its files change, e.g. a later `spool run --session` adds to it); a
// live JSONL session is followed from the byte offsets already read, so a change costs its new bytes;
// a live SQLite session is re-read when its database or WAL changes, a database (PostgreSQL) session
// when a commit is announced for it or its writer comes or goes. A session that cannot be read is
// reported once, and tried again only when it changes.
// Measured before (every session re-read before the change check): 7 finished sessions, the largest
// log 150 MB, held 1.04 GB and 0.55 CPU-seconds per second with nobody watching, and a damaged session
// printed its "skipping" line every tick.
import { statSync } from "node:fs";
import type { MutableState, StateHost } from "../harness/index.js";
import { followJsonlSession, type JsonlFollower } from "../store/index.js";
import { liveWriter, loadSession, processAlive, sessionFromSnapshot, type LoadedSession, type SessionEntry } from "./session-catalog.js";
import type { SessionSummary, SessionView } from "./session-view.js";

export interface SessionWatch {
  /** Look at every session once: pick up new, changed, finished and removed ones. */
  refresh(): Promise<void>;
  /** Sessions served. */
  readonly count: number;
}

interface Watched {
  state?: MutableState<SessionView>;
  summary?: SessionSummary;
  /** While a JSONL session's writer runs. */
  follower?: JsonlFollower;
  /** Size, time and inode of the session's files when last read (unfollowed sessions only). */
  stamp: string;
  /** The running writer of a session read whole (SQLite), to notice when it stops. */
  writer?: number;
  live: boolean;
  reported?: string;
}

function statStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return "-";
  }
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
  /** What stands in for a database session's file stamp (e.g. the last commit announced for it). */
  readonly databaseStamp?: (entry: SessionEntry) => string;
}

export function watchSessions(host: StateHost, options: WatchOptions): SessionWatch {
  const { report } = options;
  const stampOf = (entry: SessionEntry): string =>
    entry.backend === "postgres" ? `db:${options.databaseStamp?.(entry) ?? ""}:${entry.live === true}` : fileStamp(entry);
  const list = host.state("sessions", { sessions: [] as SessionSummary[] });
  const watched = new Map<string, Watched>();

  const publish = (id: string, w: Watched, loaded: LoadedSession): void => {
    if (!w.state) w.state = host.state(`session:${id}`, loaded.view);
    // Assigned whole and diffed by the tracker: a grown output leaves as an append.
    else w.state.mutate((v) => Object.assign(v, loaded.view));
    w.summary = loaded.summary;
    w.live = loaded.live;
  };

  /** True when the session's state or summary changed. */
  const look = async (entry: SessionEntry, w: Watched): Promise<boolean> => {
    const stamp = stampOf(entry);
    if (w.follower) {
      const grew = w.follower.poll();
      const snap = w.follower.snapshot;
      const live = liveWriter(snap) !== undefined;
      if (!live) {
        w.follower = undefined;
        w.stamp = stamp;
      }
      if (!grew && live === w.live) return false;
      publish(entry.id, w, sessionFromSnapshot(entry, snap));
      return true;
    }
    const writerGone = w.writer !== undefined && !processAlive(w.writer);
    if (stamp === w.stamp && !writerGone) return false;
    w.stamp = stamp;
    if (entry.backend === "jsonl") {
      const follower = followJsonlSession(entry.file);
      const loaded = sessionFromSnapshot(entry, follower.snapshot);
      publish(entry.id, w, loaded);
      if (loaded.live) w.follower = follower;
    } else {
      const loaded = await loadSession(entry);
      publish(entry.id, w, loaded);
      w.writer = loaded.writer;
    }
    return true;
  };

  return {
    get count() {
      let n = 0;
      for (const w of watched.values()) if (w.state) n++;
      return n;
    },
    async refresh() {
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
          w.follower = undefined;
          w.stamp = stampOf(entry);
          const message = (err as Error).message;
          if (w.reported !== message) report(`spool serve: skipping ${entry.id}: ${message}`);
          w.reported = message;
        }
      }
      for (const [id, w] of watched) {
        if (present.has(id)) continue;
        watched.delete(id);
        w.state?.close();
        changed = true;
      }
      if (!changed) return;
      const summaries: SessionSummary[] = [];
      for (const id of [...watched.keys()].sort()) {
        const s = watched.get(id)!.summary;
        if (s) summaries.push(s);
      }
      list.mutate((l) => void (l.sessions = summaries));
    },
  };
}
