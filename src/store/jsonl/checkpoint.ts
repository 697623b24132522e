// The checkpoint: `<log>.checkpoint` beside the main log, one sealed JSON line holding the session
// scope's index (main-state.ts) as of a prefix of the log, with what it takes to tell that the prefix
// is still the one it indexed: the session id and header checksum, the covered length and line count,
// and the position and checksum of the last covered line. The writer replaces it atomically (temp file
// + rename) on close and as the log grows; open uses it only when all of that still matches the file,
// and otherwise replays the whole log. It is derived data: losing or damaging it costs one full replay.
import { readdirSync, readFileSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../atomic-write.js";
import { openLine, sealLine } from "./line.js";
import type { MainIndex } from "./main-state.js";

export const CHECKPOINT_FORMAT = "spool-checkpoint";
export const CHECKPOINT_VERSION = 1;

export const checkpointPath = (mainPath: string): string => `${mainPath}.checkpoint`;

/** A complete line of the main log, by position and checksum. */
export interface LineMark {
  readonly offset: number;
  readonly length: number;
  readonly h: string;
}

export interface CheckpointMeta {
  readonly sessionId: string;
  /** The checksum of the main log's header line. */
  readonly headerH: string;
  /** Bytes of the main log covered (whole lines, the header included). */
  readonly length: number;
  /** Lines covered, the header included. */
  readonly lines: number;
  /** The last covered line (the header when no transaction is covered). */
  readonly last: LineMark;
  /** The highest seq any record (main or sidecar) had used when this was written, or the header's floor minus one. */
  readonly highWater: number;
  /** Where the last covered main transaction's seq range ends (0 when none): the next must start above. */
  readonly lastSeq: number;
  /**
   * The ephemeral scopes live when this was written, each with its latest retirement (0: none known).
   * Any other scope was retired by then, so its records up to highWater are hidden (see Boundaries).
   */
  readonly live: readonly (readonly [string, number])[];
}

/**
 * The retirement boundary of each scope, as an open or a follower needs it for the sidecars it finds:
 * a retirement read from the log wins; else a scope the checkpoint lists as live has the boundary
 * listed with it; else the scope was not live when the checkpoint was written, so every record it has
 * up to the checkpoint's highWater belongs to a retired lifetime. The retirements in the covered
 * prefix are thus never read again, and never held: a session retires a scope per operation.
 */
export class Boundaries {
  readonly #seen = new Map<string, number>();
  readonly #live: ReadonlyMap<string, number>;
  readonly #implied: number;

  constructor(meta?: CheckpointMeta) {
    this.#live = new Map(meta?.live ?? []);
    this.#implied = meta?.highWater ?? 0;
  }

  /** A retirement read after the checkpoint. */
  set(scope: string, seq: number): void {
    this.#seen.set(scope, seq);
  }

  get(scope: string): number {
    return this.#seen.get(scope) ?? this.#live.get(scope) ?? this.#implied;
  }

  /** Whether a retirement of `scope` was read after the checkpoint. */
  seen(scope: string): boolean {
    return this.#seen.has(scope);
  }
}

export interface Checkpoint {
  readonly meta: CheckpointMeta;
  readonly index: unknown;
}

/** Publishes a checkpoint atomically (`durable`: fsynced before the rename); returns its size in bytes. */
export function writeCheckpoint(mainPath: string, meta: CheckpointMeta, index: MainIndex, durable: boolean): number {
  const path = checkpointPath(mainPath);
  const bytes = Buffer.from(sealLine(JSON.stringify({ format: CHECKPOINT_FORMAT, version: CHECKPOINT_VERSION, ...meta, index })), "utf8");
  writeFileAtomic(path, bytes, { durable });
  return bytes.length;
}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

export function removeCheckpoint(mainPath: string): void {
  tryUnlink(checkpointPath(mainPath));
}

/** Temp files of checkpoints a killed writer never renamed. */
export function removeCheckpointTemps(mainPath: string): void {
  const prefix = `${basename(checkpointPath(mainPath))}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(mainPath));
  } catch {
    return;
  }
  for (const n of names) if (n.startsWith(prefix) && n.endsWith(".tmp")) tryUnlink(join(dirname(mainPath), n));
}

const isCount = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
const isHash = (x: unknown): x is string => typeof x === "string" && /^[0-9a-f]{8}$/.test(x);

/** The checkpoint beside `mainPath` if there is one that is sealed and well formed; never throws for its content. */
export function readCheckpoint(mainPath: string): Checkpoint | undefined {
  let text: string;
  try {
    text = readFileSync(checkpointPath(mainPath), "utf8");
  } catch {
    return undefined;
  }
  if (!text.endsWith("\n") || text.indexOf("\n") !== text.length - 1) return undefined;
  const o = openLine(text.slice(0, -1));
  if (o === undefined || o.format !== CHECKPOINT_FORMAT || o.version !== CHECKPOINT_VERSION) return undefined;
  const last = o.last as Partial<LineMark> | undefined;
  if (
    typeof o.sessionId !== "string" ||
    !isHash(o.headerH) ||
    !isCount(o.length) ||
    !isCount(o.lines) ||
    o.lines < 1 ||
    typeof last !== "object" ||
    last === null ||
    !isCount(last.offset) ||
    !isCount(last.length) ||
    !isHash(last.h) ||
    last.offset + last.length !== o.length ||
    !isCount(o.highWater) ||
    !isCount(o.lastSeq) ||
    !Array.isArray(o.live) ||
    !o.live.every((r: unknown) => Array.isArray(r) && r.length === 2 && typeof r[0] === "string" && isCount(r[1]))
  ) {
    return undefined;
  }
  const meta: CheckpointMeta = {
    sessionId: o.sessionId,
    headerH: o.headerH,
    length: o.length,
    lines: o.lines,
    last: { offset: last.offset, length: last.length, h: last.h },
    highWater: o.highWater,
    lastSeq: o.lastSeq,
    live: o.live as [string, number][],
  };
  return { meta, index: o.index };
}
