// The checkpoint: `<log>.checkpoint` beside the main log, holding the session scope's index
// (main-state.ts) as of a prefix of the log, with what it takes to tell that the prefix is still the
// one it indexed: the session id and header checksum, the covered length and line count, and the
// position and checksum of the last covered line. The writer replaces it atomically (temp file +
// rename) on close and as the log grows; open uses it only when all of that still matches the file,
// and otherwise replays the whole log. It is derived data: losing or damaging it costs one full replay.
// The file is a sealed JSON line (all of the above, the names of the lists, and the size and checksum
// of what follows) and then the index's numbers and value names as binary, little-endian: one read
// into one buffer, whose views are the arrays the index keeps (value-index.ts, list-segments.ts).
// Version 1 held each value as a JSON array: the 1 GB session's 5.1 MB checkpoint parsed into 90,601
// small arrays and strings, 51 MB of RSS for a read-only open.
import { Buffer } from "node:buffer";
import { closeSync, fstatSync, openSync, readdirSync, unlinkSync } from "node:fs";
import { endianness } from "node:os";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../atomic-write.js";
import { openLineAt, partsChecksum, sealLine } from "./line.js";
import { readAt } from "./log-source.js";
import { SEGMENT_FIELDS } from "./list-segments.js";
import type { CheckpointList, MainIndex } from "./main-state.js";
import type { ValueColumns } from "./value-index.js";

export const CHECKPOINT_FORMAT = "spool-checkpoint";
export const CHECKPOINT_VERSION = 2;

const BYTES_PER_SEGMENT = SEGMENT_FIELDS * 8;

type ColumnName = "offset" | "seq" | "line" | "segments" | "length" | "keyEnd" | "keys";
/** Element sizes of the value columns that are uint32 until a number does not fit (value-index.ts). */
type Widths = { readonly offset: 4 | 8; readonly seq: 4 | 8; readonly line: 4 | 8 };

/**
 * The body's columns in file order: the float64 ones first, so that each starts at a multiple of its
 * element size in the one buffer the body is read into. "segments" is every list's, in list order.
 */
function columnOrder(w: Widths): ColumnName[] {
  const sized = (size: 4 | 8) => (["offset", "seq", "line"] as const).filter((c) => w[c] === size);
  return [...sized(8), "segments", ...sized(4), "length", "keyEnd", "keys"];
}
const BIG_ENDIAN = endianness() === "BE";

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
  /** As read: its numbers are checked by MainState.fromIndex. */
  readonly index: MainIndex;
}

/** A column's bytes as the file holds them (little-endian). */
function bytesOf(a: Float64Array | Uint32Array | Uint8Array): Uint8Array {
  const b = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  if (!BIG_ENDIAN || a.BYTES_PER_ELEMENT === 1) return b;
  const copy = Buffer.from(b);
  return a.BYTES_PER_ELEMENT === 8 ? copy.swap64() : copy.swap32();
}

/** Publishes a checkpoint atomically (`durable`: fsynced before the rename); returns its size in bytes. */
export function writeCheckpoint(mainPath: string, meta: CheckpointMeta, index: MainIndex, durable: boolean): number {
  const v = index.values;
  const widths = { offset: v.offset.BYTES_PER_ELEMENT, seq: v.seq.BYTES_PER_ELEMENT, line: v.line.BYTES_PER_ELEMENT } as Widths;
  const columns: Record<ColumnName, readonly (Float64Array | Uint32Array | Uint8Array)[]> = {
    offset: [v.offset],
    seq: [v.seq],
    line: [v.line],
    segments: index.lists.map((l) => l.segments),
    length: [v.length],
    keyEnd: [v.keyEnd],
    keys: [v.keys],
  };
  const body = columnOrder(widths)
    .flatMap((c) => columns[c])
    .map(bytesOf);
  const lists = index.lists.map((l) => [l.ns, l.key, l.segments.length / SEGMENT_FIELDS]);
  const header = {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    ...meta,
    index: {
      namespaces: v.namespaces,
      values: v.count,
      keyBytes: v.keys.length,
      offsetBytes: widths.offset,
      seqBytes: widths.seq,
      lineBytes: widths.line,
      lists,
    },
    body: { length: body.reduce((n, b) => n + b.length, 0), h: partsChecksum(body) },
  };
  const bytes = Buffer.concat([Buffer.from(sealLine(JSON.stringify(header)), "utf8"), ...body]);
  writeFileAtomic(checkpointPath(mainPath), bytes, { durable });
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

/** The header line of the file open at `fd` (`size` bytes) and where it ends, if it has a complete one that verifies. */
function readHeaderLine(fd: number, size: number): { o: Record<string, unknown>; end: number } | undefined {
  for (let want = Math.min(size, 65536); want > 0; want = Math.min(size, want * 2)) {
    const buf = Buffer.allocUnsafe(want);
    if (readAt(fd, buf, 0) !== want) return undefined;
    const nl = buf.indexOf(10);
    if (nl >= 0) {
      const o = openLineAt(buf, 0, nl);
      return o && { o, end: nl + 1 };
    }
    if (want === size) return undefined;
  }
  return undefined;
}

/**
 * The checkpoint beside `mainPath` if there is one that is sealed, of this version and well formed;
 * never throws for its content. The values' columns are views of one buffer read from the file.
 */
export function readCheckpoint(mainPath: string): Checkpoint | undefined {
  let fd: number;
  try {
    fd = openSync(checkpointPath(mainPath), "r");
  } catch {
    return undefined;
  }
  try {
    return readOpen(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function readOpen(fd: number): Checkpoint | undefined {
  const size = fstatSync(fd).size;
  const head = readHeaderLine(fd, size);
  if (head === undefined) return undefined;
  const { o } = head;
  if (o.format !== CHECKPOINT_FORMAT || o.version !== CHECKPOINT_VERSION) return undefined;
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
  const index = o.index as {
    namespaces?: unknown;
    values?: unknown;
    keyBytes?: unknown;
    offsetBytes?: unknown;
    seqBytes?: unknown;
    lineBytes?: unknown;
    lists?: unknown;
  } | null;
  const isWidth = (x: unknown): x is 4 | 8 => x === 4 || x === 8;
  const body = o.body as { length?: unknown; h?: unknown } | null;
  const isList = (l: unknown): l is [string, string, number] =>
    Array.isArray(l) && l.length === 3 && typeof l[0] === "string" && typeof l[1] === "string" && isCount(l[2]) && l[2] > 0;
  if (
    typeof index !== "object" ||
    index === null ||
    !Array.isArray(index.namespaces) ||
    !index.namespaces.every((ns) => typeof ns === "string") ||
    !isCount(index.values) ||
    !isCount(index.keyBytes) ||
    !isWidth(index.offsetBytes) ||
    !isWidth(index.seqBytes) ||
    !isWidth(index.lineBytes) ||
    !Array.isArray(index.lists) ||
    !index.lists.every(isList) ||
    typeof body !== "object" ||
    body === null ||
    !isHash(body.h)
  ) {
    return undefined;
  }
  const n = index.values;
  const widths: Widths = { offset: index.offsetBytes, seq: index.seqBytes, line: index.lineBytes };
  const segments = (index.lists as [string, string, number][]).reduce((sum, l) => sum + l[2], 0);
  const sizes: Record<ColumnName, number> = {
    offset: widths.offset * n,
    seq: widths.seq * n,
    line: widths.line * n,
    segments: BYTES_PER_SEGMENT * segments,
    length: 4 * n,
    keyEnd: 4 * n,
    keys: index.keyBytes,
  };
  const starts = {} as Record<ColumnName, number>;
  let total = 0;
  for (const c of columnOrder(widths)) {
    starts[c] = total;
    total += sizes[c];
  }
  if (body.length !== total || size !== head.end + body.length) return undefined;
  const bytes = new Uint8Array(new ArrayBuffer(body.length));
  if (readAt(fd, bytes, head.end) !== bytes.length || partsChecksum([bytes]) !== body.h) return undefined;
  const ab = bytes.buffer;
  const floatsEnd = starts.segments + sizes.segments;
  if (BIG_ENDIAN) {
    Buffer.from(ab, 0, floatsEnd).swap64();
    Buffer.from(ab, floatsEnd, starts.keys - floatsEnd).swap32();
  }
  const widening = (c: "offset" | "seq" | "line") => (widths[c] === 8 ? new Float64Array(ab, starts[c], n) : new Uint32Array(ab, starts[c], n));
  const values: ValueColumns = {
    namespaces: index.namespaces as string[],
    count: n,
    seq: widening("seq"),
    offset: widening("offset"),
    line: widening("line"),
    length: new Uint32Array(ab, starts.length, n),
    keyEnd: new Uint32Array(ab, starts.keyEnd, n),
    keys: new Uint8Array(ab, starts.keys, index.keyBytes),
  };
  let at = starts.segments;
  const lists: CheckpointList[] = (index.lists as [string, string, number][]).map(([ns, key, count]) => {
    const l = { ns, key, segments: new Float64Array(ab, at, count * SEGMENT_FIELDS) };
    at += count * BYTES_PER_SEGMENT;
    return l;
  });
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
  return { meta, index: { values, lists } };
}
