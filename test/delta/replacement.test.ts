// Replacement, first flush, discard, fan-out and coalescing.
import { describe, expect, it } from "vitest";
import { apply, applyImmutable, isBase, track, type Op } from "../../src/delta/index.js";
import { json, Pipe } from "./helpers.js";

describe("replacement", () => {
  it("state = x gives r and tracking continues", () => {
    const t = track<{ n: number; m?: number }>({ n: 0 });
    t.flush();
    const next = { n: 1 };
    t.state = next;
    expect(t.flush()).toEqual([["r", { n: 1 }]]);
    t.state.n = 2;
    expect(t.flush()).toEqual([["s", ["n"], 2]]);
    expect(t.target).toEqual({ n: 2 });
  });

  it("self-assigning the root rebases without poisoning the tracker", () => {
    const t = track({ n: 1, o: { v: "a" } });
    t.flush();
    t.state = t.state;
    expect(t.flush()).toEqual([["r", { n: 1, o: { v: "a" } }]]);
    t.state.n = 3;
    t.state.o.v += "b";
    expect(t.flush()).toEqual([
      ["s", ["n"], 3],
      ["a", ["o", "v"], "b"],
    ]);
    expect(t.target).toEqual({ n: 3, o: { v: "ab" } });
    // The target is still a plain object, not the proxy stored into itself.
    expect(JSON.stringify(t.target)).toBe('{"n":3,"o":{"v":"ab"}}');
  });

  it("self-assigning a tracked child is a no-op", () => {
    const t = track({ o: { v: 1 } });
    t.flush();
    t.state.o = t.state.o;
    expect(t.flush()).toEqual([]);
    t.state.o.v = 2;
    expect(t.flush()).toEqual([["s", ["o", "v"], 2]]);
  });

  it("ops recorded before state = x are discarded", () => {
    const t = track<Record<string, number>>({ n: 0 });
    t.flush();
    t.state.n = 5;
    t.state.k = 6;
    t.state = { m: 1 };
    expect(t.flush()).toEqual([["r", { m: 1 }]]);
  });

  it("a partial rewrite keeps its ops (not a base)", () => {
    const p = new Pipe({ a: { x: 1, y: "s" }, b: [1, 2] });
    p.sync();
    p.state.a = { x: 2, y: "s" };
    p.state.b = [1, 2, 3];
    const ops = p.sync();
    expect(isBase(ops)).toBe(false);
    expect(ops).toEqual([
      ["s", ["a", "x"], 2],
      ["p", ["b"], 2, 0, [3]],
    ]);
  });

  it("rebase() forces a base once; the next flush is a delta", () => {
    const t = track({ n: 1 });
    t.flush();
    t.state.n = 2;
    t.rebase();
    expect(t.flush()).toEqual([["r", { n: 2 }]]);
    t.state.n = 3;
    expect(t.flush()).toEqual([["s", ["n"], 3]]);
    expect(t.flush()).toEqual([]);
  });
});

describe("first flush", () => {
  it("is always a base and carries pre-flush mutations", () => {
    const t = track<{ n: number; s: string; xs: number[]; k?: boolean }>({ n: 1, s: "a", xs: [] });
    t.state.n = 2;
    t.state.s += "b";
    t.state.xs.push(1);
    t.state.k = true;
    expect(t.flush()).toEqual([["r", { n: 2, s: "ab", xs: [1], k: true }]]);
  });

  it("is followed by deltas", () => {
    const t = track({ n: 1 });
    expect(isBase(t.flush())).toBe(true);
    t.state.n = 2;
    const ops = t.flush();
    expect(isBase(ops)).toBe(false);
    expect(ops).toEqual([["s", ["n"], 2]]);
  });

  it("dirty is true before the first flush; an untouched first flush is still r, followed by []", () => {
    const t = track({ n: 1 });
    expect(t.dirty).toBe(true);
    expect(t.flush()).toEqual([["r", { n: 1 }]]);
    expect(t.dirty).toBe(false);
    expect(t.flush()).toEqual([]);
  });

  it("discard() publishes nothing and later edits still flow", () => {
    const t = track({ n: 1, m: 0 });
    let replica = apply(undefined, t.flush());
    t.state.n = 2;
    expect(t.dirty).toBe(true);
    t.discard();
    expect(t.dirty).toBe(false);
    expect(t.flush()).toEqual([]);
    expect(t.target).toEqual({ n: 2, m: 0 });
    t.state.m = 7;
    const ops = t.flush();
    expect(ops).toEqual([["s", ["m"], 7]]);
    replica = apply(replica, ops);
    // The discarded write never reaches the replica, by design.
    expect(replica).toEqual({ n: 1, m: 7 });
  });
});

describe("applyImmutable", () => {
  it("does not mutate a replacement payload that a later op targets", () => {
    const payload = { a: { b: 1, s: "x" }, xs: [1] };
    const batch: Op[] = [
      ["r", payload],
      ["s", ["a", "b"], 2],
      ["a", ["a", "s"], "y"],
      ["p", ["xs"], 1, 0, [2]],
    ];
    const out = applyImmutable(undefined, batch);
    expect(out).toEqual({ a: { b: 2, s: "xy" }, xs: [1, 2] });
    expect(payload).toEqual({ a: { b: 1, s: "x" }, xs: [1] });
  });

  it("shares unchanged subtrees and copies containers along the changed path", () => {
    const before = { a: { b: 1 }, c: { d: [1] } };
    const after = applyImmutable(before, [["s", ["a", "b"], 2]]);
    expect(after).not.toBe(before);
    expect(after.a).not.toBe(before.a);
    expect(after.c).toBe(before.c);
    expect(before).toEqual({ a: { b: 1 }, c: { d: [1] } });
  });
});

describe("fan-out", () => {
  it("the r payload is adopted (aliasing pinned deliberately)", () => {
    const v = { a: 1 };
    const out = apply(undefined, [["r", v]]);
    expect(out).toBe(v);
  });

  it("the replica does not alias the producer", () => {
    const t = track({ o: { a: 1 }, xs: [{ v: 1 }] });
    const replica = apply<typeof t.target>(undefined, t.flush());
    expect(replica.o).not.toBe(t.target.o);
    expect(replica.xs[0]).not.toBe(t.target.xs[0]);
    t.state.o.a = 2;
    t.state.xs[0]!.v = 2;
    expect(replica).toEqual({ o: { a: 1 }, xs: [{ v: 1 }] });
  });

  it("assigned values are adopted without cloning", () => {
    const t = track<{ item?: { k: number } }>({});
    t.flush();
    const item = { k: 1 };
    t.state.item = item;
    expect(t.target.item).toBe(item);
  });

  it("pushed values do not alias an in-process consumer", () => {
    const t = track({ xs: [] as { k: number }[] });
    let replica = apply<typeof t.target>(undefined, t.flush());
    const item = { k: 1 };
    t.state.xs.push(item);
    const ops = t.flush();
    replica = apply(replica, ops);
    expect(replica.xs[0]).not.toBe(item);
    t.state.xs[0]!.k = 2;
    expect(replica.xs[0]).toEqual({ k: 1 });
    replica = apply(replica, t.flush());
    expect(replica.xs[0]).toEqual({ k: 2 });
  });

  it("emitted ops never alias producer state", () => {
    const t = track<{ o: { k: number[] }; xs: { v: number }[]; n?: { m: number } }>({ o: { k: [1] }, xs: [] });
    const base = t.flush();
    t.state.xs.push({ v: 1 });
    t.state.n = { m: 1 };
    const delta = t.flush();
    const snapshot = JSON.stringify([base, delta]);
    t.state.o.k.push(2);
    t.state.xs[0]!.v = 2;
    t.state.n.m = 2;
    expect(JSON.stringify([base, delta])).toBe(snapshot);
  });

  it("mutating target bypasses tracking", () => {
    const t = track({ n: 1 });
    t.flush();
    t.target.n = 5;
    expect(t.flush()).toEqual([]);
    expect(t.state.n).toBe(5);
  });

  it("a whole stream folds without a base branch", () => {
    const t = track({ s: "", xs: [] as number[] });
    const stream: Op[][] = [t.flush()];
    t.state.s += "hello";
    t.state.xs.push(1);
    stream.push(t.flush());
    t.state = { s: "new", xs: [9] };
    stream.push(t.flush());
    t.state.s += "!";
    stream.push(t.flush());
    const folded = stream.reduce<typeof t.target | undefined>((acc, ops) => apply(acc, json(ops)), undefined);
    expect(folded).toEqual({ s: "new!", xs: [9] });
  });
});

describe("coalescing", () => {
  it("a repeated field gives one s", () => {
    const t = track({ n: 0 });
    t.flush();
    for (let i = 1; i <= 5; i++) t.state.n = i;
    expect(t.flush()).toEqual([["s", ["n"], 5]]);
  });

  it("a superseded non-adjacent write is dropped", () => {
    const t = track({ x: 0, y: 0 });
    t.flush();
    t.state.x = 1;
    t.state.y = 1;
    t.state.x = 2;
    expect(t.flush()).toEqual([
      ["s", ["y"], 1],
      ["s", ["x"], 2],
    ]);
  });

  it("a child write is dropped when the parent is replaced afterwards", () => {
    const t = track<{ a: { b: number; c?: number } | null }>({ a: { b: 1 } });
    t.flush();
    (t.state.a as { b: number }).b = 99;
    t.state.a = null;
    expect(t.flush()).toEqual([["s", ["a"], null]]);
  });

  it("replacing a parent after a child write yields the diffed ops [s a.c, d a.b]", () => {
    const t = track<{ a: { b?: number; c?: number } }>({ a: { b: 1 } });
    t.flush();
    t.state.a.b = 99;
    t.state.a = { c: 5 };
    expect(t.flush()).toEqual([
      ["s", ["a", "c"], 5],
      ["d", ["a", "b"]],
    ]);
  });

  it("a child write folds into a pending parent replacement", () => {
    const t = track<{ o?: { t: string; xs: number[] } }>({});
    t.flush();
    t.state.o = { t: "a", xs: [] };
    t.state.o.t += "b";
    t.state.o.xs.push(1);
    expect(t.flush()).toEqual([["s", ["o"], { t: "ab", xs: [1] }]]);
  });

  it("set then delete gives d", () => {
    const t = track<{ x?: number }>({ x: 0 });
    t.flush();
    t.state.x = 1;
    t.state.x = 2;
    delete t.state.x;
    expect(t.flush()).toEqual([["d", ["x"]]]);
  });

  it("delete then set gives the final s", () => {
    const t = track<{ x?: number }>({ x: 0 });
    t.flush();
    delete t.state.x;
    t.state.x = 3;
    expect(t.flush()).toEqual([["s", ["x"], 3]]);
  });

  it("delete, recreate, append gives one s", () => {
    const t = track<{ t?: string }>({ t: "abc" });
    t.flush();
    delete t.state.t;
    t.state.t = "x";
    t.state.t += "y";
    expect(t.flush()).toEqual([["s", ["t"], "xy"]]);
  });

  it("a redundant batch is allowed when values are restored, and it still converges", () => {
    const p = new Pipe({ x: 1, xs: [1, 2, 3] });
    p.sync();
    p.state.x = 2;
    p.state.x = 1;
    p.state.xs.reverse();
    p.state.xs.reverse();
    const ops = p.sync();
    // Convergence, not minimality: whatever was sent leaves the value unchanged.
    expect(apply({ x: 1, xs: [1, 2, 3] }, json(ops))).toEqual({ x: 1, xs: [1, 2, 3] });
    expect(p.replica).toEqual({ x: 1, xs: [1, 2, 3] });
  });

  it("flush is linear (< 40x for 10x more fields)", () => {
    const cost = (fields: number) => {
      let best = Infinity;
      for (let rep = 0; rep < 5; rep++) {
        const t = track<Record<string, number>>({});
        t.flush();
        for (let i = 0; i < fields; i++) t.state[`f${i}`] = i;
        for (let i = 0; i < fields; i++) t.state[`f${i}`] = i + 1;
        const start = process.hrtime.bigint();
        const ops = t.flush();
        const took = Number(process.hrtime.bigint() - start);
        expect(ops).toHaveLength(fields);
        best = Math.min(best, took);
      }
      return best;
    };
    cost(250);
    const small = cost(250);
    const large = cost(2500);
    expect(large / small).toBeLessThan(40);
  });

  it("the pathological producer (2000 x (x=i; a.b=i) then a={done:true}) gives 3 ops", () => {
    const p = new Pipe<{ x: number; a: { b?: number; done?: boolean } }>({ x: 0, a: { b: 0 } });
    p.sync();
    for (let i = 0; i < 2000; i++) {
      p.state.x = i;
      p.state.a.b = i;
    }
    p.state.a = { done: true };
    const ops = p.sync();
    expect(ops).toHaveLength(3);
    expect(p.replica).toEqual({ x: 1999, a: { done: true } });
  });

  it("a long structural window (5000 x set, shift, push) collapses to a base", () => {
    const p = new Pipe({ n: 0, xs: Array.from({ length: 10 }, (_, i) => i) });
    p.sync();
    for (let i = 0; i < 5000; i++) {
      p.state.n = i;
      p.state.xs.shift();
      p.state.xs.push(i);
    }
    const ops = p.sync();
    expect(isBase(ops)).toBe(true);
    expect(ops).toHaveLength(1);
  });
});

describe("flush with replacements", () => {
  it("everything before a root replacement is dropped", () => {
    const t = track([1, 2]);
    t.flush();
    t.state.push(3);
    t.state[0] = 5;
    t.state.splice(0, 3, 7);
    expect(t.flush()).toEqual([["r", [7]]]);
  });

  it("the prefix is kept when the replacement is nested", () => {
    const t = track<{ x: number; o: { v: number } | number }>({ x: 0, o: { v: 1 } });
    t.flush();
    t.state.x = 1;
    t.state.o = 5;
    expect(t.flush()).toEqual([
      ["s", ["x"], 1],
      ["s", ["o"], 5],
    ]);
  });
});
