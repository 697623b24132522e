// Following a JSONL session that another process may still be writing: the first poll starts from the
// main log's checkpoint when one matches (else from its first line) and reads the sidecars whole;
// every later poll costs a few stats when nothing changed and reads only the bytes appended since the
// byte offsets already consumed (complete lines only: a line still being written is picked up by the
// next poll), in chunks of at most 4 MiB. The session scope is indexed, not held (main-state.ts): its
// reads go to the file. A sidecar found unlinked is retired: the writer wrote the retirement before the
// unlink, so the main log read in the same poll holds it. Anything that cannot be an append — a file
// that shrank or was replaced, a sidecar gone with no retirement behind it — starts over from the
// beginning, except a sidecar replaced under its name (rewritten compactly, or a reused scope id's
// new lifetime), which is read again alone. (Every settled operation used to start over, since the
// unlink is seen before the main log is read: 69 ms and 8.4 MB read per settle at 10k transcript
// entries, 1.4 ms and 139 KiB since.)
// Read-only, lock-free, never repairs (the writer owns the files). Same rules as opening the session
// (replay.ts): headers checked, seqs increase per file, records hidden by a retirement are dropped.
import { Buffer } from "node:buffer";
import { closeSync, fstatSync, openSync, readdirSync, statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { SpoolError } from "../../errors/index.js";
import { CorruptSessionError } from "../errors.js";
import { sidecarDir } from "../layout.js";
import { DAMAGED_LAST_LINE, openLineAt } from "./line.js";
import { Boundaries } from "./checkpoint.js";
import { LogSource, readAt } from "./log-source.js";
import { checkpointStart, completeEnd } from "./main-scan.js";
import type { LineLoc } from "./list-segments.js";
import { MainState } from "./main-state.js";
import { checkMainHeader, checkVersion, decodeTransaction, SCOPE_FORMAT, toPrepared, type DecodedTransaction } from "./records.js";
import { readerSource, sidecarScopeId } from "./replay.js";
import { SessionState } from "./session-state.js";
import { snapshotOf, type SessionSnapshot } from "./snapshot.js";

export interface JsonlFollower {
  /** The session as read so far; reads through to the latest poll. */
  readonly snapshot: SessionSnapshot;
  /**
   * Reads what was appended since the last poll; true when the state changed. Throws
   * CorruptSessionError (file and line) when the session is damaged.
   */
  poll(): boolean;
  /** How many times a poll found the files rewritten under it and read the session again from the start. */
  readonly restarts: number;
  /** How many times a poll found a sidecar rewritten (compacted, or a new lifetime's) and read that one file again. */
  readonly rereads: number;
  /**
   * What the last poll left unread as possibly still being written: a damaged last line, or a main log
   * without its header. While a writer runs that is a write in flight; once none runs, it is damage.
   */
  damage(): CorruptSessionError | undefined;
}

interface Cursor {
  readonly path: string;
  /** null for the main log, else the sidecar's scope id. */
  readonly scope: string | null;
  ino: number;
  /** Bytes of complete, valid lines consumed so far. */
  offset: number;
  /** Lines consumed so far (for error positions). */
  lines: number;
  /** The last seq any consumed transaction used (seqs must increase). */
  lastSeq: number;
  size: number;
  mtimeMs: number;
  /** The bytes just before `offset` (the end of the last line's checksum): if they changed, the file was rewritten. */
  tail: Buffer;
}

const TAIL = 16;
const CHUNK = 4 * 1024 * 1024;

/** A transaction as read by a poll; main-log ones carry their line's place (the index points at it). */
type Read = DecodedTransaction & { readonly at?: LineLoc };
const cursor = (path: string, scope: string | null): Cursor => ({
  path,
  scope,
  ino: -1,
  offset: 0,
  lines: 0,
  lastSeq: 0,
  size: -1,
  mtimeMs: -1,
  tail: Buffer.alloc(0),
});

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Whether the file open as `fd` is no longer the one `c` consumed: another inode, shorter, or — same
 * inode and not shorter — with other bytes where the last consumed line's checksum was (truncated and
 * written past the old end; a new file on a reused inode).
 */
function rewritten(c: Cursor, fd: number, st: Stats): boolean {
  if ((c.ino !== -1 && st.ino !== c.ino) || st.size < c.offset) return true;
  if (c.tail.length === 0) return false;
  const now = Buffer.alloc(c.tail.length);
  return readAt(fd, now, c.offset - c.tail.length) !== now.length || !now.equals(c.tail);
}

/** Internal: the files changed in a way an append cannot explain; caught by poll, which starts over. */
class Restart extends SpoolError {
  constructor() {
    super("SPOOL_STORE_FOLLOW_RESTART", "the session's files were rewritten under the reader; reading them again from the start");
  }
}

export function followJsonlSession(mainPath: string): JsonlFollower {
  const dir = sidecarDir(mainPath);
  let state: SessionState | undefined;
  let main = cursor(mainPath, null);
  let sidecars = new Map<string, Cursor>();
  let retiredAt = new Boundaries();
  let sessionId: string | undefined;
  /** What the last poll left unread at the end of a log (see `damage`). */
  let pending: CorruptSessionError | undefined;
  let dirStamp = "";
  /** Sidecars found unlinked in this poll before their retirement was read. */
  let gone: string[] = [];
  let restarts = 0;
  let rereads = 0;

  const reset = (): void => {
    gone = [];
    state = undefined;
    main = cursor(mainPath, null);
    sidecars = new Map();
    retiredAt = new Boundaries();
    sessionId = undefined;
    dirStamp = "";
  };

  /** New complete lines of `c`, each transaction handed to `take` as it is read; advances the cursor. */
  const readNew = (c: Cursor, take: (tx: Read) => void): void => {
    let fd: number;
    try {
      fd = openSync(c.path, "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && c.scope !== null) {
        // Unlinked since it was listed: retired, which the main log read next must show.
        sidecars.delete(c.scope);
        if (!retiredAt.seen(c.scope)) gone.push(c.scope);
        return;
      }
      throw err;
    }
    try {
      const st = fstatSync(fd);
      if (rewritten(c, fd, st)) {
        if (c.scope === null) throw new Restart();
        // A sidecar rewritten as its live records (compact-sidecar.ts), or a new lifetime's file under
        // the same name: the scope is read again from the new file's first line. A scope's state
        // depends only on its own records and its retirements, which the main log read next supplies.
        Object.assign(c, cursor(c.path, c.scope));
        state?.scoped.retire(c.scope);
        rereads++;
      }
      c.ino = st.ino;
      c.size = st.size;
      c.mtimeMs = st.mtimeMs;
      while (c.offset < st.size) {
        const from = c.offset;
        let want = Math.min(CHUNK, st.size - from);
        let buf = Buffer.allocUnsafe(want);
        let got = readAt(fd, buf, from);
        let end = buf.lastIndexOf(10, got - 1) + 1;
        while (end === 0 && got === want && from + want < st.size) {
          // One line longer than the chunk.
          want = Math.min(want * 2, st.size - from);
          buf = Buffer.allocUnsafe(want);
          got = readAt(fd, buf, from);
          end = buf.lastIndexOf(10, got - 1) + 1;
        }
        if (end === 0) return;
        const atEof = from + got >= st.size;
        let pos = 0;
        while (pos < end) {
          const nl = buf.indexOf(10, pos);
          const record = openLineAt(buf, pos, nl);
          const line = c.lines + 1;
          if (record === undefined) {
            // The last complete line may still be a write landing out of order: not consumed, looked at
            // again next poll. Anything after it makes it damage.
            if (nl + 1 === got && atEof) {
              pending ??= new CorruptSessionError(c.path, line, nl === pos ? "empty line" : DAMAGED_LAST_LINE, { repairable: true });
              return;
            }
            throw new CorruptSessionError(c.path, line, nl === pos ? "empty line" : "the line is damaged (bad checksum or not JSON)");
          }
          if (line === 1) {
            if (c.scope === null) sessionId = checkMainHeader(c.path, record).sessionId;
            else {
              checkVersion(c.path, record, SCOPE_FORMAT);
              if (record.sessionId !== sessionId || record.scopeId !== c.scope) {
                throw new CorruptSessionError(
                  c.path,
                  1,
                  `the sidecar header names session ${JSON.stringify(record.sessionId)} scope ${JSON.stringify(record.scopeId)}, expected ${JSON.stringify(sessionId)} / ${JSON.stringify(c.scope)}`,
                );
              }
            }
          } else {
            const tx = decodeTransaction(record, c.path, line, c.scope);
            if (tx.seq <= c.lastSeq) throw new CorruptSessionError(c.path, line, `seq ${tx.seq} does not increase (previous record ends at ${c.lastSeq})`);
            c.lastSeq = tx.seq + tx.writes.length - 1;
            take(c.scope === null ? { ...tx, at: { offset: from + pos, length: nl + 1 - pos, line } } : tx);
          }
          c.lines = line;
          c.offset += nl + 1 - pos;
          pos = nl + 1;
          if (line === 1 && c.scope === null) {
            // The header alone first: it names the session the sidecars must belong to.
            c.tail = Buffer.from(buf.subarray(Math.max(0, pos - TAIL), pos));
            return;
          }
        }
        c.tail = Buffer.from(buf.subarray(Math.max(0, pos - TAIL), pos));
      }
    } finally {
      closeSync(fd);
    }
  };

  /**
   * The first poll: the state starts from the main log's checkpoint when one still matches the file
   * (the cursor then continues after it), else empty with the cursor at the start.
   */
  const begin = (): SessionState => {
    const { src, size } = readerSource(mainPath);
    // The cursor keeps to the file the index reads from: a replacement before the first read restarts.
    main.ino = src.ino;
    const start = checkpointStart(src, completeEnd(src, size));
    if (start === undefined) return new SessionState(new MainState(src));
    sessionId = start.header.sessionId;
    const { meta } = start;
    main.offset = meta.length;
    main.lines = meta.lines;
    main.lastSeq = meta.lastSeq;
    main.tail = src.read(meta.length - Math.min(TAIL, meta.length), Math.min(TAIL, meta.length));
    retiredAt = new Boundaries(meta);
    return new SessionState(start.main);
  };

  /** Sidecars appear and go (retired ones are unlinked): the directory is listed only when it changed. */
  const discover = (): void => {
    const st = statOrUndefined(dir);
    const stamp = st ? `${st.ino}:${st.mtimeMs}` : "";
    if (stamp === dirStamp) return;
    dirStamp = stamp;
    const present = new Set<string>();
    for (const name of st ? readdirSync(dir).sort() : []) {
      const id = sidecarScopeId(join(dir, name), name);
      if (id === undefined) continue;
      present.add(id);
      if (!sidecars.has(id)) sidecars.set(id, cursor(join(dir, name), id));
    }
    for (const id of sidecars.keys()) {
      if (present.has(id)) continue;
      sidecars.delete(id);
      // Unlinked before its retirement was read: the main log read in this poll must hold it.
      if (!retiredAt.seen(id)) gone.push(id);
    }
  };

  /** Whether any file changed since it was last read (a few stats). */
  const changed = (): boolean => {
    const files = [main, ...sidecars.values()];
    for (const c of files) {
      const st = statOrUndefined(c.path);
      if (st === undefined || st.ino !== c.ino || st.size !== c.size || st.mtimeMs !== c.mtimeMs) return true;
    }
    const d = statOrUndefined(dir);
    return (d ? `${d.ino}:${d.mtimeMs}` : "") !== dirStamp;
  };

  const readAll = (): boolean => {
    const st = (state ??= begin());
    let any = false;
    const apply = (scope: string, tx: Read): void => {
      if (scope !== "" && tx.seq <= retiredAt.get(scope)) return;
      tx.writes.forEach((w, i) => {
        if (w.op === "retire") retiredAt.set(w.scope, tx.seq + i);
      });
      if (scope === "") st.applyMain(tx.seq, tx.writes, tx.at!);
      else st.applyScoped(scope, tx.seq, tx.writes.map(toPrepared));
      any = true;
    };
    // The header first (it names the session the sidecars must belong to), then sidecars before the
    // rest of the main log: a sidecar record newer than a retirement was written after it, so reading
    // sidecars first never sees such a record without the retirement that precedes it.
    if (main.lines === 0) readNew(main, () => undefined);
    if (sessionId === undefined) return false;
    discover();
    const side: { scope: string; tx: Read }[] = [];
    for (const c of [...sidecars.values()]) readNew(c, (tx) => side.push({ scope: c.scope!, tx }));
    side.sort((a, b) => a.tx.seq - b.tx.seq);
    // Main transactions are applied as they stream, with the sidecar records merged in by seq.
    let k = 0;
    readNew(main, (tx) => {
      for (; k < side.length && side[k]!.tx.seq < tx.seq; k++) apply(side[k]!.scope, side[k]!.tx);
      apply("", tx);
    });
    for (; k < side.length; k++) apply(side[k]!.scope, side[k]!.tx);
    // A sidecar gone with no retirement read: its records may be in the state with nothing to hide them.
    const unexplained = gone.some((id) => !retiredAt.seen(id));
    gone = [];
    if (unexplained) throw new Restart();
    return any;
  };

  const poll = (): boolean => {
    if (main.ino !== -1 && !changed()) return false;
    pending = undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        return readAll();
      } catch (err) {
        if (!(err instanceof Restart) || attempt >= 3) {
          if (err instanceof Restart)
            throw new CorruptSessionError(mainPath, 0, "the session kept changing under the reader (files replaced or removed); try again");
          throw err;
        }
        restarts++;
        reset();
      }
    }
  };

  /** What the snapshot shows before the header is complete: nothing (it never reads the file). */
  const empty = new SessionState(new MainState(LogSource.forReader(mainPath, -1)));
  const follower: JsonlFollower = {
    snapshot: snapshotOf(() => state ?? empty),
    poll,
    get restarts() {
      return restarts;
    },
    get rereads() {
      return rereads;
    },
    damage: () => pending ?? (sessionId === undefined ? new CorruptSessionError(mainPath, 1, "the session header is missing") : undefined),
  };
  poll();
  return follower;
}
