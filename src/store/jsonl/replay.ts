// Opening a JSONL session: read and repair the main log, discover and check the sidecars, drop
// records hidden by a retirement, and replay the rest in global seq order (docs/session-format.md).
import { existsSync, readdirSync, statSync, truncateSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { CorruptSessionError, UnsupportedFormatError } from "../errors.js";
import { sidecarDir } from "../layout.js";
import { encodeScopeId } from "../scope.js";
import { ScopedState } from "../scoped-state.js";
import { readLog, type ReadLog } from "./log-file.js";
import { decodeTransaction, FORMAT_VERSION, SCOPE_FORMAT, SESSION_FORMAT, type DecodedTransaction, type SessionHeader } from "./records.js";

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

export interface LoadedSession {
  readonly header: SessionHeader;
  readonly state: ScopedState;
  /** The highest seq any complete record ever used, retired or not. */
  readonly highWater: number;
  readonly mainGoodLength: number;
  /** Sidecars that still hold live records, by scope id. */
  readonly sidecars: Map<string, LoadedSidecar>;
}

export interface LoadOptions {
  /** Truncate torn tails and remove dead sidecars and temp files. False for read-only loads. */
  readonly repair: boolean;
  /** Skip sidecars entirely (a fork only needs the session scope). */
  readonly sessionOnly?: boolean;
}

export function checkVersion(file: string, o: Record<string, unknown>, format: string): void {
  if (o.format !== format) {
    throw new CorruptSessionError(file, 1, `the first line is not a ${format} header (format ${JSON.stringify(o.format)})`);
  }
  if (o.version !== FORMAT_VERSION) throw new UnsupportedFormatError(file, o.version);
}

function parseMainHeader(file: string, log: ReadLog): SessionHeader {
  const first = log.lines[0];
  if (first === undefined || first.line !== 1) throw new CorruptSessionError(file, 1, "the session header is missing");
  return checkMainHeader(file, first.record);
}

export function checkMainHeader(file: string, h: Record<string, unknown>): SessionHeader {
  checkVersion(file, h, SESSION_FORMAT);
  if (typeof h.sessionId !== "string" || typeof h.nextSeq !== "number" || !Number.isSafeInteger(h.nextSeq) || h.nextSeq < 1) {
    throw new CorruptSessionError(file, 1, "the session header lacks a sessionId or a valid nextSeq");
  }
  return h as unknown as SessionHeader;
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

export function loadSession(mainPath: string, options: LoadOptions): LoadedSession {
  const mainLog = readLog(mainPath);
  const header = parseMainHeader(mainPath, mainLog);
  const mainTxs = mainLog.lines.slice(1).map((l) => decodeTransaction(l.record, mainPath, l.line, null));
  checkMonotonic(mainTxs, 1);
  if (options.repair && mainLog.goodLength < mainLog.fileLength) truncateSync(mainPath, mainLog.goodLength);

  let highWater = header.nextSeq - 1;
  const retiredAt = new Map<string, number>();
  for (const tx of mainTxs) {
    highWater = Math.max(highWater, txEnd(tx));
    tx.writes.forEach((w, i) => {
      if (w.op === "retire") retiredAt.set(w.scope, tx.seq + i);
    });
  }

  const dir = sidecarDir(mainPath);
  const found: { id: string; path: string; log: ReadLog; txs: DecodedTransaction[] }[] = [];
  if (!options.sessionOnly && existsSync(dir)) {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (name.endsWith(".tmp")) {
        if (options.repair) tryUnlink(path);
        continue;
      }
      const id = sidecarScopeId(path, name);
      if (id === undefined) continue;
      if (!statSync(path).isFile()) throw new CorruptSessionError(path, 0, "the sidecar is not a regular file");
      const log = readLog(path);
      if (log.lines.length === 0) {
        // Only a torn header: the scope never got a transaction in this file.
        if (options.repair) tryUnlink(path);
        continue;
      }
      const h = log.lines[0]!.record;
      checkVersion(path, h, SCOPE_FORMAT);
      if (h.sessionId !== header.sessionId || h.scopeId !== id) {
        throw new CorruptSessionError(
          path,
          1,
          `the sidecar header names session ${JSON.stringify(h.sessionId)} scope ${JSON.stringify(h.scopeId)}, expected ${JSON.stringify(header.sessionId)} / ${JSON.stringify(id)}`,
        );
      }
      const txs = log.lines.slice(1).map((l) => decodeTransaction(l.record, path, l.line, id));
      checkMonotonic(txs, 1);
      for (const tx of txs) highWater = Math.max(highWater, txEnd(tx));
      found.push({ id, path, log, txs });
    }
  }

  const sidecars = new Map<string, LoadedSidecar>();
  const merged: { scope: string; tx: DecodedTransaction }[] = mainTxs.map((tx) => ({ scope: "", tx }));
  for (const f of found) {
    const boundary = retiredAt.get(f.id) ?? 0;
    const live = f.txs.filter((tx) => tx.seq > boundary);
    if (live.length === 0) {
      // Retired (or never written) but still on disk: the unlink after retirement did not happen.
      if (options.repair) tryUnlink(f.path);
      continue;
    }
    if (options.repair && f.log.goodLength < f.log.fileLength) truncateSync(f.path, f.log.goodLength);
    sidecars.set(f.id, { path: f.path, goodLength: f.log.goodLength });
    for (const tx of live) merged.push({ scope: f.id, tx });
  }
  merged.sort((a, b) => a.tx.seq - b.tx.seq);
  checkMonotonic(
    merged.map((m) => m.tx),
    1,
  );
  const state = new ScopedState();
  for (const { scope, tx } of merged) state.apply(scope, tx.seq, tx.writes);
  return { header, state, highWater, mainGoodLength: mainLog.goodLength, sidecars };
}
