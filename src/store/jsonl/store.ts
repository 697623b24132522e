// The JSONL backend: a main log for the session scope plus one sidecar per live ephemeral scope.
// Commits are admitted (validated, seq allocated) synchronously and persisted on one serial queue,
// so a retirement's cleanup can never race a write that reuses the scope id. The session scope is
// indexed over the main log, not held (main-state.ts), and the index is checkpointed beside the log
// (checkpoint.ts) on close and as the log grows, so the next open replays only what came after. A
// sidecar that grows past what its scope holds is rewritten as its live records (compact-sidecar.ts).
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Value, ValueList } from "../address.js";
import { fsyncDir, replaceFileForAppend, writeFileAtomic } from "../atomic-write.js";
import { SessionLogRemovedError, SessionNotFoundError, StoreClosedError, StoreFailedError } from "../errors.js";
import { warnSessionDirRemoved } from "../dir-removed.js";
import { normalizeReadOptions } from "../read-options.js";
import { scopeKey, type Scope } from "../scope.js";
import type { CommitResult, Durability, ListPage, ListReadOptions, Store, StoreStats } from "../store.js";
import { prepareTransaction, type PreparedTransaction, type Write } from "../write.js";
import { writeCheckpoint, type LineMark } from "./checkpoint.js";
import { compactSidecarText, nextCompaction, rewriteSidecar, type SeqWrite } from "./compact-sidecar.js";
import { AppendFile } from "./log-file.js";
import { LogSource } from "./log-source.js";
import { acquireLock, retakeLock } from "./lock.js";
import { encodeHeader, encodeTransaction, FORMAT_VERSION, SCOPE_FORMAT, SESSION_FORMAT, type SessionHeader } from "./records.js";
import { ensureDir, sidecarDir } from "../layout.js";
import { checkRegularFile } from "../regular-file.js";
import { loadSession, sidecarName } from "./replay.js";
import type { SessionState } from "./session-state.js";

export interface JsonlStoreOptions {
  /** Default "process" (see docs/session-format.md for why). */
  readonly durability?: Durability;
  /** With durability "os": the longest a commit waits for its fsync. Default 1000. */
  readonly syncIntervalMs?: number;
  /** Create the file when it does not exist (default true). */
  readonly create?: boolean;
  /** The id written into a new file's header (default: a random UUID). */
  readonly sessionId?: string;
  /**
   * Write a checkpoint once the main log has grown this many bytes past the last one (default 8 MiB;
   * and at least 8 × the last checkpoint's size, so rewriting it stays a small share of the writes).
   * A checkpoint is also written on close and after an open that had to replay without one.
   */
  readonly checkpointBytes?: number;
  /**
   * Rewrite a sidecar as its live records once it has grown to this many bytes and 4 × its size after
   * its last rewrite (default 1 MiB), so an operation that runs for hours keeps a sidecar the size of
   * what it holds, not of everything it ever wrote.
   */
  readonly sidecarCompactBytes?: number;
}

const DEFAULT_CHECKPOINT_BYTES = 8 * 1024 * 1024;
/** A checkpoint is rewritten only after the log grew this many times its size. */
const CHECKPOINT_GROWTH = 8;
const DEFAULT_SIDECAR_COMPACT_BYTES = 1024 * 1024;
/**
 * How often a commit checks that the log still has a name (fstat: ~1–1.5 µs against ~2–4 µs for the
 * append itself here, so not on every commit; throttled, 50k small commits took the same time as
 * before, within this machine's noise). Checking late loses nothing: appends to
 * the deleted main log are copied from its open descriptor, and sidecars are written from memory.
 */
const REMOVED_CHECK_MS = 1000;

/** Publishes a complete first line under `path` via a temp file and rename, so a reader never sees half a header. */
export function createWithHeader(path: string, headerLine: string, durable: boolean, extraLines = ""): void {
  writeFileAtomic(path, headerLine + extraLines, { durable });
}

export function newSessionHeader(sessionId: string, nextSeq = 1, forkedFrom?: SessionHeader["forkedFrom"]): SessionHeader {
  const h: SessionHeader = { format: SESSION_FORMAT, version: FORMAT_VERSION, sessionId, nextSeq, createdAt: new Date().toISOString() };
  return forkedFrom === undefined ? h : { ...h, forkedFrom };
}

class JsonlStore implements Store {
  readonly #path: string;
  readonly #durable: boolean;
  readonly #syncIntervalMs: number;
  readonly #sessionId: string;
  readonly #headerH: string;
  readonly #state: SessionState;
  readonly #source: LogSource;
  #main: AppendFile;
  readonly #sidecars = new Map<string, AppendFile>();
  /** The size at which each open sidecar is next rewritten compactly. */
  readonly #compactAt = new Map<string, number>();
  readonly #sidecarCompactBytes: number;
  #release: () => void;
  /** The newest write to each open sidecar, which a sidecar written again from memory must keep (compact-sidecar.ts). */
  readonly #lastScoped = new Map<string, SeqWrite>();
  /** When the files were last checked for having been deleted under us (removed-log check). */
  #checkedAt = 0;
  #nextSeq: number;
  #tail: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;
  #failed: Error | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** When the oldest not-yet-fsynced commit was written (0: nothing pending). */
  #dirtySince = 0;
  /** The main log as a checkpoint records it: lines, the last line, where its seqs end. */
  #mainLines: number;
  #mainLast: LineMark;
  #mainLastSeq: number;
  /** The highest seq persisted so far, in any file. */
  #persistedHigh: number;
  /**
   * Latest retirement per scope, kept from one checkpoint to the next only for the scopes live at it
   * (the others are covered by the checkpoint's highWater: see Boundaries).
   */
  readonly #lastRetired: Map<string, number>;
  /** The highWater of the checkpoint on disk: every scope not live at it is dead up to there. */
  #impliedBoundary = 0;
  readonly #checkpointBytes: number;
  /** The main log length the checkpoint on disk covers (-1: none that matches), and its own size. */
  #checkpointAt = -1;
  #checkpointSize = 0;

  constructor(path: string, options: JsonlStoreOptions, release: () => void) {
    this.#path = path;
    this.#release = release;
    this.#durable = (options.durability ?? "process") === "os";
    this.#syncIntervalMs = options.syncIntervalMs ?? 1000;
    this.#checkpointBytes = options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES;
    this.#sidecarCompactBytes = options.sidecarCompactBytes ?? DEFAULT_SIDECAR_COMPACT_BYTES;
    this.#source = LogSource.forWriter(path);
    let loaded: ReturnType<typeof loadSession>;
    try {
      loaded = loadSession(path, { repair: true, source: this.#source });
      this.#main = new AppendFile(path, loaded.mainGoodLength);
    } catch (e) {
      this.#source.close();
      throw e;
    }
    this.#sessionId = loaded.header.sessionId;
    this.#headerH = loaded.main.headerH;
    this.#state = loaded.state;
    this.#nextSeq = loaded.highWater + 1;
    this.#mainLines = loaded.main.lines;
    this.#mainLast = loaded.main.last;
    this.#mainLastSeq = loaded.main.lastSeq;
    this.#persistedHigh = loaded.highWater;
    this.#lastRetired = new Map([...loaded.liveBoundaries].filter(([, b]) => b > 0));
    try {
      for (const [id, sc] of loaded.sidecars) this.#sidecars.set(id, new AppendFile(sc.path, sc.goodLength));
    } catch (e) {
      this.#closeFiles();
      throw e;
    }
    if (loaded.checkpoint !== undefined) {
      this.#checkpointAt = loaded.checkpoint.length;
      this.#impliedBoundary = loaded.checkpoint.highWater;
    }
    // Replayed without one (or past one by a long tail): write it now, so a crash before close costs no second replay.
    if (this.#checkpointAt < 0 || this.#main.size - this.#checkpointAt >= this.#checkpointBytes) this.#checkpoint();
  }

  /**
   * Best effort: the checkpoint is derived data, so failing to write it never fails a commit (the next
   * open replays more). With durability "os" the log is fsynced first, so it never covers lines a power
   * cut could still take.
   */
  #checkpoint(): void {
    if (this.#mainLines <= 1 || this.#failed !== undefined || this.#main.size === this.#checkpointAt) return;
    try {
      if (this.#durable) this.#main.syncNow();
      const live = [...this.#sidecars.keys()].map((id): [string, number] => [id, this.#lastRetired.get(id) ?? 0]);
      const index = this.#state.main.toIndex();
      const meta = {
        sessionId: this.#sessionId,
        headerH: this.#headerH,
        length: this.#main.size,
        lines: this.#mainLines,
        last: this.#mainLast,
        highWater: this.#persistedHigh,
        lastSeq: this.#mainLastSeq,
        live,
      };
      this.#checkpointSize = writeCheckpoint(this.#path, meta, index, this.#durable);
      this.#impliedBoundary = meta.highWater;
      for (const id of this.#lastRetired.keys()) if (!this.#sidecars.has(id)) this.#lastRetired.delete(id);
    } catch {
      // Not retried before the log grows another interval.
    }
    this.#checkpointAt = this.#main.size;
  }

  #maybeCheckpoint(): void {
    const due = Math.max(this.#checkpointBytes, CHECKPOINT_GROWTH * this.#checkpointSize);
    if (this.#main.size - Math.max(this.#checkpointAt, 0) >= due) this.#checkpoint();
  }

  #enqueue<R>(task: () => R | Promise<R>): Promise<R> {
    const p = this.#tail.then(task);
    this.#tail = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  commit<Sc extends Scope>(writes: readonly Write<Sc>[]): Promise<CommitResult> {
    try {
      if (this.#closing !== undefined) throw new StoreClosedError("commit");
      if (this.#failed !== undefined) throw this.#failed;
      const tx = prepareTransaction(writes);
      const seq = this.#nextSeq;
      this.#nextSeq += tx.writes.length;
      return this.#enqueue(() => this.#persist(seq, tx));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async #persist(seq: number, tx: PreparedTransaction): Promise<CommitResult> {
    if (this.#failed !== undefined) throw this.#failed;
    if (Date.now() - this.#checkedAt >= REMOVED_CHECK_MS) this.#republishIfRemoved();
    const line = encodeTransaction(seq, tx.scope, tx.writes);
    const file = tx.scope === "" ? this.#main : (this.#sidecars.get(tx.scope) ?? this.#openSidecar(tx.scope));
    const offset = file.size;
    let length: number;
    try {
      length = file.append(line);
    } catch (e) {
      if (e instanceof StoreFailedError) this.#failed = e;
      throw e;
    }
    if (tx.scope === "") {
      const at = { offset, length, line: ++this.#mainLines };
      this.#state.applyMain(seq, tx.writes, at);
      // The line's own checksum: it ends `"h":"xxxxxxxx"}` and a newline.
      this.#mainLast = { offset, length, h: line.slice(-11, -3) };
      this.#mainLastSeq = seq + tx.writes.length - 1;
    } else {
      this.#state.applyScoped(tx.scope, seq, tx.writes);
      this.#lastScoped.set(tx.scope, { seq: seq + tx.writes.length - 1, write: tx.writes[tx.writes.length - 1]! });
    }
    const lastSeq = seq + tx.writes.length - 1;
    this.#persistedHigh = Math.max(this.#persistedHigh, lastSeq);
    if (tx.scope !== "" && file.size >= (this.#compactAt.get(tx.scope) ?? this.#sidecarCompactBytes)) {
      this.#compact(tx.scope, file, { seq: lastSeq, write: tx.writes[tx.writes.length - 1]! });
    }
    const retired = tx.writes.flatMap((w, i) => (w.op === "retire" ? [{ id: w.scope, seq: seq + i }] : []));
    if (retired.length === 0) {
      if (this.#durable) {
        this.#dirtySince ||= Date.now();
        // The timer alone is not enough: a caller awaiting commits in a tight loop never lets
        // timers run, so the interval is also enforced here.
        if (Date.now() - this.#dirtySince >= this.#syncIntervalMs) await this.#syncAll();
        else this.#scheduleSync();
      }
      if (tx.scope === "") this.#maybeCheckpoint();
      return { seq };
    }
    // The retirement must be durable before the sidecar goes, or a power cut could lose both.
    if (this.#durable) await this.#fsync(this.#main);
    for (const { id, seq: at } of retired) {
      this.#sidecars.get(id)?.close();
      this.#sidecars.delete(id);
      this.#compactAt.delete(id);
      this.#lastScoped.delete(id);
      this.#lastRetired.set(id, at);
      try {
        unlinkSync(join(sidecarDir(this.#path), sidecarName(id)));
      } catch {
        // Absent, or the unlink failed: the retirement boundary already hides the records and the
        // next open removes the file.
      }
    }
    this.#maybeCheckpoint();
    return { seq };
  }

  /**
   * Rewrites a sidecar as its live records (compact-sidecar.ts), right after a transaction to it was
   * appended and applied. Best effort up to the rename: a failure leaves the old file whole and is
   * tried again once the file has grown another step. With durability "os" the directory is synced
   * after it, or a power cut could bring back the old file without the commits written since.
   */
  #compact(id: string, old: AppendFile, last: SeqWrite): void {
    let file: AppendFile;
    try {
      const header = encodeHeader({ format: SCOPE_FORMAT, version: FORMAT_VERSION, sessionId: this.#sessionId, scopeId: id });
      file = rewriteSidecar(old.path, compactSidecarText(header, id, this.#state.scoped.records(id), last));
    } catch {
      this.#compactAt.set(id, nextCompaction(old.size, this.#sidecarCompactBytes));
      return;
    }
    old.close();
    this.#sidecars.set(id, file);
    this.#compactAt.set(id, nextCompaction(file.size, this.#sidecarCompactBytes));
    if (!this.#durable) return;
    try {
      fsyncDir(dirname(file.path));
    } catch (e) {
      this.#failed = new StoreFailedError(dirname(file.path), e);
      throw this.#failed;
    }
  }

  /**
   * A log deleted under the writer (`rm -rf .spool` while a run goes on) took every later append with
   * it: the writer wrote on into a file no name reached. It is published again instead — the main log
   * copied whole from the read descriptor the writer holds on the deleted file (so appends made before
   * this check are kept too), each sidecar written from the scope it holds in memory, the lock taken
   * again and a checkpoint written — and the user is warned once (dir-removed.ts). A failure stops the
   * store with SessionLogRemovedError, never a silent write into the deleted file.
   */
  #republishIfRemoved(): void {
    this.#checkedAt = Date.now();
    if (!this.#main.unlinked() && ![...this.#sidecars.values()].some((f) => f.unlinked())) return;
    try {
      this.#republish();
    } catch (e) {
      this.#failed = e instanceof SessionLogRemovedError ? e : new SessionLogRemovedError(this.#path, e);
      throw this.#failed;
    }
    warnSessionDirRemoved(dirname(this.#path));
  }

  #republish(): void {
    const lockPath = `${this.#path}.lock`;
    ensureDir(dirname(this.#path));
    // The lock went with the directory; a live holder other than us means a new session took the path.
    this.#release = retakeLock(lockPath, this.#path, this.#release);
    if (this.#main.unlinked()) {
      // Read whole into memory, once: a close that published a 10 MB log again took 70 ms here, a
      // 50 MB one 174 ms (checkpoint included).
      const fd = replaceFileForAppend(this.#path, this.#source.read(0, this.#main.size));
      this.#main.close();
      this.#main = new AppendFile(this.#path, undefined, fd);
      this.#source.reopen();
    }
    for (const [id, old] of this.#sidecars) {
      if (!old.unlinked()) continue;
      mkdirSync(sidecarDir(this.#path), { recursive: true, mode: 0o700 });
      const idHeader = encodeHeader({ format: SCOPE_FORMAT, version: FORMAT_VERSION, sessionId: this.#sessionId, scopeId: id });
      const text = compactSidecarText(idHeader, id, this.#state.scoped.records(id), this.#lastScoped.get(id));
      const file = rewriteSidecar(join(sidecarDir(this.#path), sidecarName(id)), text);
      old.close();
      this.#sidecars.set(id, file);
      this.#compactAt.set(id, nextCompaction(file.size, this.#sidecarCompactBytes));
    }
    if (this.#durable) {
      fsyncDir(dirname(this.#path));
      if (this.#sidecars.size > 0) fsyncDir(sidecarDir(this.#path));
    }
    // The checkpoint went too; without one the next open replays the whole log.
    this.#checkpointAt = -1;
    this.#checkpoint();
  }

  #openSidecar(id: string): AppendFile {
    const dir = sidecarDir(this.#path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, sidecarName(id));
    // A file left by a failed unlink holds only retired records; the rename replaces it.
    createWithHeader(path, encodeHeader({ format: SCOPE_FORMAT, version: FORMAT_VERSION, sessionId: this.#sessionId, scopeId: id }), this.#durable);
    const f = new AppendFile(path);
    this.#sidecars.set(id, f);
    // A scope that was not live at the checkpoint on disk is dead up to its highWater.
    if (!this.#lastRetired.has(id) && this.#impliedBoundary > 0) this.#lastRetired.set(id, this.#impliedBoundary);
    return f;
  }

  #scheduleSync(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#enqueue(() => this.#syncAll()).catch(() => undefined);
    }, this.#syncIntervalMs);
    this.#timer.unref();
  }

  async #syncAll(): Promise<void> {
    this.#dirtySince = 0;
    await this.#fsync(this.#main);
    for (const f of this.#sidecars.values()) await this.#fsync(f);
  }

  /** After a failed fsync the kernel may have dropped the dirty pages: stop writing rather than guess. */
  async #fsync(f: AppendFile): Promise<void> {
    try {
      await f.sync();
    } catch (e) {
      this.#failed = new StoreFailedError(f.path, e);
      throw this.#failed;
    }
  }

  #checkOpen(what: string): void {
    if (this.#closing !== undefined) throw new StoreClosedError(what);
  }

  get<T>(address: Value<T, Scope>): T | undefined {
    this.#checkOpen("read");
    return this.#state.get<T>(scopeKey(address.scope), address.namespace, address.key);
  }

  readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T> {
    this.#checkOpen("read");
    return this.#state.readList<T>(scopeKey(address.scope), address.namespace, address.key, normalizeReadOptions(options));
  }

  stats(): StoreStats {
    this.#checkOpen("read stats");
    return this.#state.stats();
  }

  sync(): Promise<void> {
    if (this.#closing !== undefined) return Promise.reject(new StoreClosedError("sync"));
    return this.#enqueue(() => this.#syncAll());
  }

  #closeFiles(): void {
    this.#source.close();
    this.#main.close();
    for (const f of this.#sidecars.values()) f.close();
    this.#sidecars.clear();
  }

  close(): Promise<void> {
    this.#closing ??= this.#enqueue(async () => {
      clearTimeout(this.#timer);
      try {
        if (this.#failed === undefined) this.#republishIfRemoved();
        if (this.#durable && this.#failed === undefined) await this.#syncAll();
        this.#checkpoint();
      } finally {
        this.#closeFiles();
        this.#release();
      }
    });
    return this.#closing;
  }
}

/** Opens (or creates) a JSONL session log, taking its single-writer lock. */
export async function openJsonlStore(path: string, options: JsonlStoreOptions = {}): Promise<Store> {
  const exists = existsSync(path);
  if (!exists && options.create === false) throw new SessionNotFoundError(path);
  // Before the lock: nothing is written beside a log that is not one.
  if (exists) checkRegularFile(path, "the log");
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const release = acquireLock(`${path}.lock`, path);
  try {
    if (!existsSync(path)) {
      const id = options.sessionId ?? randomUUID();
      createWithHeader(path, encodeHeader(newSessionHeader(id)), options.durability === "os");
    }
    return new JsonlStore(path, options, release);
  } catch (e) {
    release();
    throw e;
  }
}
