// Tracker intent and root ops. Exact tuples are pinned where the op format fixes them;
// everything else is checked by convergence of a replica fed through the wire codec.
import { describe, expect, it } from "vitest";
import { isBase, overlap, track } from "../../src/delta/index.js";
import { Pipe, prng } from "./helpers.js";

describe("overlap", () => {
  it("finds an overlap shorter than the long probe", () => {
    expect(overlap("abcdefgh", "defghxyz", 65_536)).toBe(5);
  });
  it("a scan of 0 gives 0", () => {
    expect(overlap("abcdefgh", "defghxyz", 0)).toBe(0);
  });
  it("returns a length n with a.slice(-n) === b.slice(0, n) on varied text", () => {
    const a = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)} `).join("");
    const b = a.slice(1234) + "tail";
    const n = overlap(a, b, 65_536);
    expect(n).toBe(a.length - 1234);
    expect(a.slice(a.length - n)).toBe(b.slice(0, n));
  });
});

describe("appends", () => {
  it("two += produce one a op with both chunks", () => {
    const t = track({ s: "" });
    t.flush();
    t.state.s += "ab";
    t.state.s += "cd";
    expect(t.flush()).toEqual([["a", ["s"], "abcd"]]);
  });

  it("a rolling window slice(3)+xyz gives t 3 then a xyz", () => {
    const t = track({ s: "abcdefghij" });
    t.flush();
    t.state.s = t.state.s.slice(3) + "xyz";
    expect(t.flush()).toEqual([
      ["t", ["s"], 3],
      ["a", ["s"], "xyz"],
    ]);
  });

  it("1000 interleaved window and counter writes give at most 3 ops and round-trip", () => {
    let text = "";
    for (let i = 0; text.length < 50_000; i++) text += `line ${i.toString(36)} of the initial window\n`;
    const p = new Pipe({ window: { text }, totalBytes: 0 });
    p.sync();
    for (let i = 0; i < 1000; i++) {
      const chunk = `chunk:${i.toString(36)}:durable-stream\n`;
      p.state.window.text = p.state.window.text.slice(chunk.length) + chunk;
      p.state.totalBytes += chunk.length;
    }
    const ops = p.sync();
    expect(ops.length).toBeLessThanOrEqual(3);
    expect(ops.map((o) => o[0]).sort()).toEqual(["a", "s", "t"]);
  });
});

describe("string diff options and normalisation", () => {
  it("a window over 64 KiB slid by assignment is still a t and an a, not the whole text again", () => {
    let text = "";
    for (let i = 0; text.length < 200_000; i++) text += `line ${i.toString(36)} of a long window\n`;
    const t = track({ s: text });
    t.flush();
    t.state.s = t.state.s.slice(40) + "the new line\n";
    expect(t.flush()).toEqual([
      ["t", ["s"], 40],
      ["a", ["s"], "the new line\n"],
    ]);
  });

  it("maxOverlapScan 0 turns a rolling window into one s", () => {
    const t = track({ s: "abcdefghij" }, { maxOverlapScan: 0 });
    t.flush();
    t.state.s = t.state.s.slice(3) + "xyz";
    expect(t.flush()).toEqual([["s", ["s"], "defghijxyz"]]);
  });

  it("an unrelated string replacement gives s, a pure front-drop gives t alone", () => {
    const t = track({ s: "hello world" });
    t.flush();
    t.state.s = t.state.s.slice(6);
    expect(t.flush()).toEqual([["t", ["s"], 6]]);
    t.state.s = "zzz";
    expect(t.flush()).toEqual([["s", ["s"], "zzz"]]);
  });

  it("array indices in emitted paths are numbers, never numeric strings", () => {
    const t = track({ xs: [{ v: 1 }, { v: 2 }] });
    t.flush();
    t.state.xs[1]!.v = 3;
    const ops = t.flush();
    expect(ops).toEqual([["s", ["xs", 1, "v"], 3]]);
    expect(typeof (ops[0] as readonly [string, readonly unknown[]])[1][1]).toBe("number");
  });
});

describe("proxies", () => {
  it("nested proxies are cached (s.a === s.a)", () => {
    const t = track({ a: { b: { c: 1 } } });
    expect(t.state.a).toBe(t.state.a);
    expect(t.state.a.b).toBe(t.state.a.b);
  });
  it("replacing a child gives a new proxy that reads the new value", () => {
    const t = track<{ a: { v: number } | string }>({ a: { v: 1 } });
    const before = t.state.a;
    t.state.a = "x";
    t.state.a = { v: 2 };
    const after = t.state.a;
    expect(after).not.toBe(before);
    expect(after).toEqual({ v: 2 });
  });
});

describe("arrays and deletes", () => {
  it("push gives one p", () => {
    const t = track({ xs: [1, 2] });
    t.flush();
    t.state.xs.push(3);
    expect(t.flush()).toEqual([["p", ["xs"], 2, 0, [3]]]);
  });

  it("x = undefined gives d and removes the own property", () => {
    const t = track<{ x?: number; y: number }>({ x: 1, y: 2 });
    t.flush();
    t.state.x = undefined;
    expect(t.flush()).toEqual([["d", ["x"]]]);
    expect(Object.hasOwn(t.target, "x")).toBe(false);
  });

  it("optional properties use absence and d", () => {
    const t = track<{ label?: string; count: number }>({ count: 0 });
    expect(t.flush()).toEqual([["r", { count: 0 }]]);
    t.state.label = "active";
    expect(t.flush()).toEqual([["s", ["label"], "active"]]);
    t.state.label = undefined;
    expect(t.flush()).toEqual([["d", ["label"]]]);
    expect("label" in t.target).toBe(false);
    t.state.label = "again";
    t.flush();
    delete t.state.label;
    expect(t.flush()).toEqual([["d", ["label"]]]);
    expect("label" in t.target).toBe(false);
  });
});

describe("reassignment diffing", () => {
  it("a reassigned object is deep-diffed into a on the nested text and s on the counter", () => {
    const t = track({ panel: { text: "hello", count: 1 } });
    t.flush();
    t.state.panel = { text: "hello world", count: 2 };
    const ops = t.flush();
    expect(ops).toHaveLength(2);
    expect(ops).toEqual(
      expect.arrayContaining([
        ["a", ["panel", "text"], " world"],
        ["s", ["panel", "count"], 2],
      ]),
    );
  });

  it("a reassigned array with an edited element plus an append gives a and a tail p", () => {
    const t = track({ xs: ["ab", "c"] });
    t.flush();
    t.state.xs = ["abX", "c", "d"];
    expect(t.flush()).toEqual([
      ["a", ["xs", 0], "X"],
      ["p", ["xs"], 2, 0, ["d"]],
    ]);
  });

  it("an anchored string survives a later container replacement", () => {
    const p = new Pipe({ o: { text: "abc", n: 1 } });
    p.sync();
    p.state.o.text += "d";
    p.state.o = { text: "abcde", n: 1 };
    expect(p.sync()).toEqual([["a", ["o", "text"], "de"]]);
  });

  it("a null-prototype container replacement works", () => {
    const p = new Pipe<{ o: Record<string, unknown> }>({ o: { a: 1 } });
    p.sync();
    const np = Object.create(null) as Record<string, unknown>;
    np.a = 1;
    np.b = "two";
    p.state.o = np;
    p.sync();
    expect(p.replica).toEqual({ o: { a: 1, b: "two" } });
  });

  it("front-truncating a pending string set works from the correct end", () => {
    const p = new Pipe({ s: "x" });
    p.sync();
    p.state.s = "hello world";
    p.state.s = p.state.s.slice(6);
    expect(p.sync()).toEqual([["s", ["s"], "world"]]);
    expect(p.replica).toEqual({ s: "world" });
  });

  it("a deeply-equal replacement gives [] while dirty stays true", () => {
    const t = track({ o: { a: 1, b: [1, { c: "x" }] } });
    t.flush();
    expect(t.dirty).toBe(false);
    t.state.o = { a: 1, b: [1, { c: "x" }] };
    expect(t.dirty).toBe(true);
    expect(t.flush()).toEqual([]);
  });
});

describe("the D1 trap", () => {
  it("a pending child is invalidated when its parent is overwritten", () => {
    const p = new Pipe<{ a: Record<string, unknown> }>({ a: { x: 1 } });
    p.sync();
    p.state.a.b = 99;
    p.state.a = { c: 2 };
    p.sync();
    expect(p.replica).toEqual({ a: { c: 2 } });
  });

  it("a pending grandchild write at depth 4 does not survive a depth-2 overwrite", () => {
    type Deep = { a: { b: { c: { d: string; e?: number } } | number } };
    const p = new Pipe<Deep>({ a: { b: { c: { d: "x" } } } });
    p.sync();
    (p.state.a.b as { c: { d: string; e?: number } }).c.e = 1;
    (p.state.a.b as { c: { d: string } }).c.d += "y";
    p.state.a.b = 5;
    p.state.a.b = { c: { d: "z" } };
    p.sync();
    expect(p.replica).toEqual({ a: { b: { c: { d: "z" } } } });
  });
});

describe("root arrays", () => {
  it('root-array push gives ["p",[],4,0,[4]]', () => {
    const t = track([0, 1, 2, 3]);
    t.flush();
    t.state.push(4);
    expect(t.flush()).toEqual([["p", [], 4, 0, [4]]]);
  });

  it('a full root splice gives ["r",[9]] and isBase is true', () => {
    const t = track([1, 2, 3]);
    t.flush();
    t.state.splice(0, 3, 9);
    const ops = t.flush();
    expect(ops).toEqual([["r", [9]]]);
    expect(isBase(ops)).toBe(true);
  });

  it("a nested splice-all gives s", () => {
    const t = track({ xs: [1, 2] });
    t.flush();
    t.state.xs.splice(0, 2, 7);
    expect(t.flush()).toEqual([["s", ["xs"], [7]]]);
  });

  it("splice() with no arguments is a no-op", () => {
    const t = track({ xs: [1, 2] });
    t.flush();
    expect((t.state.xs.splice as () => number[])()).toEqual([]);
    expect(t.flush()).toEqual([]);
    expect(t.target).toEqual({ xs: [1, 2] });
  });

  it("splice arguments are normalised to integers", () => {
    const t = track({ xs: [0, 1, 2, 3, 4] });
    t.flush();
    (t.state.xs.splice as (...a: unknown[]) => unknown)(1.7, "2");
    expect(t.flush()).toEqual([["p", ["xs"], 1, 2, []]]);
    t.state.xs.splice(-1, 1);
    expect(t.flush()).toEqual([["p", ["xs"], 2, 1, []]]);
    expect(t.target).toEqual({ xs: [0, 3] });
  });

  it('root length = 0 gives ["r",[]]', () => {
    const t = track([1, 2, 3]);
    t.flush();
    t.state.length = 0;
    expect(t.flush()).toEqual([["r", []]]);
  });
});

describe("splice ordering", () => {
  it("repeated nested pushes round-trip", () => {
    const p = new Pipe({ a: { xs: [] as number[][] } });
    p.sync();
    for (let round = 0; round < 5; round++) {
      p.state.a.xs.push([round]);
      p.state.a.xs.push([round, 1]);
      p.state.a.xs[p.state.a.xs.length - 1]!.push(2);
      p.sync();
    }
  });

  it("a child edit does not fold across a parent shift", () => {
    const p = new Pipe({ xs: [{ v: "a" }, { v: "b" }] });
    p.sync();
    p.state.xs.push({ v: "c" });
    p.state.xs.shift();
    p.state.xs[1]!.v += "!";
    p.state.xs[0]!.v += "?";
    p.sync();
    expect(p.replica).toEqual({ xs: [{ v: "b?" }, { v: "c!" }] });
  });

  it("child ops drop when repeated parent splices collapse", () => {
    const p = new Pipe({ xs: [{ v: 1 }, { v: 2 }] });
    p.sync();
    p.state.xs[0]!.v = 5;
    p.state.xs[1]!.v = 6;
    p.state.xs.splice(0, 1);
    p.state.xs.splice(0, 1);
    const ops = p.sync();
    expect(ops.some((op) => op[0] !== "r" && op[1].length > 1)).toBe(false);
    expect(p.replica).toEqual({ xs: [] });
  });

  it("a post-splice set does not dominate an earlier element append", () => {
    const p = new Pipe({ xs: ["ab", "c"] });
    p.sync();
    p.state.xs[0] += "X";
    p.state.xs.unshift("q");
    p.state.xs[0] = "s";
    p.sync();
    expect(p.replica).toEqual({ xs: ["s", "abX", "c"] });
  });

  it("a nested append is not lost through a reindexed set", () => {
    const p = new Pipe({ xs: [{ t: "a" }, { t: "b" }] });
    p.sync();
    p.state.xs[1]!.t += "1";
    p.state.xs.shift();
    p.state.xs[1] = { t: "new" };
    p.state.xs[0]!.t += "2";
    p.sync();
    expect(p.replica).toEqual({ xs: [{ t: "b12" }, { t: "new" }] });
  });

  it("element ops survive middle insertions", () => {
    const p = new Pipe({ xs: [{ v: 0 }, { v: 1 }, { v: 2 }, { v: 3 }] });
    p.sync();
    p.state.xs[3]!.v = 30;
    p.state.xs.splice(2, 0, { v: 99 });
    p.state.xs[4]!.v += 1;
    p.state.xs[1]!.v = 10;
    p.state.xs.splice(1, 0, { v: 98 }, { v: 97 });
    p.state.xs[6]!.v += 1;
    p.sync();
    expect(p.replica).toEqual({ xs: [{ v: 0 }, { v: 98 }, { v: 97 }, { v: 10 }, { v: 99 }, { v: 2 }, { v: 32 }] });
  });

  it("detached element writes are dropped when the root array is replaced (first op r)", () => {
    const p = new Pipe([{ v: 1 }, { v: 2 }]);
    p.sync();
    const held = p.state[0]!;
    held.v = 3;
    p.state.splice(0, 2, { v: 9 });
    held.v = 4;
    const ops = p.sync();
    expect(ops[0]![0]).toBe("r");
    expect(ops).toEqual([["r", [{ v: 9 }]]]);
    held.v = 5;
    expect(p.sync()).toEqual([]);
  });

  it("nested writes stay ordered across an inserted array reindex", () => {
    const p = new Pipe({ xs: [] as { ys: number[] }[] });
    p.sync();
    p.state.xs.push({ ys: [1] });
    p.state.xs[0]!.ys.push(2);
    p.state.xs.unshift({ ys: [] });
    p.state.xs[1]!.ys.push(3);
    p.state.xs[0]!.ys.push(4);
    p.state.xs.splice(1, 0, { ys: [5] });
    p.state.xs[2]!.ys.unshift(0);
    p.sync();
    expect(p.replica).toEqual({ xs: [{ ys: [4] }, { ys: [5] }, { ys: [0, 1, 2, 3] }] });
  });

  it("folded nested ops in an inserted payload are invalidated on replacement or clear", () => {
    const p = new Pipe({ xs: [{ t: "0" }] });
    p.sync();
    p.state.xs.push({ t: "a" });
    p.state.xs[1]!.t += "b";
    p.state.xs[1] = { t: "z" };
    p.state.xs[1]!.t += "y";
    p.sync();
    expect(p.replica).toEqual({ xs: [{ t: "0" }, { t: "zy" }] });

    p.state.xs.push({ t: "c" });
    p.state.xs[2]!.t += "d";
    p.state.xs.length = 0;
    p.state.xs.push({ t: "e" });
    p.sync();
    expect(p.replica).toEqual({ xs: [{ t: "e" }] });
  });

  it("deterministic random element mutations across reindexing splices round-trip (200 rounds x 30 steps)", () => {
    const rnd = prng(20260901);
    const int = (n: number) => Math.floor(rnd() * n);
    for (let round = 0; round < 200; round++) {
      const p = new Pipe({ xs: Array.from({ length: 4 }, (_, i) => ({ id: i, t: `e${i}`, tags: [] as number[] })) });
      p.sync();
      const held: { id: number; t: string; tags: number[] }[] = [];
      let next = 100;
      for (let step = 0; step < 30; step++) {
        const xs = p.state.xs;
        const r = int(10);
        if (r === 0) xs.push({ id: next++, t: "", tags: [] });
        else if (r === 1) xs.unshift({ id: next++, t: "u", tags: [1] });
        else if (r === 2) xs.splice(int(xs.length + 1), int(3), { id: next++, t: "m", tags: [] });
        else if (r === 3) xs.shift();
        else if (r === 4) xs.pop();
        else if (r === 5 && xs.length > 0) held.push(xs[int(xs.length)]!);
        else if (r === 6 && held.length > 0) held[int(held.length)]!.t += String.fromCharCode(97 + int(26));
        else if (r === 7 && held.length > 0) held[int(held.length)]!.tags.push(step);
        else if (r === 8 && xs.length > 0) xs[int(xs.length)]!.t += "!";
        else if (r === 9) p.sync();
      }
      p.sync();
    }
  });
});

describe("mutator chaining", () => {
  it("sort().push() stays tracked", () => {
    const p = new Pipe({ xs: [3, 1, 2] });
    p.sync();
    p.state.xs.sort((a, b) => a - b).push(4);
    p.state.xs.reverse().push(0);
    p.sync();
    expect(p.replica).toEqual({ xs: [4, 3, 2, 1, 0] });
  });
});

describe("push merging", () => {
  it("retained element edits plus one append give one tail p carrying the folded edits", () => {
    const t = track({ xs: [] as { v: number; t: string }[] });
    t.flush();
    t.state.xs.push({ v: 1, t: "a" });
    const held = t.state.xs[0]!;
    held.v = 2;
    held.t += "b";
    expect(t.flush()).toEqual([["p", ["xs"], 0, 0, [{ v: 2, t: "ab" }]]]);
  });

  it("99 pushes become one p", () => {
    const t = track({ xs: [] as number[] });
    t.flush();
    for (let i = 0; i < 99; i++) t.state.xs.push(i);
    expect(t.flush()).toEqual([["p", ["xs"], 0, 0, Array.from({ length: 99 }, (_, i) => i)]]);
  });

  it("direct tail writes and length growth stay in append mode (nulls)", () => {
    const t = track({ xs: [1] as (number | null)[] });
    t.flush();
    t.state.xs[1] = 2;
    t.state.xs.length = 4;
    t.state.xs[4] = 5;
    expect(t.flush()).toEqual([["p", ["xs"], 1, 0, [2, null, null, 5]]]);
  });

  it("tail-only splices stay in append mode", () => {
    const t = track({ xs: [1] });
    t.flush();
    t.state.xs.splice(1, 0, 2);
    t.state.xs.splice(2, 0, 3, 4);
    expect(t.flush()).toEqual([["p", ["xs"], 1, 0, [2, 3, 4]]]);
  });

  it("push, push, pop, pop gives []", () => {
    const t = track({ xs: [1] });
    t.flush();
    t.state.xs.push(2);
    t.state.xs.push(3);
    t.state.xs.pop();
    t.state.xs.pop();
    expect(t.flush()).toEqual([]);
    expect(t.target).toEqual({ xs: [1] });
  });

  it("100 000-item push args are not spread into a stack overflow", () => {
    const p = new Pipe({ xs: [] as number[] });
    p.sync();
    const items = Array.from({ length: 100_000 }, (_, i) => i);
    Array.prototype.push.apply(p.state.xs, items);
    const ops = p.sync();
    expect(ops).toHaveLength(1);
    expect(ops[0]![0]).toBe("p");
    expect(p.replica!.xs).toHaveLength(100_000);
  });

  it("length growth fills with nulls", () => {
    const t = track({ xs: [1] as (number | null)[] });
    t.flush();
    t.state.xs.length = 3;
    expect(t.target.xs).toEqual([1, null, null]);
    expect(Object.keys(t.target.xs)).toEqual(["0", "1", "2"]);
    expect(t.flush()).toEqual([["p", ["xs"], 1, 0, [null, null]]]);
  });

  it("length truncation on a nested array gives one p removing the tail", () => {
    const t = track({ xs: [1, 2, 3, 4] });
    t.flush();
    t.state.xs.length = 1;
    expect(t.flush()).toEqual([["p", ["xs"], 1, 3, []]]);
    t.state.xs.length = 0;
    expect(t.flush()).toEqual([["s", ["xs"], []]]);
  });
});
