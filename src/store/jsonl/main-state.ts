// The session scope of a JSONL session, indexed rather than held: a value is the position of the line
// that set it, and a list is a short array of segments, each a byte span of the main log holding up
// to SEGMENT_ELEMENTS of its elements within SEGMENT_BYTES (or one longer line). Reads go to the file:
// a page reads the spans it needs, verifies the checksum of every line it passes over and parses
// only those lines. So memory holds names and a few numbers per 1,024 elements or 256 KiB of log,
// never the values, and the whole index is what a checkpoint saves (checkpoint.ts).
// Measured before (every value and element held as JSON text, re-serialised on replay): 47% of a
// 200,000-element open was garbage collection and 26% re-serialising elements.
import { CorruptSessionError, SessionChangedError } from "../errors.js";
import type { NormalReadOptions } from "../read-options.js";
import type { ListElement, ListPage, StoreStats } from "../store.js";
import type { PreparedWrite } from "../write.js";
import { openLineAt, verifiedChecksum } from "./line.js";
import type { LogSource } from "./log-source.js";
import type { DecodedWrite } from "./records.js";

/** Where a complete line of the main log is: byte offset, length with its newline, 1-based line number. */
export interface LineLoc {
  readonly offset: number;
  readonly length: number;
  readonly line: number;
}

export const SEGMENT_ELEMENTS = 1024;
export const SEGMENT_BYTES = 256 * 1024;

interface ValueAt {
  seq: number;
  offset: number;
  length: number;
  line: number;
}
/** Elements firstSeq…lastSeq of one list lie in the lines firstLine…lastLine, bytes start…end. */
interface Segment {
  firstSeq: number;
  lastSeq: number;
  count: number;
  start: number;
  end: number;
  firstLine: number;
  lastLine: number;
}
interface ListAt {
  readonly ns: string;
  readonly key: string;
  count: number;
  readonly segs: Segment[];
}

/** The checkpoint form: values [ns, key, seq, offset, length, line]; lists [ns, key, 7 numbers per segment]. */
export interface MainIndex {
  readonly values: readonly (readonly [string, string, number, number, number, number])[];
  readonly lists: readonly (readonly [string, string, readonly number[]])[];
}

const SEGMENT_FIELDS = 7;

/** Length-prefixing makes the pair unambiguous whatever characters the names contain. */
const nameKey = (ns: string, key: string): string => `${ns.length}:${ns}${key}`;

interface ParsedLine {
  readonly seq: number;
  readonly w: readonly Record<string, unknown>[];
}

export class MainState {
  readonly #src: LogSource;
  readonly #values = new Map<string, ValueAt>();
  readonly #lists = new Map<string, ListAt>();
  #elements = 0;

  constructor(src: LogSource) {
    this.#src = src;
  }

  get source(): LogSource {
    return this.#src;
  }

  /** Indexes one transaction of the main log (its first write has `seq`); retirements go to `retire`. */
  apply(seq: number, writes: readonly (PreparedWrite | DecodedWrite)[], at: LineLoc, retire: (scope: string) => void): void {
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i]!;
      const s = seq + i;
      switch (w.op) {
        case "set":
          this.#values.set(nameKey(w.ns, w.key), { seq: s, offset: at.offset, length: at.length, line: at.line });
          break;
        case "delete":
          this.#values.delete(nameKey(w.ns, w.key));
          break;
        case "append": {
          const k = nameKey(w.ns, w.key);
          let l = this.#lists.get(k);
          if (l === undefined) {
            l = { ns: w.ns, key: w.key, count: 0, segs: [] };
            this.#lists.set(k, l);
          }
          addElement(l, s, at);
          this.#elements++;
          break;
        }
        case "clear": {
          const k = nameKey(w.ns, w.key);
          this.#elements -= this.#lists.get(k)?.count ?? 0;
          this.#lists.delete(k);
          break;
        }
        case "retire":
          retire(w.scope);
          break;
      }
    }
  }

  /**
   * The line `buf[start, end)` checked against its checksum and parsed, every time a read reaches it:
   * the file can change after an earlier read (the checksum exists so that a flipped digit never
   * reads as different state). A line that no longer verifies is corruption found on read.
   */
  #line(buf: Buffer, start: number, end: number, line: number): ParsedLine {
    const o = openLineAt(buf, start, end);
    if (o === undefined) {
      throw new CorruptSessionError(this.#src.path, line, "the line is damaged (bad checksum or not JSON)", { repairable: true, onRead: true });
    }
    if (typeof o.seq !== "number" || !Array.isArray(o.w)) throw this.#moved(line, "the line is not the transaction the session's index points at");
    return o as unknown as ParsedLine;
  }

  /** Checks a line passed over without parsing it. */
  #check(buf: Buffer, start: number, end: number, line: number): void {
    if (verifiedChecksum(buf, start, end) === undefined) {
      throw new CorruptSessionError(this.#src.path, line, "the line is damaged (bad checksum or not JSON)", { repairable: true, onRead: true });
    }
  }

  /** The index and the file disagree: under a reader the writer rewrote the log (a repair); under the writer it is damage. */
  #moved(line: number, detail: string): Error {
    return this.#src.reader ? new SessionChangedError(this.#src.path) : new CorruptSessionError(this.#src.path, line, detail, { onRead: true });
  }

  get<T>(ns: string, key: string): T | undefined {
    const v = this.#values.get(nameKey(ns, key));
    if (v === undefined) return undefined;
    const buf = this.#src.read(v.offset, v.length);
    if (buf[v.length - 1] !== 10) throw this.#moved(v.line, "the log's lines are not where the session's index puts them");
    const tx = this.#line(buf, 0, v.length - 1, v.line);
    const w = tx.w[v.seq - tx.seq];
    if (w?.op !== "set" || w.ns !== ns || w.key !== key) {
      throw this.#moved(v.line, `the line does not hold the value ${JSON.stringify(ns)}/${JSON.stringify(key)} at seq ${v.seq}`);
    }
    return w.value as T;
  }

  /** A segment's span, split into lines (starts relative to the buffer); the span must be whole lines. */
  #span(seg: Segment): { buf: Buffer; starts: number[] } {
    const buf = this.#src.read(seg.start, seg.end - seg.start);
    const starts: number[] = [];
    for (let pos = 0; pos < buf.length; ) {
      starts.push(pos);
      const nl = buf.indexOf(10, pos);
      if (nl < 0) break;
      pos = nl + 1;
    }
    if (buf[buf.length - 1] !== 10 || starts.length !== seg.lastLine - seg.firstLine + 1) {
      throw this.#moved(seg.firstLine, "the log's lines are not where the session's index puts them");
    }
    return { buf, starts };
  }

  /**
   * A segment's lines from the last to the first, read backwards in chunks (a recovery read wants the
   * last few lines of a span, not all of it). `visit` returns true to stop; returns whether it stopped.
   */
  #backward(seg: Segment, visit: (buf: Buffer, start: number, end: number, line: number) => boolean): boolean {
    let end = seg.end;
    let line = seg.lastLine;
    let chunk = 16 * 1024;
    while (end > seg.start) {
      const from = Math.max(seg.start, end - chunk);
      const buf = this.#src.read(from, end - from);
      if (buf[buf.length - 1] !== 10) throw this.#moved(line, "the log's lines are not where the session's index puts them");
      let e = buf.length - 1;
      let consumed = buf.length;
      while (e >= 0) {
        const nl = e === 0 ? -1 : buf.lastIndexOf(10, e - 1);
        if (nl < 0 && from > seg.start) break; // the line starts before this chunk
        if (line < seg.firstLine) throw this.#moved(seg.firstLine, "the log's lines are not where the session's index puts them");
        if (visit(buf, nl + 1, e, line--)) return true;
        consumed = nl + 1;
        e = nl;
      }
      if (consumed === buf.length) chunk *= 4;
      end = from + consumed;
    }
    if (line !== seg.firstLine - 1) throw this.#moved(seg.firstLine, "the log's lines are not where the session's index puts them");
    return false;
  }

  readList<T>(ns: string, key: string, o: NormalReadOptions): ListPage<T> {
    const l = this.#lists.get(nameKey(ns, key));
    if (l === undefined) return { elements: [] };
    const segs = l.segs;
    const elements: ListElement<T>[] = [];
    /** Takes one element; true when the page is complete. */
    const take = (seq: number, w: Record<string, unknown>): boolean => {
      const tag = w.tag as string | undefined;
      elements.push(tag === undefined ? { seq, value: w.value as T } : { seq, value: w.value as T, tag });
      return elements.length >= o.limit || (tag !== undefined && tag === o.stopAtTag);
    };
    const mine = (w: Record<string, unknown> | undefined): w is Record<string, unknown> => w?.op === "append" && w.ns === ns && w.key === key;
    if (!o.desc) {
      const after = o.cursor ?? -Infinity;
      scan: for (let i = firstEndingAfter(segs, after); i < segs.length; i++) {
        const seg = segs[i]!;
        const { buf, starts } = this.#span(seg);
        for (let j = 0; j < starts.length; j++) {
          const s = starts[j]!;
          const e = (starts[j + 1] ?? buf.length) - 1;
          // A line whose successor starts at or below the cursor holds nothing after it: passed over unparsed.
          const next = j + 1 < starts.length ? lineSeq(buf, starts[j + 1]!) : undefined;
          if (next !== undefined && next <= after + 1) {
            this.#check(buf, s, e, seg.firstLine + j);
            continue;
          }
          const tx = this.#line(buf, s, e, seg.firstLine + j);
          for (let k = 0; k < tx.w.length; k++) {
            const seq = tx.seq + k;
            if (seq < seg.firstSeq || seq > seg.lastSeq || seq <= after || !mine(tx.w[k])) continue;
            if (take(seq, tx.w[k]!)) break scan;
          }
        }
      }
    } else {
      const before = o.cursor ?? Infinity;
      for (let i = lastStartingBefore(segs, before); i >= 0; i--) {
        const seg = segs[i]!;
        const stopped = this.#backward(seg, (buf, s, e, line) => {
          // A line starting at or past the cursor holds nothing before it: passed over unparsed.
          const first = lineSeq(buf, s);
          if (first !== undefined && first >= before) {
            this.#check(buf, s, e, line);
            return false;
          }
          const tx = this.#line(buf, s, e, line);
          for (let k = tx.w.length - 1; k >= 0; k--) {
            const seq = tx.seq + k;
            if (seq < seg.firstSeq || seq > seg.lastSeq || seq >= before || !mine(tx.w[k])) continue;
            if (take(seq, tx.w[k]!)) return true;
          }
          return false;
        });
        if (stopped) break;
      }
    }
    const last = elements[elements.length - 1];
    if (last === undefined) return { elements };
    const more = o.desc ? last.seq > segs[0]!.firstSeq : last.seq < segs[segs.length - 1]!.lastSeq;
    return more ? { elements, cursor: last.seq } : { elements };
  }

  stats(): StoreStats {
    return { values: this.#values.size, lists: this.#lists.size, listElements: this.#elements };
  }

  /** Every live value and element, one write each, in seq order: what a fork copies. Reads the whole log's live part. */
  *records(): Generator<{ seq: number; write: PreparedWrite }> {
    const out: { seq: number; write: PreparedWrite }[] = [];
    for (const [k, v] of this.#values) {
      const [ns, key] = splitKey(k);
      out.push({ seq: v.seq, write: { op: "set", ns, key, json: JSON.stringify(this.get(ns, key)) } });
    }
    for (const l of this.#lists.values()) {
      let cursor: number | undefined;
      do {
        const page = this.readList<unknown>(l.ns, l.key, { cursor, desc: false, limit: 10_000, stopAtTag: undefined });
        for (const e of page.elements) out.push({ seq: e.seq, write: { op: "append", ns: l.ns, key: l.key, json: JSON.stringify(e.value), tag: e.tag } });
        cursor = page.cursor;
      } while (cursor !== undefined);
    }
    out.sort((a, b) => a.seq - b.seq);
    yield* out;
  }

  /** The index as a checkpoint records it. */
  toIndex(): MainIndex {
    const values: [string, string, number, number, number, number][] = [];
    for (const [k, v] of this.#values) {
      const [ns, key] = splitKey(k);
      values.push([ns, key, v.seq, v.offset, v.length, v.line]);
    }
    const lists: [string, string, number[]][] = [];
    for (const l of this.#lists.values()) {
      const flat: number[] = [];
      for (const s of l.segs) flat.push(s.firstSeq, s.lastSeq, s.count, s.start, s.end, s.firstLine, s.lastLine);
      lists.push([l.ns, l.key, flat]);
    }
    return { values, lists };
  }

  /** Restores a checkpoint's index; undefined when it is not well formed (the checkpoint is then ignored). */
  static fromIndex(src: LogSource, index: unknown, coveredLength: number): MainState | undefined {
    const state = new MainState(src);
    const i = index as Partial<MainIndex> | null;
    if (typeof i !== "object" || i === null || !Array.isArray(i.values) || !Array.isArray(i.lists)) return undefined;
    const num = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
    const str = (x: unknown): x is string => typeof x === "string";
    for (const v of i.values) {
      if (!Array.isArray(v) || v.length !== 6 || !str(v[0]) || !str(v[1]) || !v.slice(2).every(num)) return undefined;
      if (v[3] + v[4] > coveredLength) return undefined;
      state.#values.set(nameKey(v[0], v[1]), { seq: v[2], offset: v[3], length: v[4], line: v[5] });
    }
    for (const l of i.lists) {
      if (!Array.isArray(l) || l.length !== 3 || !str(l[0]) || !str(l[1]) || !Array.isArray(l[2])) return undefined;
      const flat = l[2] as unknown[];
      if (flat.length === 0 || flat.length % SEGMENT_FIELDS !== 0 || !flat.every(num)) return undefined;
      const list: ListAt = { ns: l[0], key: l[1], count: 0, segs: [] };
      for (let j = 0; j < flat.length; j += SEGMENT_FIELDS) {
        const [firstSeq, lastSeq, count, start, end, firstLine, lastLine] = flat.slice(j, j + SEGMENT_FIELDS) as number[];
        if (count! < 1 || lastSeq! < firstSeq! || end! <= start! || end! > coveredLength || lastLine! < firstLine!) return undefined;
        list.segs.push({
          firstSeq: firstSeq!,
          lastSeq: lastSeq!,
          count: count!,
          start: start!,
          end: end!,
          firstLine: firstLine!,
          lastLine: lastLine!,
        });
        list.count += count!;
      }
      state.#lists.set(nameKey(list.ns, list.key), list);
      state.#elements += list.count;
    }
    return state;
  }
}

function splitKey(k: string): [string, string] {
  const colon = k.indexOf(":");
  const len = Number(k.slice(0, colon));
  return [k.slice(colon + 1, colon + 1 + len), k.slice(colon + 1 + len)];
}

/** A segment grows while it stays under both bounds; a line never straddles two segments. */
function addElement(l: ListAt, seq: number, at: LineLoc): void {
  const end = at.offset + at.length;
  const cur = l.segs[l.segs.length - 1];
  if (cur !== undefined && cur.end === end) {
    cur.lastSeq = seq;
    cur.count++;
  } else if (cur !== undefined && cur.count < SEGMENT_ELEMENTS && end - cur.start <= SEGMENT_BYTES) {
    cur.lastSeq = seq;
    cur.count++;
    cur.end = end;
    cur.lastLine = at.line;
  } else {
    l.segs.push({ firstSeq: seq, lastSeq: seq, count: 1, start: at.offset, end, firstLine: at.line, lastLine: at.line });
  }
  l.count++;
}

const SEQ_PREFIX = Buffer.from('{"seq":');

/** The first seq of the line at `start`, from its `{"seq":N` prefix; undefined when it does not start so. */
function lineSeq(buf: Buffer, start: number): number | undefined {
  if (buf.compare(SEQ_PREFIX, 0, SEQ_PREFIX.length, start, start + SEQ_PREFIX.length) !== 0) return undefined;
  let n = 0;
  let i = start + SEQ_PREFIX.length;
  for (; i < buf.length && i < start + SEQ_PREFIX.length + 16; i++) {
    const c = buf[i]!;
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return i > start + SEQ_PREFIX.length && buf[i] === 0x2c ? n : undefined;
}

/** The first segment holding an element after `seq`. */
function firstEndingAfter(segs: readonly Segment[], seq: number): number {
  let lo = 0;
  let hi = segs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (segs[mid]!.lastSeq <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The last segment holding an element before `seq` (-1 when none). */
function lastStartingBefore(segs: readonly Segment[], seq: number): number {
  let lo = 0;
  let hi = segs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (segs[mid]!.firstSeq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
