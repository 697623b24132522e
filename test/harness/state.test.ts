import { describe, expect, it } from "vitest";
import { applyImmutable, isBase, type Op } from "../../src/delta/index.js";
import { createStateHost, StateError } from "../../src/harness/index.js";

describe("replicated state host", () => {
  it("a subscriber gets a base first, then every later batch in order", () => {
    const host = createStateHost();
    const s = host.state("lane", { n: 0, log: [] as string[] });
    const batches: (readonly Op[])[] = [];
    s.subscribe((ops) => batches.push(ops));
    s.mutate((d) => void (d.n = 1));
    s.mutate((d) => void d.log.push("a"));
    expect(isBase(batches[0]!)).toBe(true);
    expect(batches.slice(1)).toEqual([[["s", ["n"], 1]], [["p", ["log"], 0, 0, ["a"]]]]);
    let replica: unknown;
    for (const b of batches) replica = applyImmutable(replica, b);
    expect(replica).toEqual(s.value);
  });

  it("a late subscriber starts from a base of the current value", () => {
    const host = createStateHost();
    const s = host.state("lane", { n: 0 });
    s.mutate((d) => void (d.n = 5));
    const batches: (readonly Op[])[] = [];
    s.subscribe((ops) => batches.push(ops));
    expect(batches).toEqual([[["r", { n: 5 }]]]);
  });

  it("replace publishes a base batch", () => {
    const host = createStateHost();
    const s = host.state("lane", { n: 0 } as { n: number; m?: number });
    const batches: (readonly Op[])[] = [];
    s.subscribe((ops) => batches.push(ops));
    s.replace({ n: 1, m: 2 });
    expect(batches[1]).toEqual([["r", { n: 1, m: 2 }]]);
  });

  it("a mutate that throws still publishes what it changed before the throw", () => {
    const host = createStateHost();
    const s = host.state("lane", { n: 0 });
    const batches: (readonly Op[])[] = [];
    s.subscribe((ops) => batches.push(ops));
    expect(() =>
      s.mutate((d) => {
        d.n = 7;
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(batches[1]).toEqual([["s", ["n"], 7]]);
  });

  it("unsubscribe stops delivery; close notifies subscribers and refuses later writes", () => {
    const host = createStateHost();
    const s = host.state("lane", { n: 0 });
    const a: (readonly Op[])[] = [];
    let closedB = false;
    const offA = s.subscribe((ops) => a.push(ops));
    s.subscribe(
      () => {},
      () => (closedB = true),
    );
    offA();
    s.mutate((d) => void (d.n = 1));
    expect(a).toHaveLength(1);
    s.close();
    expect(closedB).toBe(true);
    expect(host.names()).toEqual([]);
    expect(() => s.mutate((d) => void (d.n = 2))).toThrow(StateError);
  });

  it("two states with one name are refused with a clear error", () => {
    const host = createStateHost();
    host.state("lane", {});
    expect(() => host.state("lane", {})).toThrow(/already exists/);
  });
});
