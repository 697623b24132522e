// Hostile input to decode/apply/applyImmutable. 100 000 random JSON values and
// 100 000 mutated valid batches must throw only TypeError / PathError / UnsafePathError, finish (the
// test timeout is the hang detector), and never touch Object.prototype.
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  apply,
  applyImmutable,
  assertValidOp,
  assertValidWireOp,
  decoder,
  encoder,
  PathError,
  track,
  UnsafePathError,
  type Op,
  type WireOp,
} from "../../src/delta/index.js";
import { json, prng, prototypeSnapshot, runCmd, scriptArb, type Cmd } from "./helpers.js";

const protoBefore = prototypeSnapshot();
const BAIT = ["polluted", "isAdmin", "toString", "valueOf", "hasOwnProperty", "length"];

function assertNoPollution() {
  const probe = {} as Record<string, unknown>;
  expect(probe.polluted).toBeUndefined();
  expect(probe.isAdmin).toBeUndefined();
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
  expect(typeof probe.toString).toBe("function");
  expect(Object.prototype.toString).toBe(Object.prototype.toString);
  expect(prototypeSnapshot()).toBe(protoBefore);
}

// Hundreds of thousands of expected throws: capturing their stacks is most of the cost, and no
// assertion here reads a stack.
let stackLimit: number | undefined;
beforeAll(() => {
  stackLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
});
afterAll(() => {
  Error.stackTraceLimit = stackLimit ?? 10;
  assertNoPollution();
});

const unexpected: string[] = [];
beforeEach(() => {
  unexpected.length = 0;
});
function expectOnlyAllowedErrors(run: () => unknown, input: unknown) {
  try {
    run();
  } catch (e) {
    if (e instanceof TypeError || e instanceof PathError || e instanceof UnsafePathError) return;
    if (unexpected.length < 5) unexpected.push(`${(e as Error)?.constructor?.name}: ${(e as Error)?.message} <- ${JSON.stringify(input)?.slice(0, 300)}`);
  }
}

// --- random JSON values shaped like attacks on the applier ------------------------------------------
const VERBS = ["r", "s", "d", "a", "t", "p", "#", "m", "x", "", "S", 0, null];
const SEGS: unknown[] = ["__proto__", "constructor", "prototype", "a", "b", "xs", "", "0", 0, 1, 2, -1, 1.5, 4294967290, 2 ** 53, null, true, [], {}, "length"];

function randomJson(rnd: () => number, depth: number): unknown {
  const r = rnd();
  if (depth <= 0 || r < 0.35) {
    const leaves = [null, true, false, 0, -1, 1.5, 1e9, 4294967295, "", "a", "__proto__", "constructor", "x".repeat(5)];
    return leaves[Math.floor(rnd() * leaves.length)];
  }
  if (r < 0.55) return Array.from({ length: Math.floor(rnd() * 4) }, () => randomJson(rnd, depth - 1));
  if (r < 0.75) {
    const o: Record<string, unknown> = {};
    const n = Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) {
      const k = [...BAIT, "a", "b", "__proto__", "constructor", "prototype"][Math.floor(rnd() * 11)]!;
      Object.defineProperty(o, k, { value: randomJson(rnd, depth - 1), enumerable: true, writable: true, configurable: true });
    }
    return o;
  }
  return randomOp(rnd, depth - 1);
}

function randomPath(rnd: () => number): unknown {
  if (rnd() < 0.1) return [SEGS, "a", 3, null, {}][Math.floor(rnd() * 5)];
  return Array.from({ length: Math.floor(rnd() * 4) }, () => (rnd() < 0.4 ? BAIT[Math.floor(rnd() * BAIT.length)] : SEGS[Math.floor(rnd() * SEGS.length)]));
}

function randomOp(rnd: () => number, depth: number): unknown[] {
  const verb = VERBS[Math.floor(rnd() * VERBS.length)];
  const arity = Math.floor(rnd() * 6);
  const op: unknown[] = [verb];
  for (let i = 1; i < arity; i++) {
    const pick = rnd();
    op.push(pick < 0.4 ? randomPath(rnd) : pick < 0.7 ? Math.floor(rnd() * 6) - 1 : randomJson(rnd, depth));
  }
  return op;
}

const targets = () => [undefined, {}, { a: { b: "x" }, xs: [1, { a: "s" }] }, [1, [2], { a: [] }], "str", 5, null];

let rotation = 0;
function feed(input: unknown, dec = decoder()) {
  expectOnlyAllowedErrors(() => dec.decode(input as WireOp[]), input);
  // One target shape per input, rotating, keeps 100 000 inputs inside the suite's time budget.
  const all = targets();
  const target = all[rotation++ % all.length];
  expectOnlyAllowedErrors(() => apply(target as object, input as Op[]), input);
  expectOnlyAllowedErrors(() => applyImmutable(targets()[rotation % all.length] as object, input as Op[]), input);
  if (Array.isArray(input)) {
    for (const op of input.slice(0, 4)) {
      expectOnlyAllowedErrors(() => assertValidOp(op as Op), op);
      expectOnlyAllowedErrors(() => assertValidWireOp(op as WireOp), op);
    }
  }
}

// --- valid streams to mutate ---------------------------------------------------------------------
function validStreams(count: number): { wire: unknown[][]; ops: Op[][] }[] {
  const scripts = fc.sample(scriptArb({ discard: false }, 25), { numRuns: count, seed: 4242 });
  return scripts.map(({ init, cmds }) => {
    const t = track(json(init));
    const enc = encoder();
    const wire: unknown[][] = [];
    const ops: Op[][] = [];
    const flush = () => {
      const batch = json(t.flush());
      ops.push(batch);
      wire.push(json(enc.encode(batch)) as unknown[]);
    };
    flush();
    const held: (Record<string, unknown> | unknown[])[] = [];
    for (const cmd of cmds as Cmd[]) runCmd(t, cmd, held, flush);
    flush();
    return { wire, ops };
  });
}

function mutate(value: unknown, rnd: () => number): unknown {
  // Walk to a random node and replace, drop, duplicate or corrupt it.
  const copy = json(value);
  const holders: [Record<string | number, unknown>, string | number][] = [];
  const visit = (node: unknown) => {
    if (node === null || typeof node !== "object") return;
    for (const k of Object.keys(node)) {
      const key = Array.isArray(node) ? Number(k) : k;
      holders.push([node as Record<string | number, unknown>, key]);
      visit((node as Record<string, unknown>)[k]);
    }
  };
  visit(copy);
  const edits = 1 + Math.floor(rnd() * 3);
  for (let e = 0; e < edits && holders.length > 0; e++) {
    const [parent, key] = holders[Math.floor(rnd() * holders.length)]!;
    const r = rnd();
    if (r < 0.3) parent[key] = SEGS[Math.floor(rnd() * SEGS.length)];
    else if (r < 0.45) parent[key] = VERBS[Math.floor(rnd() * VERBS.length)];
    else if (r < 0.6 && Array.isArray(parent)) parent.splice(key as number, 1);
    else if (r < 0.7 && Array.isArray(parent)) parent.splice(key as number, 0, parent[key]);
    else if (r < 0.8) parent[key] = randomPath(rnd);
    else if (r < 0.9) parent[key] = typeof parent[key] === "number" ? -(parent[key] as number) - 1 : randomJson(rnd, 2);
    else Object.defineProperty(parent, "__proto__", { value: { polluted: true }, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

describe("fuzz: decode, apply and applyImmutable on hostile input", () => {
  it("100 000 random JSON values throw only TypeError/PathError/UnsafePathError and pollute nothing", () => {
    const rnd = prng(0xdecaf);
    const arb = fc.sample(fc.jsonValue({ maxDepth: 3 }), { numRuns: 10_000, seed: 7 });
    for (const v of arb) feed(v);
    for (let i = 0; i < 90_000; i++) {
      const r = rnd();
      const input = r < 0.2 ? randomJson(rnd, 4) : r < 0.9 ? Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => randomOp(rnd, 2)) : [randomOp(rnd, 2)];
      feed(input);
    }
    expect(unexpected).toEqual([]);
    assertNoPollution();
  }, 180_000);

  it("100 000 mutated valid batches throw only TypeError/PathError/UnsafePathError and pollute nothing", () => {
    const rnd = prng(0xbadba7);
    const streams = validStreams(200);
    let done = 0;
    let applied = 0;
    while (done < 100_000) {
      for (const { wire, ops } of streams) {
        if (done >= 100_000) break;
        // Replay the stream honestly up to a random batch, then hand the consumer a corrupted one.
        const cut = Math.floor(rnd() * wire.length);
        const dec = decoder();
        let replica: unknown;
        for (let i = 0; i < cut; i++) replica = apply(replica as object, dec.decode(json(wire[i]) as WireOp[]));
        const bad = mutate(wire[cut], rnd);
        expectOnlyAllowedErrors(() => {
          const decoded = dec.decode(bad as WireOp[]);
          replica = apply(replica as object, decoded);
          applied++;
        }, bad);
        const badOps = mutate(ops[cut], rnd);
        expectOnlyAllowedErrors(() => apply((replica === undefined ? undefined : json(replica)) as object, badOps as Op[]), badOps);
        expectOnlyAllowedErrors(() => applyImmutable(replica as object, badOps as Op[]), badOps);
        done += 2;
      }
    }
    expect(unexpected).toEqual([]);
    // Some corruptions are still valid batches; the fuzzer must not be rejecting everything trivially.
    expect(applied).toBeGreaterThan(1000);
    assertNoPollution();
  }, 180_000);

  it("targeted pollution attempts are all refused", () => {
    const attacks: unknown[] = [
      [["s", ["__proto__", "polluted"], true]],
      [["s", ["constructor", "prototype", "polluted"], true]],
      [["a", ["__proto__", "toString"], "x"]],
      [["p", ["__proto__"], 0, 0, [1]]],
      [["d", ["constructor", "prototype", "hasOwnProperty"]]],
      [
        ["#", 0, ["__proto__"]],
        ["s", 0, { polluted: true }],
      ],
      [
        ["#", 0, ["a"]],
        ["#", 0, ["constructor", "prototype"]],
        ["s", 0, 1],
      ],
      [["s", ["xs", "__proto__", "polluted"], 1]],
      [
        ["r", JSON.parse('{"__proto__":{"polluted":true}}')],
        ["s", ["__proto__", "polluted"], 1],
      ],
    ];
    for (const a of attacks) {
      feed(a);
      expect(() => decoder().decode(a as WireOp[])).toThrow();
    }
    expect(unexpected).toEqual([]);
    assertNoPollution();
  });
});
