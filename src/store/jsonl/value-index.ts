// The session scope's values as the JSONL store indexes them: for each live (namespace, key), the
// position of the line that set it. Held in flat arrays rather than a Map of objects: a `spool run`
// session keeps a value per call, and a Map from a "ns:key" string to a {seq, offset, length, line}
// object cost ~180 bytes of heap per value (16.5 MB for the 90,601 values of a 1 GB log), all of it
// small objects a checkpoint load had to build and the collector then had to copy. Here a value is a
// slot: four numbers in typed arrays (uint32 while they fit; a line's length always does), its
// name in a byte arena (the namespace's number as a LEB128 varint, then the key in UTF-8; names are
// well formed, so UTF-8 is one-to-one) and a slot number in an open-addressing hash table over the
// names' bytes: 41 bytes per value on that log (3.7 MB: 20 of numbers, 15 of name, 6 of table), no
// per-value objects, and the checkpoint's columns (checkpoint.ts) are these arrays as they are, read
// straight into them. A deleted value's slot and name bytes stay until the dead outnumber the live;
// then they are compacted.
import { Buffer } from "node:buffer";

/** Where the line that set a value is, and the value's seq. */
export interface ValueAt {
  readonly seq: number;
  readonly offset: number;
  readonly length: number;
  readonly line: number;
}

/**
 * A column of non-negative integers that fit 32 bits until a session is large: a line offset past 2^32
 * in a log of 4 GiB, a seq or a line number only in one of over 150 GB (or whose header starts its
 * seqs there). Uint32 until a number does not fit, then float64.
 */
export type WideningColumn = Uint32Array | Float64Array;

/** The checkpoint form: `count` slots, all live, their names in `keys` up to `keyEnd[i]`. */
export interface ValueColumns {
  readonly namespaces: readonly string[];
  readonly count: number;
  readonly seq: WideningColumn;
  readonly offset: WideningColumn;
  /** A line's length fits 32 bits: a line is written from one string, and V8's strings stop below 2^29 characters. */
  readonly length: Uint32Array;
  readonly line: WideningColumn;
  readonly keyEnd: Uint32Array;
  readonly keys: Uint8Array;
}

/** A slot whose value was deleted (a seq is never 0 otherwise). */
const DEAD = 0;
/** The table is grown past this share of live entries (linear probing stays short below it). */
const MAX_LOAD = 0.75;
/** Dead slots are compacted away once there are this many and they outnumber the live. */
const COMPACT_AFTER = 1024;

function tableSizeFor(live: number): number {
  let size = 16;
  while (live > size * MAX_LOAD) size *= 2;
  return size;
}

/** FNV-1a over the bytes, finished with murmur3's mix so the low bits (the table index) are spread. */
function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** `a`, or a copy of the same type with room for `need` elements. */
function grown<A extends Float64Array | Uint32Array | Uint8Array>(a: A, need: number): A {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => A)(Math.max(need, Math.ceil(a.length * 1.5), 64));
  b.set(a);
  return b;
}

/** `a` with `v` at `i`, widened to float64 first when `v` does not fit 32 bits. */
function put(a: WideningColumn, i: number, v: number): WideningColumn {
  if (v > 0xffffffff && a instanceof Uint32Array) a = Float64Array.from(a);
  a[i] = v;
  return a;
}

export class ValueIndex {
  readonly #namespaces: string[] = [];
  readonly #nsIds = new Map<string, number>();
  /** Slots in use, live or dead; slot i's name is keys[keyEnd[i-1] (or 0), keyEnd[i]). */
  #slots = 0;
  #live = 0;
  #seq: WideningColumn = new Uint32Array(0);
  #offset: WideningColumn = new Uint32Array(0);
  #length: Uint32Array = new Uint32Array(0);
  #line: WideningColumn = new Uint32Array(0);
  #keyEnd: Uint32Array = new Uint32Array(0);
  #keys: Uint8Array = new Uint8Array(0);
  /** Slot + 1 per entry, 0 for empty; a power of two long. */
  #table = new Int32Array(16);
  /** The name being looked up, encoded. */
  #scratch = Buffer.allocUnsafe(256);

  get size(): number {
    return this.#live;
  }

  /** Encodes (ns, key) into the scratch buffer; returns its length, or -1 when the namespace is unknown and `add` is false. */
  #encode(ns: string, key: string, add: boolean): number {
    let id = this.#nsIds.get(ns);
    if (id === undefined) {
      if (!add) return -1;
      id = this.#namespaces.length;
      this.#namespaces.push(ns);
      this.#nsIds.set(ns, id);
    }
    if (this.#scratch.length < 5 + key.length * 3) this.#scratch = Buffer.allocUnsafe(5 + key.length * 3);
    const s = this.#scratch;
    let n = 0;
    for (; id >= 0x80; id >>>= 7) s[n++] = (id & 0x7f) | 0x80;
    s[n++] = id;
    return n + s.write(key, n, "utf8");
  }

  #start(slot: number): number {
    return slot === 0 ? 0 : this.#keyEnd[slot - 1]!;
  }

  /** Whether slot `slot`'s name is the bytes `b[start, end)`. Compared in place: a subarray per probe allocated 17 MB loading 90,601 names. */
  #nameIs(slot: number, b: Uint8Array, start: number, end: number): boolean {
    const from = this.#start(slot);
    const len = end - start;
    if (this.#keyEnd[slot]! - from !== len) return false;
    const keys = this.#keys;
    let i = 0;
    while (i < len && keys[from + i] === b[start + i]) i++;
    return i === len;
  }

  /** The table position holding the scratch name's slot, or the empty position where it would go. */
  #probe(len: number): number {
    const mask = this.#table.length - 1;
    for (let pos = hashBytes(this.#scratch, 0, len) & mask; ; pos = (pos + 1) & mask) {
      const e = this.#table[pos]!;
      if (e === 0 || this.#nameIs(e - 1, this.#scratch, 0, len)) return pos;
    }
  }

  /** Puts `slot` into the table (its name is not there yet). */
  #insert(slot: number): void {
    const mask = this.#table.length - 1;
    let pos = hashBytes(this.#keys, this.#start(slot), this.#keyEnd[slot]!) & mask;
    while (this.#table[pos] !== 0) pos = (pos + 1) & mask;
    this.#table[pos] = slot + 1;
  }

  #rebuildTable(): void {
    this.#table = new Int32Array(tableSizeFor(this.#live));
    for (let i = 0; i < this.#slots; i++) if (this.#seq[i] !== DEAD) this.#insert(i);
  }

  get(ns: string, key: string): ValueAt | undefined {
    const len = this.#encode(ns, key, false);
    if (len < 0) return undefined;
    const e = this.#table[this.#probe(len)]!;
    if (e === 0) return undefined;
    const i = e - 1;
    return { seq: this.#seq[i]!, offset: this.#offset[i]!, length: this.#length[i]!, line: this.#line[i]! };
  }

  set(ns: string, key: string, seq: number, offset: number, length: number, line: number): void {
    const len = this.#encode(ns, key, true);
    const pos = this.#probe(len);
    let slot = this.#table[pos]! - 1;
    if (slot < 0) {
      slot = this.#slots++;
      const need = this.#slots;
      this.#seq = grown(this.#seq, need);
      this.#offset = grown(this.#offset, need);
      this.#length = grown(this.#length, need);
      this.#line = grown(this.#line, need);
      this.#keyEnd = grown(this.#keyEnd, need);
      const start = this.#start(slot);
      this.#keys = grown(this.#keys, start + len);
      this.#scratch.copy(this.#keys, start, 0, len);
      this.#keyEnd[slot] = start + len;
      this.#live++;
      if (this.#live > this.#table.length * MAX_LOAD) {
        this.#seq = put(this.#seq, slot, seq);
        this.#rebuildTable();
      } else {
        this.#table[pos] = slot + 1;
      }
    }
    this.#seq = put(this.#seq, slot, seq);
    this.#offset = put(this.#offset, slot, offset);
    this.#length[slot] = length;
    this.#line = put(this.#line, slot, line);
  }

  delete(ns: string, key: string): void {
    const len = this.#encode(ns, key, false);
    if (len < 0) return;
    let hole = this.#probe(len);
    const e = this.#table[hole]!;
    if (e === 0) return;
    this.#seq[e - 1] = DEAD;
    this.#live--;
    // Backward-shift deletion: an entry after the hole moves into it unless its home lies cyclically
    // in (hole, j], so every entry stays reachable from its home without tombstones.
    const mask = this.#table.length - 1;
    for (let j = (hole + 1) & mask; this.#table[j] !== 0; j = (j + 1) & mask) {
      const slot = this.#table[j]! - 1;
      const home = hashBytes(this.#keys, this.#start(slot), this.#keyEnd[slot]!) & mask;
      const stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!stays) {
        this.#table[hole] = this.#table[j]!;
        hole = j;
      }
    }
    this.#table[hole] = 0;
    const dead = this.#slots - this.#live;
    if (dead >= COMPACT_AFTER && dead > this.#live) this.#compact();
  }

  /** Drops dead slots and their name bytes, keeping the live ones in order. */
  #compact(): void {
    let to = 0;
    let bytes = 0;
    for (let i = 0; i < this.#slots; i++) {
      if (this.#seq[i] === DEAD) continue;
      const start = this.#start(i);
      const end = this.#keyEnd[i]!;
      this.#keys.copyWithin(bytes, start, end);
      bytes += end - start;
      this.#seq[to] = this.#seq[i]!;
      this.#offset[to] = this.#offset[i]!;
      this.#length[to] = this.#length[i]!;
      this.#line[to] = this.#line[i]!;
      this.#keyEnd[to] = bytes;
      to++;
    }
    this.#slots = to;
    this.#rebuildTable();
  }

  /** Every live value: namespace, key and where it is. */
  *entries(): Generator<[string, string, ValueAt]> {
    const keys = Buffer.from(this.#keys.buffer, this.#keys.byteOffset, this.#keys.length);
    for (let i = 0; i < this.#slots; i++) {
      if (this.#seq[i] === DEAD) continue;
      let p = this.#start(i);
      let id = 0;
      for (let shift = 0; ; shift += 7) {
        const b = keys[p++]!;
        id += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
      const at = { seq: this.#seq[i]!, offset: this.#offset[i]!, length: this.#length[i]!, line: this.#line[i]! };
      yield [this.#namespaces[id]!, keys.toString("utf8", p, this.#keyEnd[i]!), at];
    }
  }

  /** The live values as the checkpoint stores them (views of the arrays, valid until the next change). */
  columns(): ValueColumns {
    if (this.#live < this.#slots) this.#compact();
    const n = this.#slots;
    return {
      namespaces: [...this.#namespaces],
      count: n,
      seq: this.#seq.subarray(0, n),
      offset: this.#offset.subarray(0, n),
      length: this.#length.subarray(0, n),
      line: this.#line.subarray(0, n),
      keyEnd: this.#keyEnd.subarray(0, n),
      keys: this.#keys.subarray(0, n === 0 ? 0 : this.#keyEnd[n - 1]!),
    };
  }

  /**
   * An index over a checkpoint's columns, taken as they are (not copied); undefined when they are not
   * well formed: a number that is not a non-negative integer, a line past `coveredLength`, a name that
   * does not decode or appears twice.
   */
  static fromColumns(c: ValueColumns, coveredLength: number): ValueIndex | undefined {
    const n = c.count;
    if (
      c.namespaces.length > 0x7fffffff ||
      new Set(c.namespaces).size !== c.namespaces.length ||
      !c.namespaces.every((ns) => typeof ns === "string" && ns.length > 0) ||
      [c.seq, c.offset, c.length, c.line, c.keyEnd].some((a) => a.length !== n) ||
      (n > 0 ? c.keyEnd[n - 1] : 0) !== c.keys.length
    ) {
      return undefined;
    }
    const x = new ValueIndex();
    x.#namespaces.push(...c.namespaces);
    c.namespaces.forEach((ns, i) => x.#nsIds.set(ns, i));
    x.#slots = n;
    x.#live = n;
    x.#seq = c.seq;
    x.#offset = c.offset;
    x.#length = c.length;
    x.#line = c.line;
    x.#keyEnd = c.keyEnd;
    x.#keys = c.keys;
    x.#table = new Int32Array(tableSizeFor(n));
    const mask = x.#table.length - 1;
    // One pass, checking and hashing (two passes cost a second optimised compile: ~1 MB of peak RSS).
    let start = 0;
    for (let i = 0; i < n; i++) {
      const seq = c.seq[i]!;
      const offset = c.offset[i]!;
      const length = c.length[i]!;
      const line = c.line[i]!;
      if (!(Number.isSafeInteger(seq) && seq >= 1 && Number.isSafeInteger(offset) && offset >= 0)) return undefined;
      if (!(length >= 1 && Number.isSafeInteger(line) && line >= 2 && offset + length <= coveredLength)) return undefined;
      // The name: a varint naming a namespace, then the key's bytes.
      const end = c.keyEnd[i]!;
      let p = start;
      let id = 0;
      for (let shift = 0; ; shift += 7) {
        if (p >= end || shift > 28) return undefined;
        const b = c.keys[p++]!;
        id += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
      if (id >= c.namespaces.length) return undefined;
      let pos = hashBytes(c.keys, start, end) & mask;
      for (let e = x.#table[pos]!; e !== 0; pos = (pos + 1) & mask, e = x.#table[pos]!) {
        if (x.#nameIs(e - 1, c.keys, start, end)) return undefined;
      }
      x.#table[pos] = i + 1;
      start = end;
    }
    return x;
  }
}
