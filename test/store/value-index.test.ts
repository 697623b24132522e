// The JSONL store's value index (flat arrays, names in a byte arena, open addressing): it must behave
// as a Map from (namespace, key) to a position under any sequence of sets and deletes — deletions that
// shift probe chains, compaction once the dead outnumber the live, growth of every array — and what it
// saves as checkpoint columns must load back to the same map, while columns that are not well formed
// are refused.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValueIndex, type ValueAt, type ValueColumns } from "../../src/store/jsonl/value-index.js";

/** Names that stress the encoding: empty keys, NUL, separators, astral characters, long keys; and over 128 namespaces (two-byte ids). */
const NAMESPACES = ["spool", "harness", "5:s", "\u0000", "é", "😀", ...Array.from({ length: 140 }, (_, i) => `ns${i}`)];
const KEYS = ["", "run", "run:call-1", "call-1", ":", "\u0000", "a\u0000b", "ü", "😀😀", "x".repeat(300), ...Array.from({ length: 40 }, (_, i) => `k${i}`)];

type Op = { kind: "set"; ns: string; key: string; at: ValueAt } | { kind: "delete"; ns: string; key: string };

const at: fc.Arbitrary<ValueAt> = fc.record({
  seq: fc.oneof(fc.integer({ min: 1, max: 2 ** 32 - 1 }), fc.integer({ min: 1, max: 2 ** 40 })),
  offset: fc.oneof(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 40 })),
  length: fc.integer({ min: 1, max: 2 ** 32 - 1 }),
  line: fc.oneof(fc.integer({ min: 2, max: 2 ** 32 - 1 }), fc.integer({ min: 2, max: 2 ** 33 })),
});
/** Mostly a few namespaces, so that deletes hit names that are set and probe chains get long. */
const ns = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...NAMESPACES.slice(0, 3)) }, { weight: 1, arbitrary: fc.constantFrom(...NAMESPACES) });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("set" as const), ns, key: fc.constantFrom(...KEYS), at }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), ns, key: fc.constantFrom(...KEYS) }) },
);

const name = (ns: string, key: string) => JSON.stringify([ns, key]);

function apply(x: ValueIndex, model: Map<string, ValueAt>, o: Op): void {
  if (o.kind === "set") {
    x.set(o.ns, o.key, o.at.seq, o.at.offset, o.at.length, o.at.line);
    model.set(name(o.ns, o.key), o.at);
  } else {
    x.delete(o.ns, o.key);
    model.delete(name(o.ns, o.key));
  }
}

function contents(x: ValueIndex): Map<string, ValueAt> {
  return new Map([...x.entries()].map(([ns, key, a]) => [name(ns, key), a]));
}

/** The columns copied out, as a checkpoint file would hand them back. */
function copied(c: ValueColumns): ValueColumns {
  return {
    namespaces: [...c.namespaces],
    count: c.count,
    seq: c.seq.slice(),
    offset: c.offset.slice(),
    length: c.length.slice(),
    line: c.line.slice(),
    keyEnd: c.keyEnd.slice(),
    keys: c.keys.slice(),
  };
}

describe("the JSONL value index", () => {
  it("is a map from (namespace, key) to a position, and its columns load back to the same map", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400, size: "max" }), fc.array(op, { maxLength: 100, size: "max" }), (ops, after) => {
        const x = new ValueIndex();
        const model = new Map<string, ValueAt>();
        for (const o of ops) {
          apply(x, model, o);
          expect(x.get(o.ns, o.key)).toEqual(model.get(name(o.ns, o.key)));
        }
        expect(x.size).toBe(model.size);
        expect(contents(x)).toEqual(model);
        // Every name ever touched is found (or not) through the table, whatever deletions shifted.
        for (const o of ops) expect(x.get(o.ns, o.key)).toEqual(model.get(name(o.ns, o.key)));
        for (const key of KEYS) expect(x.get("absent", key)).toBeUndefined();
        const loaded = ValueIndex.fromColumns(copied(x.columns()), 2 ** 50);
        expect(loaded).toBeDefined();
        expect(contents(loaded!)).toEqual(model);
        // A loaded index keeps working: it grows out of the checkpoint's arrays.
        for (const o of after) {
          apply(loaded!, model, o);
          expect(loaded!.get(o.ns, o.key)).toEqual(model.get(name(o.ns, o.key)));
        }
        expect(contents(loaded!)).toEqual(model);
        expect(loaded!.size).toBe(model.size);
      }),
      { numRuns: 100 },
    );
  });

  it("finds every name after deletions in a crowded table (clusters that wrap around its end)", () => {
    // At most 12 live names: the table stays at 16 entries, three quarters full.
    const names = Array.from({ length: 14 }, (_, i) => `k${i}`);
    const crowded = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), ns: fc.constant("s"), key: fc.constantFrom(...names), at }),
      fc.record({ kind: fc.constant("delete" as const), ns: fc.constant("s"), key: fc.constantFrom(...names) }),
    );
    fc.assert(
      fc.property(fc.array(crowded, { maxLength: 300, size: "max" }), (ops) => {
        const x = new ValueIndex();
        const model = new Map<string, ValueAt>();
        for (const o of ops) {
          if (o.kind === "set" && model.size >= 12 && !model.has(name(o.ns, o.key))) continue;
          apply(x, model, o);
          for (const k of names) if (x.get("s", k)?.seq !== model.get(name("s", k))?.seq) expect(x.get("s", k)).toEqual(model.get(name("s", k)));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("compacts once the dead outnumber the live, keeping every live value and its order", () => {
    const x = new ValueIndex();
    const model = new Map<string, ValueAt>();
    const N = 5000;
    for (let i = 0; i < N; i++)
      apply(x, model, { kind: "set", ns: `n${i % 3}`, key: `key-${i}`, at: { seq: i + 1, offset: i * 100, length: 100, line: i + 2 } });
    const keysBefore = x.columns().keys.length;
    // Delete four in five, in an order that cuts through probe chains.
    for (let i = N - 1; i >= 0; i--) if (i % 5 !== 0) apply(x, model, { kind: "delete", ns: `n${i % 3}`, key: `key-${i}` });
    expect(x.size).toBe(N / 5);
    for (let i = 0; i < N; i++) expect(x.get(`n${i % 3}`, `key-${i}`)).toEqual(model.get(name(`n${i % 3}`, `key-${i}`)));
    const c = x.columns();
    expect(c.count).toBe(N / 5);
    expect(c.keys.length).toBeLessThan(keysBefore / 4);
    expect([...x.entries()].map(([, , a]) => a.seq)).toEqual([...model.values()].map((a) => a.seq));
    // Deleted names can be set again.
    apply(x, model, { kind: "set", ns: "n1", key: "key-1", at: { seq: 9999, offset: 1, length: 2, line: 3 } });
    expect(contents(x)).toEqual(model);
  });

  describe("refuses columns that are not well formed", () => {
    function sample(): ValueColumns {
      const x = new ValueIndex();
      x.set("spool", "run", 5, 100, 50, 3);
      x.set("harness", "operations", 7, 150, 60, 4);
      return copied(x.columns());
    }
    const cases: [string, (c: ValueColumns) => ValueColumns][] = [
      [
        "a line past the covered length",
        (c) => {
          c.offset.set([10_000], 1);
          return c;
        },
      ],
      ["a fractional number", (c) => ({ ...c, offset: Float64Array.of(1.5, c.offset[1]!) })],
      ["a negative number", (c) => ({ ...c, offset: Float64Array.of(-1, c.offset[1]!) })],
      [
        "a line number of the header",
        (c) => {
          c.line.set([1], 0);
          return c;
        },
      ],
      [
        "a namespace id out of range",
        (c) => {
          c.keys.set([9], 0);
          return c;
        },
      ],
      [
        "a name with no bytes",
        (c) => {
          c.keyEnd.set([0], 0);
          return c;
        },
      ],
      ["names that do not end where the keys do", (c) => ({ ...c, keys: c.keys.subarray(0, c.keys.length - 1) })],
      ["one name twice", (c) => ({ ...c, namespaces: ["spool", "harness"], keys: Buffer.from("\u0000run\u0000run"), keyEnd: new Uint32Array([4, 8]) })],
      ["a namespace listed twice", (c) => ({ ...c, namespaces: ["spool", "spool"] })],
      ["a column of the wrong length", (c) => ({ ...c, line: c.line.subarray(0, 1) })],
    ];
    it.each(cases)("%s", (_name, spoil) => {
      expect(ValueIndex.fromColumns(sample(), 1000)).toBeDefined();
      expect(ValueIndex.fromColumns(spoil(sample()), 1000)).toBeUndefined();
    });
  });
});
