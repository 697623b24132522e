// Shared test scaffolding for the delta suite: a producer→wire→replica pipe and a random
// mutation-script model (generators + interpreter) used by the property, interop and JSON Patch tests.
// The interpreter is written against the Tracker *interface*, so the same script drives our tracker
// and Chord's.
import fc from "fast-check";
import { expect } from "vitest";
import { apply, decoder, encoder, track, type Op, type WireOp } from "../../src/delta/index.js";

export const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** The minimal tracker surface shared by ours and Chord's. */
export interface AnyTracker {
  state: unknown;
  readonly target: unknown;
  flush(): readonly unknown[];
  rebase(): void;
  discard(): void;
  readonly dirty: boolean;
}

/**
 * A producer and one replica connected the way a real stream is: flush → encode →
 * JSON.stringify → JSON.parse → decode → apply. `sync()` asserts convergence after every batch.
 */
export class Pipe<T extends object> {
  readonly tracker;
  readonly enc = encoder();
  readonly dec = decoder();
  replica: T | undefined;
  readonly batches: Op[][] = [];
  readonly wire: string[] = [];

  constructor(root: T, opts?: { maxOverlapScan?: number }) {
    this.tracker = track(root, opts);
  }

  get state(): T {
    return this.tracker.state;
  }

  /** Flush, ship through the wire codec as text, apply, and check the replica equals the producer. */
  sync(): Op[] {
    const ops = this.tracker.flush();
    this.batches.push(ops);
    const text = JSON.stringify(this.enc.encode(ops));
    this.wire.push(text);
    const decoded = this.dec.decode(JSON.parse(text) as WireOp[]);
    this.replica = apply(this.replica, decoded);
    expect(this.replica).toEqual(json(this.tracker.target));
    return ops;
  }
}

/** Deterministic PRNG (mulberry32) for the seeded "deterministic random" scenarios. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Snapshot of the prototypes a hostile batch could try to reach. */
export function prototypeSnapshot(): string {
  const keys = (o: object) => Reflect.ownKeys(o).map(String).sort().join(",");
  return [keys(Object.prototype), keys(Array.prototype), keys(Function.prototype), keys(String.prototype)].join("|");
}

export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Random mutation scripts.

export const KEYS = ["a", "b", "c", "d", "e"] as const;
const RESERVED = new Set(["__proto__", "constructor", "prototype"]);
const CHARS = ["x", "y", "z", " ", "\n", "é", "\u0000", "😀", "ab", "lorem "];

export const textArb: fc.Arbitrary<string> = fc.array(fc.constantFrom(...CHARS), { maxLength: 6 }).map((parts) => parts.join(""));

const leafArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: textArb },
  { weight: 2, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
);

const keyArb = fc.constantFrom(...KEYS);

/** A JSON value of depth ≤ d built from a small key set, so writes collide with existing keys. */
export function jsonArb(d: number): fc.Arbitrary<unknown> {
  if (d <= 0) return leafArb;
  const inner = jsonArb(d - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leafArb },
    { weight: 2, arbitrary: fc.array(inner, { maxLength: 3 }) },
    {
      weight: 2,
      arbitrary: fc.dictionary(keyArb, inner, { maxKeys: 3, noNullPrototype: true }),
    },
  );
}

/** A container that is at least `d` levels deep along one branch (objects and arrays alternate randomly). */
export function deepArb(d: number): fc.Arbitrary<object> {
  if (d <= 0) return fc.dictionary(keyArb, leafArb, { maxKeys: 3, noNullPrototype: true });
  const inner = deepArb(d - 1);
  return fc.oneof(
    fc.tuple(keyArb, inner, fc.dictionary(keyArb, jsonArb(1), { maxKeys: 2, noNullPrototype: true })).map(([k, child, rest]) => ({ ...rest, [k]: child })),
    fc.tuple(inner, fc.array(jsonArb(1), { maxLength: 3 })).map(([child, rest]) => [child, ...rest]),
  );
}

export type Cmd =
  | { k: "set"; p: number[]; key: number; v: unknown }
  | { k: "del"; p: number[]; key: number; viaUndefined: boolean }
  | { k: "append"; p: number[]; key: number; text: string }
  | { k: "drop"; p: number[]; key: number; n: number }
  | { k: "roll"; p: number[]; key: number; n: number; text: string }
  | { k: "push"; p: number[]; items: unknown[] }
  | { k: "unshift"; p: number[]; items: unknown[] }
  | { k: "splice"; p: number[]; start: number; del: number; items: unknown[] }
  | { k: "pop" | "shift" | "reverse" | "sort"; p: number[] }
  | { k: "len"; p: number[]; n: number }
  | { k: "hold"; p: number[] }
  | { k: "heldSet"; h: number; key: number; v: unknown }
  | { k: "heldAppend"; h: number; key: number; text: string }
  | { k: "heldPush"; h: number; items: unknown[] }
  | { k: "root"; v: object }
  | { k: "rebase" }
  | { k: "discard" }
  | { k: "flush" };

const pathArb = fc.array(fc.nat(7), { maxLength: 6 });
const itemsArb = fc.array(jsonArb(2), { maxLength: 3 });

export interface CmdOptions {
  rebase?: boolean;
  discard?: boolean;
  root?: boolean;
  sortReverse?: boolean;
}

export function cmdArb(o: CmdOptions = {}): fc.Arbitrary<Cmd> {
  const { rebase = true, discard = true, root = true, sortReverse = true } = o;
  const entries: { weight: number; arbitrary: fc.Arbitrary<Cmd> }[] = [
    { weight: 6, arbitrary: fc.record({ k: fc.constant("set" as const), p: pathArb, key: fc.nat(9), v: jsonArb(3) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("del" as const), p: pathArb, key: fc.nat(9), viaUndefined: fc.boolean() }) },
    { weight: 4, arbitrary: fc.record({ k: fc.constant("append" as const), p: pathArb, key: fc.nat(9), text: textArb }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("drop" as const), p: pathArb, key: fc.nat(9), n: fc.nat(8) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("roll" as const), p: pathArb, key: fc.nat(9), n: fc.nat(8), text: textArb }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant("push" as const), p: pathArb, items: itemsArb }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("unshift" as const), p: pathArb, items: itemsArb }) },
    {
      weight: 3,
      arbitrary: fc.record({ k: fc.constant("splice" as const), p: pathArb, start: fc.integer({ min: -3, max: 6 }), del: fc.nat(4), items: itemsArb }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constantFrom("pop" as const, "shift" as const), p: pathArb }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("len" as const), p: pathArb, n: fc.nat(5) }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant("hold" as const), p: pathArb }) },
    { weight: 3, arbitrary: fc.record({ k: fc.constant("heldSet" as const), h: fc.nat(7), key: fc.nat(9), v: jsonArb(2) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("heldAppend" as const), h: fc.nat(7), key: fc.nat(9), text: textArb }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("heldPush" as const), h: fc.nat(7), items: itemsArb }) },
    { weight: 3, arbitrary: fc.constant({ k: "flush" as const }) },
  ];
  if (sortReverse) entries.push({ weight: 1, arbitrary: fc.record({ k: fc.constantFrom("reverse" as const, "sort" as const), p: pathArb }) });
  if (root) entries.push({ weight: 1, arbitrary: fc.record({ k: fc.constant("root" as const), v: deepArb(2) }) });
  if (rebase) entries.push({ weight: 1, arbitrary: fc.constant({ k: "rebase" as const }) });
  if (discard) entries.push({ weight: 1, arbitrary: fc.constant({ k: "discard" as const }) });
  return fc.oneof(...entries);
}

/** `size: "max"` so script lengths really spread up to maxLength (fast-check's default caps near 10). */
export const scriptArb = (o: CmdOptions = {}, maxLength = 40, minLength = 1) =>
  fc.record({ init: deepArb(3), cmds: fc.array(cmdArb(o), { minLength, maxLength, size: "max" }) });

type Container = Record<string, unknown> | unknown[];
const isContainer = (v: unknown): v is Container => v !== null && typeof v === "object";

function childContainers(c: Container): (string | number)[] {
  if (Array.isArray(c)) {
    const out: number[] = [];
    c.forEach((v, i) => isContainer(v) && out.push(i));
    return out;
  }
  return Object.keys(c).filter((k) => !RESERVED.has(k) && isContainer(c[k]));
}

/** Walk from the state proxy by picking container children by index; stops where there are none. */
export function nav(root: unknown, p: readonly number[]): Container {
  let cur = root as Container;
  for (const n of p) {
    const kids = childContainers(cur);
    if (kids.length === 0) break;
    const key = kids[n % kids.length]!;
    cur = (cur as Record<string | number, unknown>)[key] as Container;
  }
  return cur;
}

function navArray(root: unknown, p: readonly number[]): unknown[] | undefined {
  // The deepest array on the walk, so array commands hit nested arrays too.
  let cur = root as Container;
  let found: unknown[] | undefined = Array.isArray(cur) ? cur : undefined;
  for (const n of p) {
    const kids = childContainers(cur);
    if (kids.length === 0) break;
    cur = (cur as Record<string | number, unknown>)[kids[n % kids.length]!] as Container;
    if (Array.isArray(cur)) found = cur;
  }
  return found;
}

function keyIn(c: Container, key: number, forWrite: boolean): string | number {
  if (Array.isArray(c)) return key % (c.length + (forWrite ? 1 : 0) || 1);
  return KEYS[key % KEYS.length]!;
}

function stringEdit(c: Container, key: number, edit: (s: string) => string): void {
  const k = keyIn(c, key, false);
  if (Array.isArray(c) && c.length === 0) {
    c.push(edit(""));
    return;
  }
  const obj = c as Record<string | number, unknown>;
  const cur = obj[k];
  obj[k] = typeof cur === "string" ? edit(cur) : edit("");
}

const sortKey = (v: unknown) => JSON.stringify(v) ?? "";

/** Run one command against a tracker. `held` keeps container references across commands. */
export function runCmd(t: AnyTracker, cmd: Cmd, held: Container[], onFlush: () => void): void {
  const s = t.state;
  switch (cmd.k) {
    case "set": {
      const c = nav(s, cmd.p);
      (c as Record<string | number, unknown>)[keyIn(c, cmd.key, true)] = json(cmd.v);
      return;
    }
    case "del": {
      const c = nav(s, cmd.p);
      if (Array.isArray(c)) {
        if (c.length > 0) c.splice(cmd.key % c.length, 1);
        return;
      }
      const k = keyIn(c, cmd.key, false) as string;
      if (cmd.viaUndefined) c[k] = undefined;
      else delete c[k];
      return;
    }
    case "append":
      return stringEdit(nav(s, cmd.p), cmd.key, (x) => x + cmd.text);
    case "drop":
      return stringEdit(nav(s, cmd.p), cmd.key, (x) => x.slice(cmd.n));
    case "roll":
      return stringEdit(nav(s, cmd.p), cmd.key, (x) => x.slice(cmd.n) + cmd.text);
    case "push":
      navArray(s, cmd.p)?.push(...json(cmd.items));
      return;
    case "unshift":
      navArray(s, cmd.p)?.unshift(...json(cmd.items));
      return;
    case "splice":
      navArray(s, cmd.p)?.splice(cmd.start, cmd.del, ...json(cmd.items));
      return;
    case "pop":
      navArray(s, cmd.p)?.pop();
      return;
    case "shift":
      navArray(s, cmd.p)?.shift();
      return;
    case "reverse":
      navArray(s, cmd.p)?.reverse();
      return;
    case "sort":
      navArray(s, cmd.p)?.sort((x, y) => (sortKey(x) < sortKey(y) ? -1 : sortKey(x) > sortKey(y) ? 1 : 0));
      return;
    case "len": {
      const a = navArray(s, cmd.p);
      if (a) a.length = cmd.n;
      return;
    }
    case "hold":
      held.push(nav(s, cmd.p));
      if (held.length > 8) held.shift();
      return;
    case "heldSet": {
      const c = held[cmd.h % (held.length || 1)];
      if (c) (c as Record<string | number, unknown>)[keyIn(c, cmd.key, true)] = json(cmd.v);
      return;
    }
    case "heldAppend": {
      const c = held[cmd.h % (held.length || 1)];
      if (c) stringEdit(c, cmd.key, (x) => x + cmd.text);
      return;
    }
    case "heldPush": {
      const c = held[cmd.h % (held.length || 1)];
      if (Array.isArray(c)) c.push(...json(cmd.items));
      return;
    }
    case "root":
      t.state = json(cmd.v);
      return;
    case "rebase":
      t.rebase();
      return;
    case "discard":
      t.discard();
      return;
    case "flush":
      onFlush();
      return;
  }
}
