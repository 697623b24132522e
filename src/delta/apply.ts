// Folding ops into a value. Own properties only, writes through defineProperty, so nothing inherited
// (a setter, a getter, a prototype) ever runs. Not transactional: on error, ops before the failing one
// stay applied — drop the replica and resume from the next base batch.
import { PathError, UnsafePathError } from "./errors.js";
import { defineData, isContainer, type Container } from "./json.js";
import type { Op, Path, Seg } from "./ops.js";
import { assertValidOp } from "./validate.js";

// Spreading a huge items array into splice() overflows the argument stack; 10k per call is safe.
const SPLICE_CHUNK = 10_000;

export function spliceInto(arr: unknown[], index: number, remove: number, items: readonly unknown[]): void {
  if (items.length <= SPLICE_CHUNK) {
    arr.splice(index, remove, ...items);
    return;
  }
  arr.splice(index, remove);
  const at = Math.min(index, arr.length);
  const tail = arr.splice(at);
  for (let i = 0; i < items.length; i += SPLICE_CHUNK) arr.push(...items.slice(i, i + SPLICE_CHUNK));
  for (let i = 0; i < tail.length; i += SPLICE_CHUNK) arr.push(...tail.slice(i, i + SPLICE_CHUNK));
}

function child(parent: Container, seg: Seg, path: Path): unknown {
  if (Array.isArray(parent)) {
    if (typeof seg !== "number") throw new UnsafePathError(seg, "array elements are addressed by integer index");
    if (seg >= parent.length) throw new PathError(path, `index ${seg} is past the end of an array of ${parent.length}`);
    return parent[seg];
  }
  const key = String(seg);
  if (!Object.hasOwn(parent, key)) throw new PathError(path, `no own property ${JSON.stringify(key)}`);
  return parent[key];
}

/**
 * Walk from an already-owned root to the container holding the last segment, calling `own` on each
 * container on the way (applyImmutable copies there) and linking each copy into its owned parent.
 */
function parentOf(root: Container, path: Path, own: (c: Container) => Container): Container {
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i]!;
    const next = child(node, seg, path);
    if (!isContainer(next)) throw new PathError(path, `${JSON.stringify(path.slice(0, i + 1))} is not an object or array`);
    const owned = own(next);
    if (owned !== next) defineData(node, Array.isArray(node) ? seg : String(seg), owned);
    node = owned;
  }
  return node;
}

function setIn(parent: Container, seg: Seg, value: unknown): void {
  if (Array.isArray(parent)) {
    if (typeof seg !== "number") throw new UnsafePathError(seg, "array elements are addressed by integer index");
    if (seg > parent.length) throw new UnsafePathError(seg, `index past the end of an array of ${parent.length} would make it sparse`);
    defineData(parent, seg, value);
    return;
  }
  defineData(parent, String(seg), value);
}

function deleteIn(parent: Container, seg: Seg, path: Path): void {
  if (Array.isArray(parent)) {
    if (typeof seg !== "number") throw new UnsafePathError(seg, "array elements are addressed by integer index");
    if (seg >= parent.length) throw new PathError(path, `index ${seg} is past the end of an array of ${parent.length}`);
    parent.splice(seg, 1);
    return;
  }
  delete parent[String(seg)];
}

function stringAt(parent: Container, seg: Seg, path: Path): string {
  const v = child(parent, seg, path);
  if (typeof v !== "string") throw new PathError(path, `expected a string, found ${v === null ? "null" : Array.isArray(v) ? "array" : typeof v}`);
  return v;
}

function applyOne(target: unknown, op: Op, own: (c: Container) => Container): unknown {
  assertValidOp(op);
  if (op[0] === "r") return op[1];
  if (!isContainer(target)) throw new PathError(op[1], "there is no object or array to apply to (a stream must start with a base batch)");
  const root = own(target);
  switch (op[0]) {
    case "p": {
      const path = op[1];
      let arr: unknown;
      if (path.length === 0) {
        if (!Array.isArray(root)) throw new PathError(path, "the root is not an array");
        arr = root;
      } else {
        const parent = parentOf(root, path, own);
        const seg = path[path.length - 1]!;
        const cur = child(parent, seg, path);
        if (!Array.isArray(cur)) throw new PathError(path, "the target is not an array");
        arr = own(cur);
        if (arr !== cur) setIn(parent, seg, arr);
      }
      spliceInto(arr as unknown[], op[2], op[3], op[4]);
      return root;
    }
    default: {
      const path = op[1];
      const parent = parentOf(root, path, own);
      const seg = path[path.length - 1]!;
      switch (op[0]) {
        case "s":
          setIn(parent, seg, op[2]);
          break;
        case "d":
          deleteIn(parent, seg, path);
          break;
        case "a":
          defineData(parent, seg, stringAt(parent, seg, path) + op[2]);
          break;
        case "t":
          defineData(parent, seg, stringAt(parent, seg, path).slice(op[2]));
          break;
      }
      return root;
    }
  }
}

const mutable = (c: Container): Container => c;

/**
 * Apply ops in place and return the (possibly new) root. Payloads of `r`, `s` and `p` are adopted, not
 * copied: do not apply one in-memory batch to two mutable replicas (use applyImmutable, or a batch that
 * went through JSON).
 */
export function apply<T>(target: T | undefined, ops: readonly Op[]): T {
  let root: unknown = target;
  for (const op of ops) root = applyOne(root, op, mutable);
  return root as T;
}

/**
 * Apply ops without mutating `target` or any payload: containers along each changed path are copied
 * (once per call), everything else is shared with the input.
 */
export function applyImmutable<T>(target: T | undefined, ops: readonly Op[]): T {
  const fresh = new WeakSet<object>();
  const own = (c: Container): Container => {
    if (fresh.has(c)) return c;
    let copy: Container;
    if (Array.isArray(c)) copy = c.slice();
    else {
      copy = Object.getPrototypeOf(c) === null ? Object.create(null) : {};
      for (const k of Object.keys(c)) defineData(copy, k, c[k]);
    }
    fresh.add(copy);
    return copy;
  };
  let root: unknown = target;
  for (const op of ops) root = applyOne(root, op, own);
  return root as T;
}
