// The store keeps JSON, and keeps it as text: serialising once at admission snapshots the caller's
// value (later mutation cannot reach the store) and every read parses a fresh copy.
import { WriteError } from "./errors.js";

const MAX_DEPTH = 512;

function check(v: unknown, depth: number, seen: Set<object>, where: string): void {
  switch (typeof v) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(v)) throw new WriteError(`${where} holds ${v}, which JSON cannot represent`);
      return;
    case "object": {
      if (v === null) return;
      if (depth > MAX_DEPTH) throw new WriteError(`${where} nests deeper than ${MAX_DEPTH} levels`);
      if (seen.has(v)) throw new WriteError(`${where} contains a cycle`);
      const proto = Object.getPrototypeOf(v);
      if (Array.isArray(v)) {
        seen.add(v);
        for (let i = 0; i < v.length; i++) check(v[i], depth + 1, seen, where);
        seen.delete(v);
        return;
      }
      if (proto !== Object.prototype && proto !== null) {
        throw new WriteError(
          `${where} contains a ${proto?.constructor?.name ?? "non-plain"} object; store plain JSON (convert Maps, Dates, class instances first)`,
        );
      }
      seen.add(v);
      for (const k of Object.keys(v)) check((v as Record<string, unknown>)[k], depth + 1, seen, where);
      seen.delete(v);
      return;
    }
    default:
      throw new WriteError(`${where} holds a ${typeof v}, which is not JSON`);
  }
}

/** Validates that `v` is plain JSON and returns its text, or throws WriteError. */
export function toJsonText(v: unknown, where: string): string {
  if (typeof v === "string") return JSON.stringify(v);
  check(v, 0, new Set(), where);
  return JSON.stringify(v);
}
