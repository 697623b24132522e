// The session scope of a JSONL session, indexed rather than held: a value is the position of the line
// that set it, and a list is a short array of segments, each a byte span of the main log holding up
// to SEGMENT_ELEMENTS of its elements within SEGMENT_BYTES (or one longer line; list-segments.ts).
// Reads go to the file: a page reads the spans it needs, verifies the checksum of every line it
// passes over and parses only those lines. So memory holds a name and a few numbers per value
// (value-index.ts: about 41 bytes) and 56 bytes per 1,024 elements or 256 KiB of log, never the
// values, and the whole index is what a checkpoint saves (checkpoint.ts).
// Measured before (every value and element held as JSON text, re-serialised on replay): 47% of a
// 200,000-element open was garbage collection and 26% re-serialising elements.
import { Buffer } from "node:buffer";
import { CorruptSessionError, SessionChangedError } from "../errors.js";
import type { NormalReadOptions } from "../read-options.js";
import type { ListElement, ListPage, StoreStats } from "../store.js";
import type { PreparedWrite } from "../write.js";
import { openLineAt, verifiedChecksum } from "./line.js";
import { ListSegments, type LineLoc, type Segment } from "./list-segments.js";
import type { LogSource } from "./log-source.js";
import type { DecodedWrite } from "./records.js";
import { ValueIndex, type ValueColumns } from "./value-index.js";

/** The checkpoint form: values as columns; each list's segments, 7 numbers each (list-segments.ts). */
export interface MainIndex {
  readonly values: ValueColumns;
  readonly lists: readonly CheckpointList[];
}

export interface CheckpointList {
  readonly ns: string;
  readonly key: string;
  readonly segments: Float64Array;
}

/** Length-prefixing makes the pair unambiguous whatever characters the names contain. */
const nameKey = (ns: string, key: string): string => `${ns.length}:${ns}${key}`;

/**
 * Where a page of `list` stopped: the next page, from `cursor` the same way, reads the segment that
 * holds `offset` from there (a line start, line number `line`) forward, or backward from there (the
 * end of line `line`). Segments never share bytes, so the offset names the segment.
 */
interface Resume {
  readonly list: ListSegments;
  readonly desc: boolean;
  readonly cursor: number;
  readonly offset: number;
  readonly line: number;
}

interface ParsedLine {
  readonly seq: number;
  readonly w: readonly Record<string, unknown>[];
}

export class MainState {
  readonly #src: LogSource;
  #values = new ValueIndex();
  readonly #lists = new Map<string, ListSegments>();
  #elements = 0;
  #resume: Resume | undefined;

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
          this.#values.set(w.ns, w.key, s, at.offset, at.length, at.line);
          break;
        case "delete":
          this.#values.delete(w.ns, w.key);
          break;
        case "append": {
          const k = nameKey(w.ns, w.key);
          let l = this.#lists.get(k);
          if (l === undefined) {
            l = new ListSegments(w.ns, w.key);
            this.#lists.set(k, l);
          }
          l.add(s, at);
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
    const v = this.#values.get(ns, key);
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

  /**
   * A segment's lines from `from` (a line start, line number `line`) to its end, read in chunks (a page
   * wants the next few lines of a span, not all of it). `visit` gets each line as buf[start, end) (the
   * buffer is `at` bytes into the log and valid only during the call) with `next`, where the following
   * line starts in buf when it is there (else -1); it returns true to stop. Returns whether it stopped.
   */
  #forward(
    seg: Segment,
    from: number,
    line: number,
    visit: (buf: Buffer, at: number, start: number, end: number, line: number, next: number) => boolean,
  ): boolean {
    let pos = from;
    let chunk = 64 * 1024;
    while (pos < seg.end) {
      const len = Math.min(chunk, seg.end - pos);
      const buf = this.#src.readReused(pos, len);
      let s = 0;
      for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, s)) {
        if (line > seg.lastLine) throw this.#moved(seg.firstLine, "the log's lines are not where the session's index puts them");
        if (visit(buf, pos, s, nl, line++, nl + 1 < buf.length ? nl + 1 : -1)) return true;
        s = nl + 1;
      }
      if (s === 0) {
        // No newline in the chunk: a longer line, unless the span itself does not end in one.
        if (pos + len === seg.end) throw this.#moved(line, "the log's lines are not where the session's index puts them");
        chunk *= 4;
      }
      pos += s;
    }
    if (line !== seg.lastLine + 1) throw this.#moved(seg.firstLine, "the log's lines are not where the session's index puts them");
    return false;
  }

  /**
   * A segment's lines from the one ending at `end` (line number `line`) back to its first, read
   * backwards in chunks (a recovery read wants the last few lines of a span, not all of it). `visit`
   * as for #forward, without `next`.
   */
  #backward(seg: Segment, end: number, line: number, visit: (buf: Buffer, at: number, start: number, end: number, line: number) => boolean): boolean {
    let chunk = 16 * 1024;
    while (end > seg.start) {
      const from = Math.max(seg.start, end - chunk);
      const buf = this.#src.readReused(from, end - from);
      if (buf[buf.length - 1] !== 10) throw this.#moved(line, "the log's lines are not where the session's index puts them");
      let e = buf.length - 1;
      let consumed = buf.length;
      while (e >= 0) {
        const nl = e === 0 ? -1 : buf.lastIndexOf(10, e - 1);
        if (nl < 0 && from > seg.start) break; // the line starts before this chunk
        if (line < seg.firstLine) throw this.#moved(seg.firstLine, "the log's lines are not where the session's index puts them");
        if (visit(buf, from, nl + 1, e, line--)) return true;
        consumed = nl + 1;
        e = nl;
      }
      if (consumed === buf.length) chunk *= 4;
      end = from + consumed;
    }
    if (line !== seg.firstLine - 1) throw this.#moved(seg.firstLine, "the log's lines are not where the session's index puts them");
    return false;
  }

  /**
   * Reads a page of a list. A page continues where the last one stopped when it brings that page's
   * cursor (#resume): it starts at the line after the cursor's element instead of at its segment's
   * start, so paging through a list in small pages reads and checks each line once, not once per page
   * (pages of 10 re-checked about half a 256 KiB segment each: 40% slower than pages of 100).
   */
  readList<T>(ns: string, key: string, o: NormalReadOptions): ListPage<T> {
    const l = this.#lists.get(nameKey(ns, key));
    if (l === undefined) return { elements: [] };
    const elements: ListElement<T>[] = [];
    /** Takes one element; true when the page is complete. */
    const take = (seq: number, w: Record<string, unknown>): boolean => {
      const tag = w.tag as string | undefined;
      elements.push(tag === undefined ? { seq, value: w.value as T } : { seq, value: w.value as T, tag });
      return elements.length >= o.limit || (tag !== undefined && tag === o.stopAtTag);
    };
    const mine = (w: Record<string, unknown> | undefined): w is Record<string, unknown> => w?.op === "append" && w.ns === ns && w.key === key;
    const hint = this.#resume;
    const resumes = (seg: Segment): boolean =>
      hint !== undefined && hint.list === l && hint.desc === o.desc && hint.cursor === o.cursor && hint.offset > seg.start && hint.offset < seg.end;
    let stop: Pick<Resume, "offset" | "line"> | undefined;
    if (!o.desc) {
      const after = o.cursor ?? -Infinity;
      for (let i = l.firstEndingAfter(after); i < l.length && stop === undefined; i++) {
        const seg = l.at(i);
        const [from, fromLine] = resumes(seg) ? [hint!.offset, hint!.line] : [seg.start, seg.firstLine];
        this.#forward(seg, from, fromLine, (buf, at, s, e, line, next) => {
          // A line whose successor starts at or below the cursor holds nothing after it: passed over unparsed.
          const nextSeq = next < 0 ? undefined : lineSeq(buf, next);
          if (nextSeq !== undefined && nextSeq <= after + 1) {
            this.#check(buf, s, e, line);
            return false;
          }
          const tx = this.#line(buf, s, e, line);
          const inSeg = (k: number): boolean => tx.seq + k >= seg.firstSeq && tx.seq + k <= seg.lastSeq && mine(tx.w[k]);
          for (let k = 0; k < tx.w.length; k++) {
            if (tx.seq + k <= after || !inSeg(k) || !take(tx.seq + k, tx.w[k]!)) continue;
            // The next page starts at this line if it holds more of the list, else at the next one.
            let rest = false;
            for (let m = k + 1; m < tx.w.length && !rest; m++) rest = inSeg(m);
            stop = rest ? { offset: at + s, line } : { offset: at + e + 1, line: line + 1 };
            return true;
          }
          return false;
        });
      }
    } else {
      const before = o.cursor ?? Infinity;
      for (let i = l.lastStartingBefore(before); i >= 0 && stop === undefined; i--) {
        const seg = l.at(i);
        const [end, lastLine] = resumes(seg) ? [hint!.offset, hint!.line] : [seg.end, seg.lastLine];
        this.#backward(seg, end, lastLine, (buf, at, s, e, line) => {
          // A line starting at or past the cursor holds nothing before it: passed over unparsed.
          const first = lineSeq(buf, s);
          if (first !== undefined && first >= before) {
            this.#check(buf, s, e, line);
            return false;
          }
          const tx = this.#line(buf, s, e, line);
          const inSeg = (k: number): boolean => tx.seq + k >= seg.firstSeq && tx.seq + k <= seg.lastSeq && mine(tx.w[k]);
          for (let k = tx.w.length - 1; k >= 0; k--) {
            if (tx.seq + k >= before || !inSeg(k) || !take(tx.seq + k, tx.w[k]!)) continue;
            // The next page ends with this line if it holds more of the list, else with the one before.
            let rest = false;
            for (let m = k - 1; m >= 0 && !rest; m--) rest = inSeg(m);
            stop = rest ? { offset: at + e + 1, line } : { offset: at + s, line: line - 1 };
            return true;
          }
          return false;
        });
      }
    }
    const last = elements[elements.length - 1];
    if (last === undefined) return { elements };
    const more = o.desc ? last.seq > l.firstSeq : last.seq < l.lastSeq;
    if (!more) return { elements };
    this.#resume = stop && { list: l, desc: o.desc, cursor: last.seq, ...stop };
    return { elements, cursor: last.seq };
  }

  stats(): StoreStats {
    return { values: this.#values.size, lists: this.#lists.size, listElements: this.#elements };
  }

  /** Every live value and element, one write each, in seq order: what a fork copies. Reads the whole log's live part. */
  *records(): Generator<{ seq: number; write: PreparedWrite }> {
    const out: { seq: number; write: PreparedWrite }[] = [];
    for (const [ns, key, v] of this.#values.entries()) {
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

  /** The index as a checkpoint records it (views of the index's arrays, valid until the next change). */
  toIndex(): MainIndex {
    const lists = [...this.#lists.values()].map((l) => ({ ns: l.ns, key: l.key, segments: l.numbers() }));
    return { values: this.#values.columns(), lists };
  }

  /** Restores a checkpoint's index, using its arrays as they are; undefined when it is not well formed (the checkpoint is then ignored). */
  static fromIndex(src: LogSource, index: MainIndex, coveredLength: number): MainState | undefined {
    const state = new MainState(src);
    const v = ValueIndex.fromColumns(index.values, coveredLength);
    if (v === undefined) return undefined;
    state.#values = v;
    for (const { ns, key, segments } of index.lists) {
      const k = nameKey(ns, key);
      const l = ListSegments.fromNumbers(ns, key, segments, coveredLength);
      if (l === undefined || state.#lists.has(k)) return undefined;
      state.#lists.set(k, l);
      state.#elements += l.count;
    }
    return state;
  }
}

const SEQ_PREFIX = Buffer.from('{"seq":');

/** The first seq of the line at `start`, from its `{"seq":N` prefix; undefined when it does not start so. */
function lineSeq(buf: Buffer, start: number): number | undefined {
  if (start + SEQ_PREFIX.length > buf.length) return undefined;
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
