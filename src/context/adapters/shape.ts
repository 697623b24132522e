// Small structural helpers shared by the adapters: checking untrusted JSON and splitting a provider
// object into the fields we model and the `extra` we carry back verbatim.
import { FormatError } from "../errors.js";
import type { Extra } from "../messages.js";

export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function record(value: unknown, at: string, what: string): Json {
  if (!isRecord(value)) throw new FormatError(`expected ${what} to be an object, got ${kindOf(value)}`, at);
  return value;
}

export function str(obj: Json, key: string, at: string): string {
  const value = obj[key];
  if (typeof value !== "string") throw new FormatError(`expected "${key}" to be a string, got ${kindOf(value)}`, at);
  return value;
}

export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The fields of `obj` other than `known`, or undefined when there are none. Own keys only. */
export function extraOf(obj: Json, known: readonly string[]): Extra | undefined {
  let extra: Record<string, unknown> | undefined;
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    extra ??= {};
    // defineProperty so a "__proto__" key stays data, never a prototype change
    Object.defineProperty(extra, key, { value: obj[key], enumerable: true, writable: true, configurable: true });
  }
  return extra;
}

/** Builds an object from `extra` then `fields`; undefined fields are left out. */
export function build(extra: Extra | undefined, fields: Record<string, unknown>): Json {
  const out: Json = {};
  if (extra) for (const key of Object.keys(extra)) Object.defineProperty(out, key, { value: extra[key], enumerable: true, writable: true, configurable: true });
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value !== undefined) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Adds `extra`/`hints` to a neutral object only when present, keeping neutral messages minimal. */
export function withOptional<T extends object>(base: T, optional: Record<string, unknown>): T {
  for (const key of Object.keys(optional)) if (optional[key] !== undefined) (base as Record<string, unknown>)[key] = optional[key];
  return base;
}
