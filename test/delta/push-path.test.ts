// Guards for the tracker's push path. The one-pass path for a lone pushed plain object of primitives (`cloneFlat`):
// it must decide exactly what the general JSON walk decides (same rejections, same messages, no getter
// called) and put into the batch a copy equal to what the general clone makes. The oracle for each
// case is the same value pushed beside a second item, which always takes the general walk. And the
// caches a push through `state.entries.push(…)` hits: the root's proxy, the last proxy made, the last
// array a mutator ran on.
import { describe, expect, it } from "vitest";
import { NotJsonError, track, type Op } from "../../src/delta/index.js";
import { Pipe } from "./helpers.js";

type Entries = { entries: unknown[] };

/** The error a push of `make()` throws, alone (the fast path's) and beside a second item (the general walk's). */
function pushErrors(make: () => unknown): [unknown, unknown] {
  const catchOf = (f: () => void): unknown => {
    try {
      f();
    } catch (e) {
      return e;
    }
    return undefined;
  };
  const a = track<Entries>({ entries: [] });
  a.flush();
  const b = track<Entries>({ entries: [] });
  b.flush();
  return [catchOf(() => a.state.entries.push(make())), catchOf(() => b.state.entries.push(make(), 1))];
}

/** The batch item a push of `make()` records, alone and beside a second item. */
function pushedItems(make: () => unknown): [unknown, unknown] {
  const a = track<Entries>({ entries: [] });
  a.flush();
  a.state.entries.push(make());
  const b = track<Entries>({ entries: [] });
  b.flush();
  b.state.entries.push(make(), 1);
  const item = (ops: Op[]) => (ops[0] as ["p", unknown, number, number, unknown[]])[4][0];
  return [item(a.flush()), item(b.flush())];
}

describe("a pushed plain object: the one-pass check and copy decide what the general walk decides", () => {
  const rejected: [string, () => unknown][] = [
    ["a getter", () => Object.defineProperty({ a: 1 }, "x", { get: () => 1, enumerable: true, configurable: true })],
    ["a setter only", () => Object.defineProperty({ a: 1 }, "x", { set: () => {}, enumerable: true, configurable: true })],
    ["a non-enumerable property", () => Object.defineProperty({ a: 1 }, "x", { value: 1, enumerable: false })],
    ["a symbol key", () => ({ a: 1, [Symbol("s")]: 2 })],
    [
      "a class instance",
      () =>
        new (class Entry {
          id = "e1";
        })(),
    ],
    ["a Date", () => new Date(0)],
    ["a frozen object", () => Object.freeze({ a: 1 })],
    ["a sealed object", () => Object.seal({ a: 1 })],
    ["NaN", () => ({ a: "x", n: Number.NaN })],
    ["Infinity", () => ({ a: "x", n: Number.POSITIVE_INFINITY })],
    ["-Infinity", () => ({ n: Number.NEGATIVE_INFINITY, a: "x" })],
    ["a BigInt", () => ({ a: 1n })],
    ["a function", () => ({ a: () => 1 })],
    ["a symbol value", () => ({ a: Symbol("v") })],
    ["a sparse array", () => [1, , 3]],
    ["a nested getter", () => ({ a: Object.defineProperty({}, "x", { get: () => 1, enumerable: true }) })],
  ];
  for (const [what, make] of rejected) {
    it(`rejects ${what} with the general walk's error`, () => {
      const [alone, general] = pushErrors(make);
      expect(alone).toBeInstanceOf(NotJsonError);
      expect(general).toBeInstanceOf(NotJsonError);
      expect((alone as Error).message).toBe((general as Error).message);
    });
  }

  it("never calls a getter on the pushed object, and the rejected push leaves nothing behind", () => {
    let calls = 0;
    const o = Object.defineProperty({ id: "e1" }, "text", {
      get: () => {
        calls++;
        return "message";
      },
      enumerable: true,
      configurable: true,
    });
    const pipe = new Pipe<Entries>({ entries: [] });
    pipe.sync();
    expect(() => pipe.state.entries.push(o)).toThrow(NotJsonError);
    expect(calls).toBe(0);
    expect(pipe.tracker.target.entries).toEqual([]);
    pipe.state.entries.push({ id: "e2", text: "ok" });
    pipe.sync();
    expect(calls).toBe(0);
  });

  const accepted: [string, () => unknown][] = [
    ["an empty object", () => ({})],
    ["strings, numbers, booleans and null", () => ({ s: "x", n: 1.5, i: -3, t: true, f: false, z: null })],
    ["-0", () => ({ z: -0 })],
    ["an undefined value", () => ({ a: undefined, b: 1 })],
    ["a null prototype", () => Object.assign(Object.create(null) as object, { a: 1, b: "x" })],
    ["an own __proto__ key", () => JSON.parse('{"__proto__": 5, "a": 1}') as unknown],
    ["a nested object", () => ({ a: { b: 1 }, c: "x" })],
    ["a nested array", () => ({ a: [1, 2], c: "x" })],
    ["index-like keys", () => ({ 1: "one", 0: "zero", a: "x" })],
    ["an array of primitives", () => [1, "x", null]],
  ];
  for (const [what, make] of accepted) {
    it(`copies ${what} as the general clone does`, () => {
      const [alone, general] = pushedItems(make);
      expect(alone).toStrictEqual(general);
      if (typeof alone === "object" && alone !== null && !Array.isArray(alone)) {
        expect(Object.getPrototypeOf(alone)).toBe(Object.getPrototypeOf(general));
        expect(Reflect.ownKeys(alone)).toEqual(Reflect.ownKeys(general as object));
        // -0 stays -0 in both (toStrictEqual treats it as 0).
        for (const k of Object.keys(alone)) {
          const x = (alone as Record<string, unknown>)[k];
          if (typeof x !== "object" || x === null) expect(Object.is(x, (general as Record<string, unknown>)[k])).toBe(true);
        }
      }
      const pipe = new Pipe<Entries>({ entries: [] });
      pipe.sync();
      pipe.state.entries.push(make());
      pipe.sync();
    });
  }
});

describe("a pushed plain object: the batch holds a copy, positions stay tracked", () => {
  it("the batch's item is a copy: writing the pushed object after the flush does not change the batch", () => {
    const pipe = new Pipe<Entries>({ entries: [] });
    pipe.sync();
    const o = { id: "e1", text: "one" };
    pipe.state.entries.push(o);
    const ops = pipe.sync();
    const item = (ops[0] as ["p", unknown, number, number, unknown[]])[4][0];
    expect(item).not.toBe(o);
    (pipe.state.entries[0] as { text: string }).text = "two";
    expect(item).toEqual({ id: "e1", text: "one" });
    pipe.sync();
  });

  it("a write through the state into the pushed object before the flush is folded into the push", () => {
    const pipe = new Pipe<Entries>({ entries: [{ id: "e0", text: "zero" }] });
    pipe.sync();
    pipe.state.entries.push({ id: "e1", text: "one" });
    (pipe.state.entries[1] as { text: string }).text = "one, edited";
    const ops = pipe.sync();
    expect(ops).toEqual([["p", ["entries"], 1, 0, [{ id: "e1", text: "one, edited" }]]]);
  });

  it("a write to the raw pushed object before the flush bypasses tracking: the batch has the pushed value", () => {
    const t = track<Entries>({ entries: [] });
    t.flush();
    const o = { id: "e1", text: "one" };
    t.state.entries.push(o);
    o.text = "changed behind the tracker";
    expect(t.flush()).toEqual([["p", ["entries"], 0, 0, [{ id: "e1", text: "one" }]]]);
  });

  it("the same object pushed twice, in one window, is two positions: a later write reaches both", () => {
    const pipe = new Pipe<Entries>({ entries: [] });
    pipe.sync();
    const o = { id: "e1", text: "one" };
    pipe.state.entries.push(o);
    pipe.state.entries.push(o);
    pipe.sync();
    (pipe.state.entries[0] as { text: string }).text = "both";
    pipe.sync();
    expect(pipe.replica?.entries).toEqual([
      { id: "e1", text: "both" },
      { id: "e1", text: "both" },
    ]);
  });

  it("the same object pushed again after a flush, and through its proxy, is an alias", () => {
    const pipe = new Pipe<{ entries: unknown[]; other: unknown[] }>({ entries: [], other: [] });
    pipe.sync();
    pipe.state.entries.push({ id: "e1", text: "one" });
    pipe.sync();
    pipe.state.entries.push(pipe.tracker.target.entries[0]);
    pipe.state.other.push(pipe.state.entries[0]);
    pipe.sync();
    (pipe.state.other[0] as { text: string }).text = "all three";
    pipe.sync();
    expect(pipe.replica).toEqual({
      entries: [
        { id: "e1", text: "all three" },
        { id: "e1", text: "all three" },
      ],
      other: [{ id: "e1", text: "all three" }],
    });
  });

  it("a pushed object's nested containers are tracked: writes into them replicate, in the window and after", () => {
    const pipe = new Pipe<Entries>({ entries: [] });
    pipe.sync();
    pipe.state.entries.push({ id: "e1", meta: { n: 1 }, tags: ["a"] });
    const e = pipe.state.entries[0] as { meta: { n: number }; tags: string[] };
    e.meta.n = 2;
    pipe.sync();
    e.meta.n = 3;
    e.tags.push("b");
    pipe.sync();
  });

  it("an object pushed then written in the same window, then pushed again, stays exact", () => {
    const pipe = new Pipe<Entries>({ entries: [] });
    pipe.sync();
    const o = { id: "e1", text: "one" };
    pipe.state.entries.push(o);
    (pipe.state.entries[0] as { text: string }).text = "edited";
    pipe.state.entries.push(o);
    pipe.sync();
    (pipe.state.entries[1] as { id: string }).id = "shared";
    pipe.sync();
  });
});

describe("the push path's caches", () => {
  it("a new root gets its own proxy: writes after `state = …` land in the new root", () => {
    const pipe = new Pipe<Entries>({ entries: [] });
    pipe.sync();
    pipe.state.entries.push({ id: "old" });
    const next = { entries: [{ id: "n0" }] };
    pipe.tracker.state = next;
    pipe.sync();
    pipe.state.entries.push({ id: "n1" });
    expect(next.entries).toEqual([{ id: "n0" }, { id: "n1" }]);
    pipe.sync();
    expect(pipe.replica).toEqual({ entries: [{ id: "n0" }, { id: "n1" }] });
  });

  it("a mutator taken off a tracked array refuses any other receiver, before and after a call", () => {
    const t = track<Entries>({ entries: [] });
    const push = t.state.entries.push;
    expect(() => push.call([1], 2)).toThrow(TypeError);
    t.state.entries.push({ id: "e1" });
    expect(() => push.call([1], 2)).toThrow(TypeError);
    expect(() => push.call(undefined, 2)).toThrow(TypeError);
    expect(() => push.call(t.target.entries, 2)).toThrow(TypeError);
    expect(t.target.entries).toEqual([{ id: "e1" }]);
  });

  it("pushes alternating between two arrays, and reads between them, land where they were made", () => {
    const pipe = new Pipe<{ a: unknown[]; b: unknown[]; c: { d: unknown[] } }>({ a: [], b: [], c: { d: [] } });
    pipe.sync();
    const { a, b } = pipe.state;
    for (let i = 0; i < 5; i++) {
      a.push({ i });
      b.push({ j: i });
      pipe.state.c.d.push(i);
      a.push.call(b, { k: i });
      if (i % 2 === 0) pipe.sync();
    }
    pipe.sync();
    expect(pipe.tracker.target.a).toHaveLength(5);
    expect(pipe.tracker.target.b).toHaveLength(10);
  });
});
