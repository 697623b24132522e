// A downgrade of a batch to RFC 6902 JSON Patch, for generic clients that cannot run the six-verb
// applier. Lossy on purpose: "a" and "t" become a replace carrying the whole new string, and a splice
// becomes runs of remove/add.
import { applyImmutable } from "./apply.js";
import { PathError } from "./errors.js";
import type { Op, Path } from "./ops.js";

export type JsonPatchOperation = { op: "add"; path: string; value: unknown } | { op: "replace"; path: string; value: unknown } | { op: "remove"; path: string };

const pointer = (path: Path): string => path.map((s) => "/" + String(s).replace(/~/g, "~0").replace(/\//g, "~1")).join("");

function at(root: unknown, path: Path): unknown {
  let node = root;
  for (const seg of path) node = (node as Record<string, unknown>)[seg];
  return node;
}

function has(root: unknown, path: Path): boolean {
  const parent = at(root, path.slice(0, -1));
  const key = path[path.length - 1]!;
  return Array.isArray(parent) ? (key as number) < parent.length : Object.hasOwn(parent as object, String(key));
}

/** The same change as `ops` applied to `before`, as RFC 6902 operations. `before` is not modified. */
export function toJsonPatch(before: unknown, ops: readonly Op[]): JsonPatchOperation[] {
  const out: JsonPatchOperation[] = [];
  let cur = before;
  for (const op of ops) {
    const prev = cur;
    cur = applyImmutable(cur as object | undefined, [op]);
    switch (op[0]) {
      case "r":
        out.push({ op: "replace", path: "", value: op[1] });
        break;
      case "s": {
        // On an array, "add" at an existing index inserts; only a replace overwrites.
        out.push(has(prev, op[1]) ? { op: "replace", path: pointer(op[1]), value: op[2] } : { op: "add", path: pointer(op[1]), value: op[2] });
        break;
      }
      case "d": {
        // A tracker may delete a key created and removed inside one window; RFC 6902 needs a target.
        if (has(prev, op[1])) out.push({ op: "remove", path: pointer(op[1]) });
        break;
      }
      case "a":
      case "t":
        out.push({ op: "replace", path: pointer(op[1]), value: at(cur, op[1]) });
        break;
      case "p": {
        const [, path, index, remove, items] = op;
        const arr = at(prev, path);
        if (!Array.isArray(arr)) throw new PathError(path, "splice target is not an array");
        const start = Math.min(index, arr.length);
        const n = Math.min(remove, arr.length - start);
        for (let i = 0; i < n; i++) out.push({ op: "remove", path: pointer([...path, start]) });
        items.forEach((item, j) => out.push({ op: "add", path: pointer([...path, start + j]), value: item }));
        break;
      }
    }
  }
  return out;
}
