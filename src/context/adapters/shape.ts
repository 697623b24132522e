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

/**
 * Where an object's original key order is kept when `build` would not reproduce it. Prompt caches
 * hash bytes, and JSON bytes depend on key order: real clients write `{"tool_use_id":…,"type":…}`
 * or put `caller` first, so a rebuilt object must put its keys back where they were.
 */
export const KEY_ORDER = "spool:keys";

/**
 * The fields of `obj` other than `known`, or undefined when there are none. Own keys only. `known`
 * lists the modelled keys in the order `build` writes them; when the object's keys came in another
 * order, that order is recorded under KEY_ORDER so `build` restores it.
 */
export function extraOf(obj: Json, known: readonly string[]): Extra | undefined {
  let extra: Record<string, unknown> | undefined;
  const keys = Object.keys(obj);
  const extraKeys: string[] = [];
  for (const key of keys) {
    if (known.includes(key)) continue;
    extraKeys.push(key);
    extra ??= {};
    // defineProperty so a "__proto__" key stays data, never a prototype change
    Object.defineProperty(extra, key, { value: obj[key], enumerable: true, writable: true, configurable: true });
  }
  const expected = [...extraKeys, ...known.filter((key) => keys.includes(key))];
  // (an object that itself carries the marker's key keeps its value; only its order is not restored)
  if (!keys.includes(KEY_ORDER) && expected.some((key, i) => keys[i] !== key)) (extra ??= {})[KEY_ORDER] = keys;
  return extra;
}

/** Builds an object from `extra` then `fields`; undefined fields are left out; a recorded key order is restored. */
export function build(extra: Extra | undefined, fields: Record<string, unknown>): Json {
  const out: Json = {};
  const define = (key: string, value: unknown) => Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  const order = extra?.[KEY_ORDER];
  if (Array.isArray(order)) {
    // A field (even an undefined one, which means "leave out") wins over extra; the key order marker is never written.
    const own = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);
    const put = (key: string): void => {
      if (key === KEY_ORDER || own(out, key)) return;
      if (own(fields, key)) {
        if (fields[key] !== undefined) define(key, fields[key]);
      } else if (own(extra!, key)) define(key, extra![key]);
    };
    for (const key of order) if (typeof key === "string") put(key);
    for (const key of Object.keys(extra!)) put(key);
    for (const key of Object.keys(fields)) put(key);
    return out;
  }
  if (extra) for (const key of Object.keys(extra)) define(key, extra[key]);
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value !== undefined) define(key, value);
  }
  return out;
}

/** Adds `extra`/`hints` to a neutral object only when present, keeping neutral messages minimal. */
export function withOptional<T extends object>(base: T, optional: Record<string, unknown>): T {
  for (const key of Object.keys(optional)) if (optional[key] !== undefined) (base as Record<string, unknown>)[key] = optional[key];
  return base;
}

/**
 * A function call's `arguments` string as the input we model. The string is kept beside it as
 * `rawInput` when parsing does not give it back byte for byte (other spacing or key order, or not
 * JSON at all), so the call goes back to the provider exactly as the model wrote it.
 */
export function parseArguments(raw: string): { input: unknown; rawInput: string | undefined } {
  try {
    const input: unknown = JSON.parse(raw);
    return { input, rawInput: JSON.stringify(input) === raw ? undefined : raw };
  } catch {
    return { input: undefined, rawInput: raw };
  }
}
