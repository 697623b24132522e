// Opening a JSONL session (docs/session-format.md): index the main log — from its checkpoint when one
// still matches the file, replaying only the lines after it, else from the first line — then discover
// and check the sidecars, drop records hidden by a retirement and replay the rest of each ephemeral
// scope. The main log is read in bounded chunks and indexed, never held: the session scope's values
// and elements stay in the file (main-state.ts).
import { existsSync, fstatSync, openSync, closeSync, readdirSync, statSync, truncateSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { CorruptSessionError, SessionChangedError } from "../errors.js";
import { sidecarDir } from "../layout.js";
import { checkRegularFile } from "../regular-file.js";
import { encodeScopeId } from "../scope.js";
import { Boundaries, removeCheckpointTemps, type LineMark } from "./checkpoint.js";
import { readLog, type ReadLog } from "./log-file.js";
import { LogSource } from "./log-source.js";
import { checkpointStart, completeEnd, scanLines } from "./main-scan.js";
import { MainState } from "./main-state.js";
import { checkMainHeader, checkVersion, decodeTransaction, SCOPE_FORMAT, toPrepared, type DecodedTransaction, type SessionHeader } from "./records.js";
import { SessionState } from "./session-state.js";

const SIDECAR = /^scope-(.+)\.scope$/;

/** The scope id a sidecar file name encodes; undefined for other files; throws for a bad encoding. */
export function sidecarScopeId(path: string, name: string): string | undefined {
  const m = SIDECAR.exec(name);
  if (m === null) return undefined;
  try {
    const id = decodeURIComponent(m[1]!);
    if (encodeScopeId(id) === m[1]) return id;
  } catch {
    // reported below
  }
  throw new CorruptSessionError(path, 0, "the sidecar file name does not encode a valid scope id");
}

export function sidecarName(scopeId: string): string {
  return `scope-${encodeScopeId(scopeId)}.scope`;
}

export interface LoadedSidecar {
  readonly path: string;
  readonly goodLength: number;
}

/** Where the main log stands after open: what the writer continues from and a checkpoint records. */
export interface MainPosition {
  readonly header: SessionHeader;
  readonly headerH: string;
  /** Bytes of complete, valid lines (a torn tail is past it). */
  readonly goodLength: number;
  readonly lines: number;
  readonly last: LineMark;
  /** The header floor minus one, or the end of the highest main record. */
  readonly highWater: number;
  /** The end of the last main transaction's seq range (0 when none). */
  readonly lastSeq: number;
}

export interface LoadedSession {
  readonly header: SessionHeader;
  readonly state: SessionState;
  /** The highest seq any complete record ever used, retired or not. */
  readonly highWater: number;
  readonly mainGoodLength: number;
  readonly main: MainPosition;
  /** Sidecars that still hold live records, by scope id. */
  readonly sidecars: Map<string, LoadedSidecar>;
  /** The retirement boundary of each scope in `sidecars` (0: never retired). */
  readonly liveBoundaries: Map<string, number>;
  /** The checkpoint used (its covered length and highWater), or undefined when the whole log was replayed. */
  readonly checkpoint: { readonly length: number; readonly highWater: number } | undefined;
}

export interface LoadOptions {
  /** Truncate torn tails and remove dead sidecars and temp files. False for read-only loads. */
  readonly repair: boolean;
  /** Skip sidecars entirely (a fork only needs the session scope). */
  readonly sessionOnly?: boolean;
  /** Replay and verify every line even when a checkpoint matches (what `spool repair` checks with). */
  readonly ignoreCheckpoint?: boolean;
  /** The writer's source (a held descriptor); a read-only load makes its own. */
  readonly source?: LogSource;
}

/** Checks a run of transactions from one file: seqs strictly increase, ranges never overlap. */
function checkMonotonic(txs: readonly DecodedTransaction[], floor: number): void {
  let prevEnd = floor - 1;
  for (const tx of txs) {
    if (tx.seq <= prevEnd) throw new CorruptSessionError(tx.file, tx.line, `seq ${tx.seq} does not increase (previous record ends at ${prevEnd})`);
    prevEnd = tx.seq + tx.writes.length - 1;
  }
}

const txEnd = (tx: DecodedTransaction): number => tx.seq + tx.writes.length - 1;

/** Cleanup is best effort: a file that cannot be removed now hides nothing and is retried next open. */
function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* retried on the next open */
  }
}

/** A read-only source for `path` as it is now (its inode pinned). */
export function readerSource(path: string): { src: LogSource; size: number } {
  checkRegularFile(path, "the log");
  const fd = openSync(path, "r");
  try {
    const st = fstatSync(fd);
    return { src: LogSource.forReader(path, st.ino), size: st.size };
  } finally {
    closeSync(fd);
  }
}

/** Indexes the main log, from a matching checkpoint when there is one; `onRanges` sees each transaction's seq range. */
function indexMain(
  src: LogSource,
  fileLength: number,
  ignoreCheckpoint: boolean,
  onRange: ((first: number, last: number, line: number) => void) | undefined,
): {
  state: SessionState;
  main: MainPosition;
  boundaries: Boundaries;
  checkpoint: { readonly length: number; readonly highWater: number } | undefined;
} {
  const end = completeEnd(src, fileLength);
  const start = ignoreCheckpoint ? undefined : checkpointStart(src, end);
  let header = start?.header;
  let headerH = start?.headerH ?? "";
  const state = new SessionState(start?.main ?? new MainState(src));
  let highWater = start?.meta.highWater ?? 0;
  let lastSeq = start?.meta.lastSeq ?? 0;
  let last: LineMark | undefined = start?.meta.last;
  const retiredAt = new Boundaries(start?.meta);
  const scanned = scanLines(src, start?.meta.length ?? 0, start?.meta.lines ?? 0, end, true, (record, at, h) => {
    last = { offset: at.offset, length: at.length, h };
    if (at.line === 1) {
      header = checkMainHeader(src.path, record!);
      headerH = h;
      highWater = header.nextSeq - 1;
      return;
    }
    const tx = decodeTransaction(record!, src.path, at.line, null);
    if (tx.seq <= lastSeq) throw new CorruptSessionError(src.path, at.line, `seq ${tx.seq} does not increase (previous record ends at ${lastSeq})`);
    lastSeq = txEnd(tx);
    highWater = Math.max(highWater, lastSeq);
    tx.writes.forEach((w, i) => {
      if (w.op === "retire") retiredAt.set(w.scope, tx.seq + i);
    });
    onRange?.(tx.seq, lastSeq, at.line);
    state.applyMain(tx.seq, tx.writes, at);
  });
  if (header === undefined || last === undefined) throw new CorruptSessionError(src.path, 1, "the session header is missing");
  return {
    state,
    main: { header, headerH, goodLength: scanned.goodLength, lines: scanned.lines, last, highWater, lastSeq },
    boundaries: retiredAt,
    checkpoint: start && { length: start.meta.length, highWater: start.meta.highWater },
  };
}

/** A read-only load lost a race with a retirement and reads the session again. */
class LostRace extends Error {}

// A reader without the writer's lock reads the main log up to the length it had at one instant
// (E0) and must hold every sidecar record of that log's past that the log has not retired. It lists
// the sidecar directory just before and just after taking E0 and reads the sidecars at once, before
// the main log: a sidecar is missed only when it was created after the first listing and unlinked
// before the second, or unlinked between its listing and its read. Either needs the scope's
// retirement written after E0, so the main log's lines past E0 are checked for one; finding it, the
// load starts again (the main log then holds the retirement). The windows are a few system calls
// wide; eight tries that all lose mean the session is being rewritten under the reader.
const READ_ATTEMPTS = 8;

/** Whether the main log's complete lines in [from, to) retire one of `scopes`. */
function retiresAny(src: LogSource, from: number, to: number, scopes: (id: string) => boolean): boolean {
  if (to <= from) return false;
  let found = false;
  try {
    scanLines(src, from, 0, Math.max(from, completeEnd(src, to)), true, (record) => {
      const writes = Array.isArray(record?.w) ? (record.w as { op?: unknown; scope?: unknown }[]) : [];
      for (const w of writes) if (w?.op === "retire" && typeof w.scope === "string" && scopes(w.scope)) found = true;
    });
  } catch {
    return true; // a line that does not verify yet: the next try reads it whole, or reports it
  }
  return found;
}

export function loadSession(mainPath: string, options: LoadOptions): LoadedSession {
  const reader = !options.repair && options.source === undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return loadOnce(mainPath, options, reader);
    } catch (err) {
      if (!(err instanceof LostRace)) throw err;
      if (attempt === READ_ATTEMPTS) throw new SessionChangedError(mainPath);
    }
  }
}

/** A sidecar as listed; `log` is undefined when a reader found it already unlinked. */
interface ListedSidecar {
  readonly id: string;
  readonly path: string;
  readonly log: ReadLog | undefined;
}

function readSidecar(path: string, reader: boolean): ReadLog | undefined {
  try {
    checkRegularFile(path, "the sidecar");
    return readLog(path);
  } catch (err) {
    if (reader && (err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

function loadOnce(mainPath: string, options: LoadOptions, reader: boolean): LoadedSession {
  const dir = sidecarDir(mainPath);
  const listSidecars = (): string[] => (!options.sessionOnly && existsSync(dir) ? readdirSync(dir) : []);
  const before = reader ? listSidecars() : [];
  const own = options.source === undefined ? readerSource(mainPath) : undefined;
  const src = options.source ?? own!.src;
  const fileLength = own?.size ?? statSync(mainPath).size;
  const names = reader ? [...new Set([...before, ...listSidecars()])].sort() : listSidecars().sort();
  const grownTo = reader ? statSync(mainPath).size : fileLength;
  const listed: ListedSidecar[] = [];
  for (const name of names) {
    const path = join(dir, name);
    if (name.endsWith(".tmp")) {
      if (options.repair) tryUnlink(path);
      continue;
    }
    const id = sidecarScopeId(path, name);
    if (id !== undefined) listed.push({ id, path, log: readSidecar(path, reader) });
  }

  // Main ranges are kept only to check live sidecar records against them (a sidecar is rare).
  const ranges: { first: number; last: number; line: number }[] | undefined = listed.length > 0 ? [] : undefined;
  const { state, main, boundaries, checkpoint } = indexMain(
    src,
    fileLength,
    options.ignoreCheckpoint === true,
    ranges && ((first, last, line) => ranges.push({ first, last, line })),
  );
  if (reader) {
    const seen = new Set(listed.map((l) => l.id));
    const vanished = new Set(listed.filter((l) => l.log === undefined).map((l) => l.id));
    if (retiresAny(src, main.goodLength, grownTo, (id) => !seen.has(id))) throw new LostRace();
    if (vanished.size > 0 && retiresAny(src, main.goodLength, statSync(mainPath).size, (id) => vanished.has(id))) throw new LostRace();
  }
  if (options.repair) {
    if (main.goodLength < fileLength) truncateSync(mainPath, main.goodLength);
    removeCheckpointTemps(mainPath);
  }

  let highWater = main.highWater;
  const found: { id: string; path: string; log: ReadLog; txs: DecodedTransaction[] }[] = [];
  for (const { id, path, log } of listed) {
    // Unlinked after a retirement the main log already holds: nothing in it is live.
    if (log === undefined) continue;
    if (log.lines.length === 0) {
      // Only a torn header: the scope never got a transaction in this file.
      if (options.repair) tryUnlink(path);
      continue;
    }
    const h = log.lines[0]!.record;
    checkVersion(path, h, SCOPE_FORMAT);
    if (h.sessionId !== main.header.sessionId || h.scopeId !== id) {
      throw new CorruptSessionError(
        path,
        1,
        `the sidecar header names session ${JSON.stringify(h.sessionId)} scope ${JSON.stringify(h.scopeId)}, expected ${JSON.stringify(main.header.sessionId)} / ${JSON.stringify(id)}`,
      );
    }
    const txs = log.lines.slice(1).map((l) => decodeTransaction(l.record, path, l.line, id));
    checkMonotonic(txs, 1);
    for (const tx of txs) highWater = Math.max(highWater, txEnd(tx));
    found.push({ id, path, log, txs });
  }

  const sidecars = new Map<string, LoadedSidecar>();
  const liveBoundaries = new Map<string, number>();
  const live: { scope: string; tx: DecodedTransaction }[] = [];
  for (const f of found) {
    const boundary = boundaries.get(f.id);
    const kept = f.txs.filter((tx) => tx.seq > boundary);
    if (kept.length === 0) {
      // Retired (or never written) but still on disk: the unlink after retirement did not happen.
      if (options.repair) tryUnlink(f.path);
      continue;
    }
    liveBoundaries.set(f.id, boundary);
    if (options.repair && f.log.goodLength < f.log.fileLength) truncateSync(f.path, f.log.goodLength);
    sidecars.set(f.id, { path: f.path, goodLength: f.log.goodLength });
    for (const tx of kept) live.push({ scope: f.id, tx });
  }
  live.sort((a, b) => a.tx.seq - b.tx.seq);
  checkMonotonic(
    live.map((m) => m.tx),
    1,
  );
  for (const { tx } of live) checkAgainstMain(tx, ranges ?? []);
  // The main log's retirements are already applied; every record kept here is newer than its scope's last one.
  for (const { scope, tx } of live) state.applyScoped(scope, tx.seq, tx.writes.map(toPrepared));
  return { header: main.header, state, highWater, mainGoodLength: main.goodLength, main, sidecars, liveBoundaries, checkpoint };
}

/** A live sidecar record must not share a seq with a main-log transaction read in this open. */
function checkAgainstMain(tx: DecodedTransaction, ranges: readonly { first: number; last: number; line: number }[]): void {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ranges[mid]!.last < tx.seq) lo = mid + 1;
    else hi = mid;
  }
  const r = ranges[lo];
  if (r !== undefined && r.first <= txEnd(tx)) {
    throw new CorruptSessionError(tx.file, tx.line, `seq ${tx.seq} overlaps the main log's transaction on line ${r.line} (seqs ${r.first}–${r.last})`);
  }
}
