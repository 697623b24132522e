// Safety and validation (unsafe path segments, bad indices, malformed batches), and the rule that the
// tracker rejects non-JSON values at record time with NotJsonError (a SpoolError).
import { SpoolError } from "../../src/errors/index.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  apply,
  applyImmutable,
  assertValidOp,
  assertValidWireOp,
  decoder,
  NotJsonError,
  PathError,
  track,
  UnsafePathError,
  type Op,
  type WireOp,
} from "../../src/delta/index.js";
import { json, Pipe, prototypeSnapshot } from "./helpers.js";

const asOps = (x: unknown) => x as Op[];
const protoBefore = prototypeSnapshot();

afterEach(() => {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(prototypeSnapshot()).toBe(protoBefore);
});

describe("prototype safety", () => {
  it("rejects a constructor walk", () => {
    expect(() => apply({}, asOps([["s", ["constructor", "prototype", "polluted"], 1]]))).toThrow(UnsafePathError);
    expect(() => apply({ a: {} }, asOps([["s", ["a", "__proto__", "polluted"], 1]]))).toThrow(UnsafePathError);
    expect(() => apply({ a: {} }, asOps([["s", ["a", "prototype"], 1]]))).toThrow(UnsafePathError);
    expect(() => applyImmutable({}, asOps([["s", ["constructor", "prototype", "polluted"], 1]]))).toThrow(UnsafePathError);
    expect(() => assertValidOp(["d", ["__proto__"]])).toThrow(UnsafePathError);
  });

  it("rejects a forbidden path reached through an interned id (decoder)", () => {
    expect(() =>
      decoder().decode([
        ["#", 0, ["__proto__", "polluted"]],
        ["s", 0, 1],
      ] as WireOp[]),
    ).toThrow(UnsafePathError);
    expect(() => decoder().decode([["#", 0, ["a", "constructor"]]] as WireOp[])).toThrow(UnsafePathError);
    expect(() => decoder().decode([["s", ["prototype"], 1]] as WireOp[])).toThrow(UnsafePathError);
  });

  it("does not run an inherited setter or getter", () => {
    const calls: string[] = [];
    const proto = {
      set x(_v: unknown) {
        calls.push("set x");
      },
      get y() {
        calls.push("get y");
        return "inherited";
      },
    };
    const target = Object.create(proto) as Record<string, unknown>;
    const out = apply(target, [["s", ["x"], 1]]);
    expect(Object.getOwnPropertyDescriptor(out, "x")).toMatchObject({ value: 1, writable: true, enumerable: true });
    expect(() => apply(target, [["a", ["y"], "z"]])).toThrow(PathError);
    expect(() => apply(target, [["s", ["y", "k"], 1]])).toThrow(PathError);
    expect(calls).toEqual([]);
  });

  it("allows a reserved name as a value key", () => {
    const value = JSON.parse('{"__proto__":{"polluted":1},"constructor":{"prototype":2}}') as object;
    const out = apply<Record<string, unknown>>(undefined, [["r", { o: value }]]);
    expect(Object.keys(out.o as object).sort()).toEqual(["__proto__", "constructor"]);
    const set = apply<Record<string, unknown>>({}, [["s", ["o"], JSON.parse('{"__proto__":{"polluted":1}}')]]);
    expect(Object.hasOwn(set.o as object, "__proto__")).toBe(true);

    const p = new Pipe<Record<string, unknown>>({ o: JSON.parse('{"__proto__":{"polluted":1},"k":1}') });
    p.sync();
    expect(Object.hasOwn(p.replica!.o as object, "__proto__")).toBe(true);
    p.state.v = JSON.parse('{"prototype":[1],"constructor":"c"}');
    p.sync();
    expect(Object.keys(p.replica!.v as object).sort()).toEqual(["constructor", "prototype"]);
  });

  it("tracker cloning does not invoke prototype setters (Object and Array)", () => {
    // Index 7 rather than 0: a setter on Array.prototype[0] would also intercept every push onto an
    // empty array anywhere in the process, not just the tracker's clones.
    let calls = 0;
    let base: unknown;
    let delta: unknown;
    Object.defineProperty(Object.prototype, "probe", {
      configurable: true,
      set() {
        calls++;
      },
    });
    Object.defineProperty(Array.prototype, "7", {
      configurable: true,
      set() {
        calls++;
      },
    });
    const ten = () => Array.from({ length: 10 }, (_, i) => i);
    try {
      const t = track<Record<string, unknown>>({ o: { probe: 1 }, xs: ten() });
      base = JSON.stringify(t.flush());
      t.state.n = { probe: 2 };
      t.state.ys = ten();
      t.state.zs = [ten()];
      (t.state.xs as number[]).push(10);
      delta = JSON.stringify(t.flush());
    } finally {
      delete (Object.prototype as Record<string, unknown>).probe;
      delete (Array.prototype as unknown as Record<string, unknown>)[7];
    }
    expect(calls).toBe(0);
    expect(JSON.parse(base as string)).toEqual([["r", { o: { probe: 1 }, xs: ten() }]]);
    expect(JSON.parse(delta as string)).toEqual([
      ["s", ["n"], { probe: 2 }],
      ["s", ["ys"], ten()],
      ["s", ["zs"], [ten()]],
      ["p", ["xs"], 10, 0, [10]],
    ]);
  });

  it("replaces the safe parent when an assignment removes a reserved key", () => {
    const p = new Pipe<{ o: Record<string, unknown> }>({ o: JSON.parse('{"__proto__":1,"a":1}') });
    p.sync();
    p.state.o = { a: 1 };
    expect(p.sync()).toEqual([["s", ["o"], { a: 1 }]]);
  });

  it("writes through an __proto__ own key throw UnsafePathError and cause no pollution", () => {
    const t = track<{ o: Record<string, Record<string, unknown>> }>({ o: JSON.parse('{"__proto__":{"x":1}}') });
    t.flush();
    expect(() => {
      t.state.o["__proto__"]!.polluted = 1;
    }).toThrow(UnsafePathError);
    expect(() => {
      t.state.o["__proto__"] = { polluted: 1 };
    }).toThrow(UnsafePathError);
    expect(() => {
      (t.state as Record<string, unknown>)["constructor"] = 1;
    }).toThrow(UnsafePathError);
    expect(t.flush()).toEqual([]);
  });
});

describe("error classes", () => {
  it("PathError and UnsafePathError carry a code, the offending path or segment, and advice", () => {
    let pathErr: unknown;
    try {
      apply({}, [["a", ["missing", "x"], "y"]]);
    } catch (e) {
      pathErr = e;
    }
    expect(pathErr).toBeInstanceOf(PathError);
    expect((pathErr as PathError).code).toEqual(expect.any(String));
    expect((pathErr as Error).message).toContain("missing");
    let unsafe: unknown;
    try {
      apply({}, [["s", ["a", "__proto__"], 1]]);
    } catch (e) {
      unsafe = e;
    }
    expect(unsafe).toBeInstanceOf(UnsafePathError);
    expect((unsafe as UnsafePathError).segment).toBe("__proto__");
    expect((unsafe as UnsafePathError).code).toEqual(expect.any(String));
    expect((unsafe as UnsafePathError).code).not.toBe((pathErr as PathError).code);
  });
});

describe("array indices", () => {
  it("an existing index is writable", () => {
    expect(apply({ xs: [1, 2] }, [["s", ["xs", 1], 9]])).toEqual({ xs: [1, 9] });
  });
  it("one past the end appends", () => {
    expect(apply({ xs: [1, 2] }, [["s", ["xs", 2], 3]])).toEqual({ xs: [1, 2, 3] });
  });
  it("a gap throws", () => {
    expect(() => apply({ xs: [1, 2] }, [["s", ["xs", 3], 3]])).toThrow(UnsafePathError);
  });
  it("a huge index throws", () => {
    const target = { xs: [1] };
    expect(() => apply(target, [["s", ["xs", 4294967290], 1]])).toThrow(UnsafePathError);
    expect(target.xs).toHaveLength(1);
  });
  it("string-spelled indices throw at the consumer", () => {
    expect(() => apply({ xs: [1, 2] }, [["s", ["xs", "0"], 9]])).toThrow(UnsafePathError);
    expect(() => apply({ xs: [1, 2] }, [["s", ["xs", "length"], 0]])).toThrow(UnsafePathError);
  });
  it("sparse writes, deletes and undefined elements throw at the producer", () => {
    const t = track({ xs: [1, 2] as (number | undefined)[] });
    t.flush();
    expect(() => {
      t.state.xs[5] = 1;
    }).toThrow();
    expect(() => {
      delete t.state.xs[0];
    }).toThrow();
    expect(() => {
      t.state.xs[0] = undefined;
    }).toThrow(NotJsonError);
    expect(() => {
      t.state.xs.push(undefined);
    }).toThrow(NotJsonError);
    expect(t.target).toEqual({ xs: [1, 2] });
    expect(t.flush()).toEqual([]);
  });
  it("explicit null growth works", () => {
    const p = new Pipe({ xs: [1] as (number | null)[] });
    p.sync();
    p.state.xs.push(null, null);
    p.state.xs[3] = null;
    p.sync();
    expect(p.replica).toEqual({ xs: [1, null, null, null] });
  });
  it("deleting one past the end throws", () => {
    expect(() => apply({ xs: [1] }, [["d", ["xs", 1]]])).toThrow(PathError);
  });
  it("deleting an existing array element splices it out", () => {
    expect(apply({ xs: [1, 2, 3] }, [["d", ["xs", 1]]])).toEqual({ xs: [1, 3] });
  });
  it("a 300 000-item splice applies", () => {
    const items = Array.from({ length: 300_000 }, (_, i) => i);
    const out = apply({ xs: [-1, -2] }, [["p", ["xs"], 1, 0, items]]);
    expect(out.xs).toHaveLength(300_002);
    expect(out.xs[1]).toBe(0);
    expect(out.xs[300_001]).toBe(-2);
    const imm = applyImmutable({ xs: [-1] }, [["p", ["xs"], 1, 0, items]]);
    expect(imm.xs).toHaveLength(300_001);
  });
});

describe("op structure", () => {
  it("an unknown verb throws", () => {
    expect(() => assertValidOp(["x", ["a"]] as unknown as Op)).toThrow(TypeError);
    expect(() => apply({}, asOps([["x", ["a"], 1]]))).toThrow(TypeError);
    expect(() => decoder().decode([["m", ["a"], [0]]] as unknown as WireOp[])).toThrow(TypeError);
  });
  it("non-array splice items throw", () => {
    expect(() => apply({ xs: [] }, asOps([["p", ["xs"], 0, 0, "ab"]]))).toThrow(TypeError);
    expect(() => decoder().decode([["p", ["xs"], 0, 0, { length: 1 }]] as unknown as WireOp[])).toThrow(TypeError);
  });
  it("a string path throws", () => {
    expect(() => apply({ a: 1 }, asOps([["s", "a", 2]]))).toThrow(TypeError);
    expect(() => assertValidOp(["d", "a"] as unknown as Op)).toThrow(TypeError);
  });
  it("a non-tuple or null op throws", () => {
    for (const bad of [null, undefined, {}, "s", 1, [], { 0: "s", 1: ["a"], 2: 1, length: 3 }]) {
      expect(() => apply({}, asOps([bad]))).toThrow(TypeError);
      expect(() => decoder().decode([bad] as unknown as WireOp[])).toThrow(TypeError);
    }
  });
  it("append to a missing or non-string value throws", () => {
    expect(() => apply({}, [["a", ["s"], "x"]])).toThrow(PathError);
    expect(() => apply({ s: 1 }, [["a", ["s"], "x"]])).toThrow(PathError);
    expect(() => apply({ s: null }, [["t", ["s"], 1]])).toThrow(PathError);
  });
  it("a negative t throws (apply and decode)", () => {
    expect(() => apply({ s: "abc" }, [["t", ["s"], -1]])).toThrow(TypeError);
    expect(() => decoder().decode([["t", ["s"], -1]])).toThrow(TypeError);
  });
  it("a splice remove past the end clamps", () => {
    expect(apply({ xs: [1, 2, 3] }, [["p", ["xs"], 0, 1e9, []]])).toEqual({ xs: [] });
    expect(apply({ xs: [1, 2, 3] }, [["p", ["xs"], 1, 10, [9]]])).toEqual({ xs: [1, 9] });
  });
  it("a root splice applies to a root array", () => {
    expect(apply([1, 2, 3], [["p", [], 1, 1, [7, 8]]])).toEqual([1, 7, 8, 3]);
  });
  it("s, d, a and t with an empty path throw", () => {
    for (const op of [
      ["s", [], 1],
      ["d", []],
      ["a", [], "x"],
      ["t", [], 1],
    ]) {
      expect(() => apply({}, asOps([op]))).toThrow();
      expect(() => decoder().decode([op] as unknown as WireOp[])).toThrow();
    }
  });
});

describe("proxy boundaries", () => {
  it("defineProperty, setPrototypeOf and preventExtensions throw and record nothing", () => {
    const t = track<Record<string, unknown>>({ o: { a: 1 } });
    t.flush();
    const o = t.state.o as Record<string, unknown>;
    expect(() => Object.defineProperty(o, "x", { value: 1, enumerable: true, writable: true, configurable: true })).toThrow(TypeError);
    expect(() => Object.setPrototypeOf(o, null)).toThrow(TypeError);
    expect(() => Object.preventExtensions(o)).toThrow(TypeError);
    expect(() => Object.defineProperty(t.state, "y", { value: 1 })).toThrow(TypeError);
    expect(t.flush()).toEqual([]);
    expect(t.target).toEqual({ o: { a: 1 } });
    expect(Object.isExtensible(t.target.o)).toBe(true);
  });

  it("a value that looks like an op is nested inside s", () => {
    const p = new Pipe<Record<string, unknown>>({});
    p.sync();
    p.state.x = ["s", ["y"], 1];
    expect(p.sync()).toEqual([["s", ["x"], ["s", ["y"], 1]]]);
    expect(p.replica).toEqual({ x: ["s", ["y"], 1] });
  });
});

describe("validators", () => {
  const decoded: Op[] = [
    ["r", { a: 1 }],
    ["s", ["a", 0], 1],
    ["d", ["a"]],
    ["a", ["a"], "x"],
    ["t", ["a"], 2],
    ["p", [], 0, 1, [1]],
    ["p", ["xs", 3], 0, 0, []],
  ];
  const wireOnly = [
    ["#", 0, ["a"]],
    ["s", 0, 1],
    ["s", 1],
    ["d", 3],
    ["d"],
    ["a", 0, "x"],
    ["a", "x"],
    ["t", 0, 1],
    ["t", 1],
    ["p", 0, 0, 0, []],
    ["p", 0, 0, []],
  ];

  it("assertValidOp accepts decoded ops", () => {
    for (const op of decoded) expect(() => assertValidOp(op)).not.toThrow();
  });
  it("assertValidOp rejects wire short forms, # and ids", () => {
    for (const op of wireOnly) expect(() => assertValidOp(op as unknown as Op), JSON.stringify(op)).toThrow(TypeError);
  });
  it("assertValidWireOp accepts decoded ops, short forms, # and ids", () => {
    for (const op of [...decoded, ...wireOnly]) expect(() => assertValidWireOp(op as WireOp), JSON.stringify(op)).not.toThrow();
  });
  it("both reject bad ids, fractional or negative splice integers and unknown verbs", () => {
    const bad = [
      ["#", -1, ["a"]],
      ["#", 1.5, ["a"]],
      ["#", 0, "a"],
      ["p", ["xs"], -1, 0, []],
      ["p", ["xs"], 0, 0.5, []],
      ["p", ["xs"], 0, -1, []],
      ["q", ["a"]],
      ["s", [-1], 1],
      ["s", [1.5], 1],
      ["s", [null], 1],
    ];
    for (const op of bad) expect(() => assertValidWireOp(op as unknown as WireOp), JSON.stringify(op)).toThrow();
    for (const op of bad) expect(() => assertValidOp(op as unknown as Op), JSON.stringify(op)).toThrow();
  });
  it("neither inspects payloads recursively", () => {
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error("payload was inspected");
        },
        ownKeys: () => {
          throw new Error("payload was inspected");
        },
        getOwnPropertyDescriptor: () => {
          throw new Error("payload was inspected");
        },
        has: () => {
          throw new Error("payload was inspected");
        },
      },
    );
    const ops = [
      ["r", trap],
      ["s", ["a"], trap],
      ["p", ["xs"], 0, 0, [trap, trap]],
    ];
    for (const op of ops) {
      expect(() => assertValidOp(op as unknown as Op)).not.toThrow();
      expect(() => assertValidWireOp(op as unknown as WireOp)).not.toThrow();
    }
  });
});

describe("non-JSON values are rejected at record time", () => {
  class Point {
    constructor(readonly x = 1) {}
  }
  const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const accessor = Object.defineProperty({}, "v", { get: () => 1, enumerable: true });
  const bad: [string, unknown][] = [
    ["a Map", new Map([["k", 1]])],
    ["a Set", new Set([1])],
    ["a Date", new Date(0)],
    ["a RegExp", /x/],
    ["a typed array", new Uint8Array(2)],
    ["a class instance", new Point()],
    ["a function", () => 1],
    ["a BigInt", 1n],
    ["a symbol value", Symbol("s")],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["a cycle", cyclic],
    ["an accessor property", accessor],
    ["a frozen object", Object.freeze({ a: 1 })],
    ["a non-extensible object", Object.preventExtensions({ a: 1 })],
    ["a sparse array", sparse],
    ["an undefined array element", [1, undefined]],
    ["a symbol key", { [Symbol("k")]: 1 }],
  ];

  for (const [name, value] of bad) {
    it(`assigning ${name} throws NotJsonError and leaves state unchanged`, () => {
      const t = track<Record<string, unknown>>({ keep: 1, o: { n: 1 } });
      t.flush();
      const err = (() => {
        try {
          t.state.x = value;
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(NotJsonError);
      expect(err).toBeInstanceOf(SpoolError);
      expect((err as { code?: unknown }).code).toEqual(expect.any(String));
      expect((err as Error).message.length).toBeGreaterThan(20);
      expect(t.target).toEqual({ keep: 1, o: { n: 1 } });
      expect(Object.hasOwn(t.target, "x")).toBe(false);
      expect(t.flush()).toEqual([]);
    });

    it(`nesting ${name} inside a pushed item throws NotJsonError`, () => {
      const t = track({ xs: [] as unknown[] });
      t.flush();
      expect(() => t.state.xs.push({ deep: [value] })).toThrow(NotJsonError);
      expect(t.target).toEqual({ xs: [] });
      expect(t.flush()).toEqual([]);
    });

    it(`tracking a root containing ${name} throws NotJsonError before anything is emitted`, () => {
      expect(() => {
        const t = track<Record<string, unknown>>({ inner: { v: value } });
        t.flush();
      }).toThrow(NotJsonError);
    });
  }

  it("a symbol key write on the state proxy throws NotJsonError", () => {
    const t = track<Record<string | symbol, unknown>>({});
    t.flush();
    expect(() => {
      t.state[Symbol("k")] = 1;
    }).toThrow(NotJsonError);
    expect(t.flush()).toEqual([]);
  });

  it("an object property whose value is undefined inside an assigned value is treated as absent", () => {
    const p = new Pipe<Record<string, unknown>>({ o: { a: 1, b: 2 } });
    p.sync();
    p.state.n = { a: 1, b: undefined };
    p.state.o = { a: 1, b: undefined };
    const ops = p.sync();
    expect(JSON.stringify(ops)).not.toContain("null");
    expect(Object.hasOwn(p.replica!.n as object, "b")).toBe(false);
    expect(Object.hasOwn(p.replica!.o as object, "b")).toBe(false);
    expect(p.replica).toEqual(json(p.tracker.target));
    expect(p.replica).toEqual({ o: { a: 1 }, n: { a: 1 } });
  });

  it("a rejected write inside a larger assignment leaves no partial change", () => {
    const t = track<{ o: Record<string, unknown> }>({ o: { a: 1, b: "x" } });
    t.flush();
    expect(() => {
      t.state.o = { a: 2, b: "xy", c: new Map() };
    }).toThrow(NotJsonError);
    expect(t.target).toEqual({ o: { a: 1, b: "x" } });
    expect(t.flush()).toEqual([]);
  });

  it("the error message names the path and says how to fix it", () => {
    const t = track<{ a: { b: Record<string, unknown> } }>({ a: { b: {} } });
    t.flush();
    try {
      t.state.a.b.when = new Date(0);
      expect.unreachable("a Date must be rejected");
    } catch (e) {
      expect(e).toBeInstanceOf(NotJsonError);
      expect((e as Error).message).toContain('"when"');
    }
  });
});
