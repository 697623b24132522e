// Plain-JSON helpers shared by the tracker and the appliers.

export type Container = Record<string, unknown> | unknown[];

export function isContainer(v: unknown): v is Container {
  return typeof v === "object" && v !== null;
}

/**
 * Define an own data property. Plain assignment would run an inherited setter — for a "__proto__" key it
 * would replace the prototype instead of creating a key.
 */
export function defineData(obj: object, key: string | number, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Deep copy of a value already known to be plain JSON. Own keys only; a "__proto__" key stays a key. */
export function cloneJson<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v;
  // map() and spread create own data properties (plain assignment could hit a setter someone planted on
  // Array.prototype or Object.prototype, or turn a "__proto__" key into a prototype). Spread copies an
  // object in one step; building it key by key was a fifth of a push-per-flush stream.
  if (Array.isArray(v)) return v.map(cloneJson) as T;
  const out: Record<string, unknown> = Object.getPrototypeOf(v) === null ? Object.assign(Object.create(null), v) : { ...v };
  for (const k of Object.keys(out)) {
    const x = out[k];
    // An own data property now, so assignment reaches no setter.
    if (typeof x === "object" && x !== null) out[k] = cloneJson(x);
    else if (x === undefined) delete out[k];
  }
  return out as T;
}

/** Structural equality under JSON semantics (key order ignored, undefined-valued keys absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const aa = Array.isArray(a);
  if (aa !== Array.isArray(b)) return false;
  if (aa) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let nx = 0;
  for (const k of Object.keys(x)) {
    if (x[k] === undefined) continue;
    nx++;
    if (!Object.hasOwn(y, k) || !jsonEqual(x[k], y[k])) return false;
  }
  let ny = 0;
  for (const k of Object.keys(y)) if (y[k] !== undefined) ny++;
  return nx === ny;
}
