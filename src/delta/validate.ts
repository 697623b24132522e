// Grammar checks for decoded ops (guards apply) and wire ops (guards decode). They are separate on
// purpose: the wire grammar read as an Op grammar would accept ["s", value] and apply would then take the
// value for a path. Neither inspects payloads recursively — that would cost O(payload) per op.
import { PathError, UnsafePathError } from "./errors.js";
import type { Op, Path, Seg, WireOp } from "./ops.js";

export const RESERVED_SEGMENTS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

function describe(x: unknown): string {
  if (x === null) return "null";
  if (Array.isArray(x)) return "array";
  return typeof x;
}

export function isIndex(x: unknown): x is number {
  return typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
}

export function assertSafeSegment(seg: unknown): asserts seg is Seg {
  if (typeof seg === "string") {
    if (RESERVED_SEGMENTS.has(seg)) throw new UnsafePathError(seg);
    return;
  }
  if (!isIndex(seg)) {
    throw new TypeError(`invalid path segment ${typeof seg === "number" ? String(seg) : describe(seg)}: segments are strings or non-negative integer indices`);
  }
}

export function assertSafePath(path: unknown): asserts path is Path {
  if (!Array.isArray(path)) {
    throw new TypeError(`invalid path: expected an array of segments, got ${describe(path)}`);
  }
  for (const seg of path) assertSafeSegment(seg);
}

function assertNonEmptyPath(verb: string, path: unknown): void {
  assertSafePath(path);
  if ((path as Path).length === 0) throw new PathError([], `"${verb}" cannot target the root; only "r" and "p" can`);
}

function assertTuple(op: unknown): asserts op is readonly unknown[] {
  if (!Array.isArray(op)) throw new TypeError(`invalid op: expected a tuple (array), got ${describe(op)}`);
  if (typeof op[0] !== "string") throw new TypeError(`invalid op: the first element must be a verb string, got ${describe(op[0])}`);
}

function arity(op: readonly unknown[], ...allowed: number[]): void {
  if (!allowed.includes(op.length)) {
    throw new TypeError(`invalid "${String(op[0])}" op: expected ${allowed.join(" or ")} elements, got ${op.length}`);
  }
}

function assertCount(what: string, n: unknown): void {
  if (!isIndex(n)) throw new TypeError(`invalid ${what}: expected a non-negative integer, got ${typeof n === "number" ? String(n) : describe(n)}`);
}

function assertItems(items: unknown): void {
  if (!Array.isArray(items)) throw new TypeError(`invalid "p" items: expected an array, got ${describe(items)}`);
}

function assertText(text: unknown): void {
  if (typeof text !== "string") throw new TypeError(`invalid "a" text: expected a string, got ${describe(text)}`);
}

export function assertValidOp(op: unknown): asserts op is Op {
  assertTuple(op);
  switch (op[0]) {
    case "r":
      arity(op, 2);
      return;
    case "s":
      arity(op, 3);
      assertNonEmptyPath("s", op[1]);
      return;
    case "d":
      arity(op, 2);
      assertNonEmptyPath("d", op[1]);
      return;
    case "a":
      arity(op, 3);
      assertNonEmptyPath("a", op[1]);
      assertText(op[2]);
      return;
    case "t":
      arity(op, 3);
      assertNonEmptyPath("t", op[1]);
      assertCount('"t" count', op[2]);
      return;
    case "p":
      arity(op, 5);
      assertSafePath(op[1]);
      assertCount('"p" index', op[2]);
      assertCount('"p" remove count', op[3]);
      assertItems(op[4]);
      return;
    default:
      throw new TypeError(`unknown op verb ${JSON.stringify(op[0])}: expected one of r, s, d, a, t, p`);
  }
}

function assertPathRef(verb: string, ref: unknown): void {
  if (typeof ref === "number") {
    assertCount(`"${verb}" path id`, ref);
    return;
  }
  assertNonEmptyPathOrRoot(verb, ref);
}

function assertNonEmptyPathOrRoot(verb: string, path: unknown): void {
  if (verb === "p") assertSafePath(path);
  else assertNonEmptyPath(verb, path);
}

export function assertValidWireOp(op: unknown): asserts op is WireOp {
  assertTuple(op);
  const short = (n: number) => op.length === n;
  switch (op[0]) {
    case "r":
      arity(op, 2);
      return;
    case "#":
      arity(op, 3);
      assertCount('"#" id', op[1]);
      assertSafePath(op[2]);
      return;
    case "s":
      arity(op, 2, 3);
      if (!short(2)) assertPathRef("s", op[1]);
      return;
    case "d":
      arity(op, 1, 2);
      if (!short(1)) assertPathRef("d", op[1]);
      return;
    case "a":
      arity(op, 2, 3);
      if (short(2)) assertText(op[1]);
      else {
        assertPathRef("a", op[1]);
        assertText(op[2]);
      }
      return;
    case "t":
      arity(op, 2, 3);
      if (short(2)) assertCount('"t" count', op[1]);
      else {
        assertPathRef("t", op[1]);
        assertCount('"t" count', op[2]);
      }
      return;
    case "p": {
      arity(op, 4, 5);
      const at = short(4) ? 1 : 2;
      if (!short(4)) assertPathRef("p", op[1]);
      assertCount('"p" index', op[at]);
      assertCount('"p" remove count', op[at + 1]);
      assertItems(op[at + 2]);
      return;
    }
    default:
      throw new TypeError(`unknown wire op verb ${JSON.stringify(op[0])}: expected one of r, #, s, d, a, t, p`);
  }
}
