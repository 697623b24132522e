// The wire codec: interning on second use, omitted repeated paths, reset on base, recovery from the
// last base with a fresh decoder.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, decoder, encoder, isBase, PathError, type Op, type WireOp } from "../../src/delta/index.js";
import { json, Pipe, scriptArb, runCmd, type Cmd } from "./helpers.js";

const wire = (w: unknown) => JSON.parse(JSON.stringify(w)) as WireOp[];

describe("codec", () => {
  it("a stream round-trips exactly", () => {
    const batches: Op[][] = [
      [["r", { out: "", xs: [], o: { k: 1 } }]],
      [
        ["a", ["out"], "hello"],
        ["p", ["xs"], 0, 0, [1, 2]],
      ],
      [
        ["t", ["out"], 2],
        ["a", ["out"], "!"],
        ["s", ["o", "k"], 2],
        ["s", ["o", "k"], 3],
      ],
      [
        ["a", ["out"], "?"],
        ["d", ["o", "k"]],
        ["p", ["xs"], 0, 1, []],
      ],
      [["p", [], 0, 0, []]],
      [["r", [1]]],
      [["p", [], 1, 0, [2]]],
    ];
    const enc = encoder();
    const dec = decoder();
    for (const ops of batches) expect(dec.decode(wire(enc.encode(ops)))).toEqual(ops);
  });

  it("interning happens on the second use", () => {
    const enc = encoder();
    expect(enc.encode([["s", ["a", "b"], 1]])).toEqual([["s", ["a", "b"], 1]]);
    expect(enc.encode([["s", ["a", "b"], 2]])).toEqual([
      ["#", 0, ["a", "b"]],
      ["s", 0, 2],
    ]);
    expect(enc.encode([["s", ["a", "b"], 3]])).toEqual([["s", 0, 3]]);
    expect(enc.encode([["a", ["x"], "1"]])).toEqual([["a", ["x"], "1"]]);
    expect(enc.encode([["a", ["x"], "2"]])).toEqual([
      ["#", 1, ["x"]],
      ["a", 1, "2"],
    ]);
  });

  it("a repeated path is omitted", () => {
    const enc = encoder();
    expect(
      enc.encode([
        ["t", ["output"], 200],
        ["a", ["output"], "next chunk"],
      ]),
    ).toEqual([
      ["t", ["output"], 200],
      ["a", "next chunk"],
    ]);
    expect(enc.encode([["a", ["output"], "more"]])).toEqual([
      ["#", 0, ["output"]],
      ["a", 0, "more"],
    ]);
    // Every verb has a short form; the decoder tells them apart by arity.
    const ops: Op[] = [
      ["s", ["k"], "v"],
      ["a", ["k"], "w"],
      ["t", ["k"], 1],
      ["d", ["k"]],
      ["p", ["xs"], 0, 0, [1]],
      ["p", ["xs"], 1, 0, [2]],
    ];
    const encoded = encoder().encode(ops);
    expect(encoded).toEqual([["s", ["k"], "v"], ["a", "w"], ["t", 1], ["d"], ["p", ["xs"], 0, 0, [1]], ["p", 1, 0, [2]]]);
    expect(decoder().decode(wire(encoded))).toEqual(ops);
  });

  it("omission is scoped to one batch", () => {
    const enc = encoder();
    const dec = decoder();
    const first = enc.encode([["a", ["o"], "x"]]);
    const second = enc.encode([["a", ["o"], "y"]]);
    expect(second[0]![0]).toBe("#");
    expect(second[1]).toEqual(["a", 0, "y"]);
    dec.decode(wire(first));
    expect(dec.decode(wire(second))).toEqual([["a", ["o"], "y"]]);
    expect(() => decoder().decode([["a", "y"]])).toThrow(PathError);
  });

  it("a path array changed in place between batches is encoded by what it holds, not by identity", () => {
    const enc = encoder();
    const dec = decoder();
    const path: [string, number | string] = ["xs", 0];
    const decoded: Op[] = [];
    for (let i = 0; i < 12; i++) {
      path[1] = i % 5;
      decoded.push(...dec.decode(wire(enc.encode([["s", path as [string, number], i]]))));
    }
    // Six more distinct paths than the encoder remembers, then the first ones again.
    for (let i = 0; i < 6; i++) decoded.push(...dec.decode(wire(enc.encode([["s", ["k", `p${i}`], i]]))));
    path[1] = 0;
    decoded.push(...dec.decode(wire(enc.encode([["s", path as [string, number], 99]]))));
    expect(decoded.map((op) => op[1])).toEqual([
      ...Array.from({ length: 12 }, (_, i) => ["xs", i % 5]),
      ...Array.from({ length: 6 }, (_, i) => ["k", `p${i}`]),
      ["xs", 0],
    ]);
  });

  it("NUL-containing paths do not collide", () => {
    const enc = encoder();
    const dec = decoder();
    const batches: Op[][] = [
      [["s", ["a\u0000b"], 1]],
      [["s", ["a", "b"], 2]],
      [["s", ["a\u0000", "b"], 3]],
      [["s", ["a", "\u0000b"], 4]],
      [["s", ["a", "b"], 5]],
      [["s", ["a\u0000b"], 6]],
      [["s", ["a\u0000", "b"], 7]],
    ];
    const out = batches.map((ops) => dec.decode(wire(enc.encode(ops))));
    expect(out).toEqual(batches);
    // ["a","b"] is on its first use in batch 2, so it must travel inline rather than reuse an id.
    expect(encoder().encode([["s", ["a\u0000b"], 1]])).toEqual([["s", ["a\u0000b"], 1]]);
  });

  it("a short form with no previous path throws PathError", () => {
    for (const op of [["s", 1], ["d"], ["a", "x"], ["t", 1], ["p", 0, 0, []]]) {
      expect(() => decoder().decode([op] as unknown as WireOp[]), JSON.stringify(op)).toThrow(PathError);
    }
    // A # definition does not set "previous".
    expect(() =>
      decoder().decode([
        ["#", 0, ["a"]],
        ["s", 1],
      ]),
    ).toThrow(PathError);
  });

  it("an unknown numeric ref raises PathError", () => {
    expect(() => decoder().decode([["s", 3, 1]])).toThrow(PathError);
  });

  it("isBase works unchanged on the encoded form", () => {
    const enc = encoder();
    const base = enc.encode([
      ["r", { a: 1 }],
      ["s", ["a"], 2],
    ]);
    expect(isBase(base)).toBe(true);
    expect(isBase(enc.encode([["s", ["a"], 3]]))).toBe(false);
    expect(isBase([])).toBe(false);
  });

  it("the decoder's ids clear on a base", () => {
    const dec = decoder();
    expect(
      dec.decode([
        ["#", 0, ["x"]],
        ["s", 0, 1],
      ]),
    ).toEqual([["s", ["x"], 1]]);
    expect(() =>
      dec.decode([
        ["r", {}],
        ["s", 0, 2],
      ]),
    ).toThrow(PathError);
  });

  it("the encoder's table resets on a base (inline again afterwards)", () => {
    const enc = encoder();
    enc.encode([["s", ["x"], 1]]);
    expect(enc.encode([["s", ["x"], 2]])).toEqual([
      ["#", 0, ["x"]],
      ["s", 0, 2],
    ]);
    expect(
      enc.encode([
        ["r", { x: 0 }],
        ["s", ["x"], 3],
      ]),
    ).toEqual([
      ["r", { x: 0 }],
      ["s", ["x"], 3],
    ]);
    expect(enc.encode([["s", ["x"], 4]])).toEqual([
      ["#", 0, ["x"]],
      ["s", 0, 4],
    ]);
  });

  it("recovery from the last base with a fresh decoder succeeds", () => {
    const p = new Pipe({ window: "", n: 0, log: [] as string[] });
    p.sync();
    for (let i = 0; i < 60; i++) {
      p.state.window = (p.state.window + `line ${i}\n`).slice(-64);
      p.state.n = i;
      p.state.log.push(`e${i}`);
      if (i % 25 === 24) p.tracker.rebase();
      p.sync();
    }
    const stored = p.wire.map((text) => JSON.parse(text) as WireOp[]);
    let last = -1;
    stored.forEach((b, i) => isBase(b) && (last = i));
    expect(last).toBe(50);
    const fresh = decoder();
    let replica: unknown;
    for (const b of stored.slice(last)) replica = apply(replica, fresh.decode(b));
    expect(replica).toEqual(json(p.tracker.target));
    // Starting a fresh decoder mid-stream (not at a base) must fail loudly, not silently diverge.
    expect(() => {
      const d = decoder();
      let r: unknown = json(p.tracker.target);
      for (const b of stored.slice(last + 3)) r = apply(r, d.decode(b));
    }).toThrow(PathError);
  });

  it("300 random streams with rebases round-trip", () => {
    fc.assert(
      fc.property(scriptArb({ discard: false }, 30), ({ init, cmds }) => {
        const p = new Pipe(json(init));
        const held: (Record<string, unknown> | unknown[])[] = [];
        p.sync();
        const enc2 = encoder();
        const dec2 = decoder();
        for (const cmd of cmds as Cmd[]) {
          runCmd(p.tracker, cmd, held, () => {
            const ops = p.sync();
            // The decoded form is exactly the flushed form.
            expect(dec2.decode(wire(enc2.encode(ops)))).toEqual(json(ops));
          });
        }
        p.sync();
      }),
      { numRuns: 300 },
    );
  });
});
