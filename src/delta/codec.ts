// Wire codec: interning on a path's second use, and omission of a path equal to the previous op's path
// within one batch. Ids are the only state that crosses batches; both tables reset on "r", so a reader can
// start at any base with a fresh decoder. One encoder/decoder pair per ordered stream — a late subscriber
// sharing an encoder would receive ids it never saw.
import { PathError } from "./errors.js";
import type { NonEmptyPath, Op, Path, PathRef, Seg, WireOp } from "./ops.js";
import { assertSafePath, assertValidWireOp } from "./validate.js";

export interface Encoder {
  encode(ops: readonly Op[]): WireOp[];
}
export interface Decoder {
  decode(wire: readonly WireOp[]): Op[];
}

function samePath(a: Path | undefined, b: Path): boolean {
  if (a === undefined || a.length !== b.length) return false;
  for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const RECENT_PATHS = 4;

/** Per-path state of an encoder: seen once (inline), or interned under an id. */
interface PathNode {
  kids?: Map<Seg, PathNode>;
  seen?: boolean;
  id?: number;
}

/** The wire form of a non-base op, its path given by `ref` (undefined: the previous op's path); undefined for an unknown verb. */
function wireOf(op: Op, ref: PathRef | undefined): WireOp | undefined {
  switch (op[0]) {
    case "s":
      return ref === undefined ? ["s", op[2]] : ["s", ref, op[2]];
    case "d":
      return ref === undefined ? ["d"] : ["d", ref];
    case "a":
      return ref === undefined ? ["a", op[2]] : ["a", ref, op[2]];
    case "t":
      return ref === undefined ? ["t", op[2]] : ["t", ref, op[2]];
    case "p":
      return ref === undefined ? ["p", op[2], op[3], op[4]] : ["p", ref, op[2], op[3], op[4]];
  }
  return undefined;
}

export function encoder(): Encoder {
  // A trie over segments rather than JSON.stringify keys: no string is built per op (it was 8% of a
  // push-per-flush stream), and ["a\u0000b"] and ["a","b"] stay apart by construction, as do 0 and "0".
  let root: PathNode = {};
  let nextId = 0;
  // The last few paths looked up, as copies beside their nodes: a stream writes the same few paths
  // batch after batch (a text block, its counters), and comparing a short path segment by segment is a
  // fraction of a Map lookup per segment (the trie walk was most of encoding a 4-op batch).
  // A producer usually hands in the same path arrays too, so an entry keeps the array it was made from:
  // an identity match needs one path compare to prove the array was not changed since, where a scan
  // compares paths against every entry before it (the generic `!==` on a string-or-number segment is
  // a builtin call, pointer compares are not).
  let recent: { src: Path; segs: Seg[]; node: PathNode }[] = [];
  let nextRecent = 0;
  const lookup = (path: Path): PathNode => {
    for (let i = 0; i < recent.length; i++) {
      const r = recent[i]!;
      if (r.src === path && samePath(r.segs, path)) return r.node;
    }
    for (let i = 0; i < recent.length; i++) {
      const r = recent[i]!;
      if (samePath(r.segs, path)) return r.node;
    }
    const node = nodeOf(path);
    const entry = { src: path, segs: path.slice(), node };
    // Defined, not assigned: a setter planted on Array.prototype must not see the encoder's own array.
    Object.defineProperty(recent, nextRecent, { value: entry, writable: true, enumerable: true, configurable: true });
    nextRecent = (nextRecent + 1) % RECENT_PATHS;
    return node;
  };
  const nodeOf = (path: Path): PathNode => {
    let node = root;
    for (const seg of path) {
      let kid = node.kids?.get(seg);
      if (!kid) {
        kid = {};
        (node.kids ??= new Map()).set(seg, kid);
      }
      node = kid;
    }
    return node;
  };
  return {
    encode(ops) {
      const out: WireOp[] = [];
      let prev: Path | undefined;
      for (const op of ops) {
        if (op[0] === "r") {
          root = {};
          recent = [];
          nextRecent = 0;
          nextId = 0;
          prev = undefined;
          out.push(op);
          continue;
        }
        const path = op[1];
        let ref: PathRef | undefined;
        // The previous op's own array is the same path: nothing runs between two ops of one batch.
        if (prev !== path && !samePath(prev, path)) {
          const node = lookup(path);
          if (node.id !== undefined) ref = node.id;
          else if (node.seen) {
            node.id = nextId++;
            out.push(["#", node.id, path]);
            ref = node.id;
          } else {
            node.seen = true;
            ref = path;
          }
        }
        prev = path;
        const w = wireOf(op, ref);
        if (w === undefined) continue;
        // A batch of one op that defines no id (a push per flush): a literal, no array grown.
        if (ops.length === 1 && out.length === 0) return [w];
        out.push(w);
      }
      return out;
    },
  };
}

export function decoder(): Decoder {
  let table: Path[] = [];
  return {
    decode(wire) {
      if (!Array.isArray(wire)) throw new TypeError("invalid batch: expected an array of wire ops");
      const out: Op[] = [];
      let prev: Path | undefined;
      const resolve = (ref: unknown): Path => {
        if (typeof ref === "number") {
          const p = table[ref];
          if (p === undefined) throw new PathError(ref, "unknown path id; the stream was joined mid-way or an id definition was lost");
          return p;
        }
        return ref as Path;
      };
      const nonRoot = (verb: string, p: Path): NonEmptyPath => {
        if (p.length === 0) throw new PathError([], `"${verb}" cannot target the root`);
        return p as NonEmptyPath;
      };
      for (const w of wire) {
        assertValidWireOp(w);
        const verb = w[0];
        if (verb === "r") {
          table = [];
          prev = undefined;
          out.push(["r", w[1]]);
          continue;
        }
        if (verb === "#") {
          assertSafePath(w[2]);
          table[w[1]] = w[2].slice();
          continue;
        }
        const isShort =
          (verb === "d" && w.length === 1) || (verb === "p" && w.length === 4) || ((verb === "s" || verb === "a" || verb === "t") && w.length === 2);
        let path: Path;
        if (isShort) {
          if (prev === undefined) throw new PathError([], `short-form "${verb}" with no previous path in this batch`);
          path = prev;
        } else path = resolve(w[1]);
        prev = path;
        switch (verb) {
          case "s":
            out.push(["s", nonRoot(verb, path), isShort ? w[1] : w[2]]);
            break;
          case "d":
            out.push(["d", nonRoot(verb, path)]);
            break;
          case "a":
            out.push(["a", nonRoot(verb, path), (isShort ? w[1] : w[2]) as string]);
            break;
          case "t":
            out.push(["t", nonRoot(verb, path), (isShort ? w[1] : w[2]) as number]);
            break;
          case "p": {
            const o = isShort ? 1 : 2;
            out.push(["p", path, w[o] as number, w[o + 1] as number, w[o + 2] as unknown[]]);
            break;
          }
        }
      }
      return out;
    },
  };
}
