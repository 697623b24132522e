// A session-scope list of a JSONL store as its index holds it: the element count and the list's
// segments, each a byte span of the main log holding up to SEGMENT_ELEMENTS of its elements within
// SEGMENT_BYTES (or one longer line). The segments are 7 numbers each in one Float64Array — the form
// the checkpoint stores them in (checkpoint.ts), so a checkpoint's are used as read — rather than an
// object each: the 1 GB `spool run` session's transcript has 3,900 segments, which as objects and
// their checkpoint arrays were what grew V8's young generation during a read-only open.

/** Where a complete line of the main log is: byte offset, length with its newline, 1-based line number. */
export interface LineLoc {
  readonly offset: number;
  readonly length: number;
  readonly line: number;
}

export const SEGMENT_ELEMENTS = 1024;
export const SEGMENT_BYTES = 256 * 1024;

/** Elements firstSeq…lastSeq of one list lie in the lines firstLine…lastLine, bytes start…end. */
export interface Segment {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly count: number;
  readonly start: number;
  readonly end: number;
  readonly firstLine: number;
  readonly lastLine: number;
}

/** Numbers per segment, in this order. */
export const SEGMENT_FIELDS = 7;
const FIRST_SEQ = 0;
const LAST_SEQ = 1;
const COUNT = 2;
const START = 3;
const END = 4;
const FIRST_LINE = 5;
const LAST_LINE = 6;

export class ListSegments {
  readonly ns: string;
  readonly key: string;
  #count = 0;
  /** SEGMENT_FIELDS numbers per segment; room for more past `#n` segments. */
  #a: Float64Array;
  #n = 0;

  constructor(ns: string, key: string) {
    this.ns = ns;
    this.key = key;
    this.#a = new Float64Array(SEGMENT_FIELDS * 2);
  }

  /** Elements in the list. */
  get count(): number {
    return this.#count;
  }

  /** Segments in the list. */
  get length(): number {
    return this.#n;
  }

  at(i: number): Segment {
    const a = this.#a;
    const b = i * SEGMENT_FIELDS;
    return {
      firstSeq: a[b + FIRST_SEQ]!,
      lastSeq: a[b + LAST_SEQ]!,
      count: a[b + COUNT]!,
      start: a[b + START]!,
      end: a[b + END]!,
      firstLine: a[b + FIRST_LINE]!,
      lastLine: a[b + LAST_LINE]!,
    };
  }

  /** The list's first and last element seqs (the list is never empty). */
  get firstSeq(): number {
    return this.#a[FIRST_SEQ]!;
  }

  get lastSeq(): number {
    return this.#a[(this.#n - 1) * SEGMENT_FIELDS + LAST_SEQ]!;
  }

  /** Adds an element: a segment grows while it stays under both bounds; a line never straddles two segments. */
  add(seq: number, at: LineLoc): void {
    const a = this.#a;
    const end = at.offset + at.length;
    const b = (this.#n - 1) * SEGMENT_FIELDS;
    if (this.#n > 0 && a[b + END] === end) {
      a[b + LAST_SEQ] = seq;
      a[b + COUNT]!++;
    } else if (this.#n > 0 && a[b + COUNT]! < SEGMENT_ELEMENTS && end - a[b + START]! <= SEGMENT_BYTES) {
      a[b + LAST_SEQ] = seq;
      a[b + COUNT]!++;
      a[b + END] = end;
      a[b + LAST_LINE] = at.line;
    } else {
      if ((this.#n + 1) * SEGMENT_FIELDS > a.length) {
        this.#a = new Float64Array(Math.max(2 * a.length, SEGMENT_FIELDS * 2));
        this.#a.set(a);
      }
      this.#a.set([seq, seq, 1, at.offset, end, at.line, at.line], this.#n * SEGMENT_FIELDS);
      this.#n++;
    }
    this.#count++;
  }

  /** The first segment holding an element after `seq`. */
  firstEndingAfter(seq: number): number {
    let lo = 0;
    let hi = this.#n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#a[mid * SEGMENT_FIELDS + LAST_SEQ]! <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The last segment holding an element before `seq` (-1 when none). */
  lastStartingBefore(seq: number): number {
    let lo = 0;
    let hi = this.#n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#a[mid * SEGMENT_FIELDS + FIRST_SEQ]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /** The segments as the checkpoint stores them (a view, valid until the next add). */
  numbers(): Float64Array {
    return this.#a.subarray(0, this.#n * SEGMENT_FIELDS);
  }

  /**
   * A list over a checkpoint's numbers, taken as they are (not copied); undefined when they are not
   * well formed: no segment, a number that is not a non-negative integer, a segment that is empty,
   * inverted or past `coveredLength`, or segments out of order.
   */
  static fromNumbers(ns: string, key: string, a: Float64Array, coveredLength: number): ListSegments | undefined {
    if (a.length === 0 || a.length % SEGMENT_FIELDS !== 0) return undefined;
    let count = 0;
    let prevLastSeq = 0;
    let prevEnd = 0;
    for (let b = 0; b < a.length; b += SEGMENT_FIELDS) {
      for (let f = 0; f < SEGMENT_FIELDS; f++) if (!Number.isSafeInteger(a[b + f]) || a[b + f]! < 0) return undefined;
      if (a[b + COUNT]! < 1 || a[b + LAST_SEQ]! < a[b + FIRST_SEQ]! || a[b + END]! <= a[b + START]! || a[b + END]! > coveredLength) return undefined;
      if (a[b + LAST_LINE]! < a[b + FIRST_LINE]! || a[b + FIRST_SEQ]! <= prevLastSeq || a[b + START]! < prevEnd) return undefined;
      prevLastSeq = a[b + LAST_SEQ]!;
      prevEnd = a[b + END]!;
      count += a[b + COUNT]!;
    }
    const l = new ListSegments(ns, key);
    l.#a = a;
    l.#n = a.length / SEGMENT_FIELDS;
    l.#count = count;
    return l;
  }
}
