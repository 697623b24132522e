// The change tracker: a proxy over plain JSON state that records *intent* (push is one splice, a string
// append is an append) into a pending window, and turns it into ops at flush.
//
// Positions, not identities, are replicated: every tracked container remembers the parents that hold it
// (links), and a write through a held proxy records one op per live position of its object. Array links
// cache their indices against the array's version, which moves only when indices shift, so pushing onto a
// long transcript never rescans it.
import { spliceInto } from "./apply.js";
import { NotJsonError, PathError, UnsafePathError } from "./errors.js";
import { cloneJson, defineData, isContainer, jsonEqual, type Container } from "./json.js";
import type { NonEmptyPath, Op, Seg } from "./ops.js";
import { LeafLane, PUSH, type Leaf } from "./lane.js";
import { PendingLog } from "./pending.js";
import { Rope } from "./rope.js";
import { RESERVED_SEGMENTS, assertSafePath } from "./validate.js";

export interface TrackOptions {
  /**
   * How far back (in UTF-16 units) a string's old tail is searched for the start of its new value;
   * default 1 MiB. A window slid by assignment is found as `t` + `a` only while it is within this.
   */
  readonly maxOverlapScan?: number;
}

export interface Tracker<T> {
  /** The tracked view. Assigning a new value makes the next flush a base (`r`); assigning it to itself rebases. */
  state: T;
  /** The raw object. Mutating it bypasses tracking. */
  readonly target: T;
  /** The ops recorded since the last flush. The first flush is always a base batch. */
  flush(): Op[];
  /**
   * Append `text` to the string at `path` and record it as an `a` op: no diff, O(text). For producers
   * that know what they changed (the output sink); assigning through `state` stays exact and checked.
   */
  append(path: NonEmptyPath, text: string): void;
  /** Drop the first `count` UTF-16 units of the string at `path`, recorded as a `t` op: O(1), no diff. */
  truncate(path: NonEmptyPath, count: number): void;
  /**
   * Assign `value` at `path` (its parent must exist) exactly as an assignment through `state` would —
   * same checks, same ops — without the proxy: for a producer that writes the same paths every flush
   * (the output sink's counters). Paths are remembered by identity, so pass the same array each time.
   */
  set(path: NonEmptyPath, value: unknown): void;
  /**
   * How many places in the state hold the container at `path`: 1, or more once it is aliased (0 when
   * no tracked container is there). A producer that writes the raw state itself and states its own ops
   * for it (the output sink) may do so only while what it writes has one place: an aliased container's
   * write is an op at each of its paths.
   */
  positions(path: NonEmptyPath): number;
  /** Drop pending ops; the next flush is a base batch (once). */
  rebase(): void;
  /** Accept pending changes locally without emitting them (existing replicas diverge, by design). */
  discard(): void;
  /** True after any write (even writes that cancel out) and before the first flush. */
  readonly dirty: boolean;
}

// A rolling window longer than the scan is sent whole on every flush: at the old 64 KiB, a 100 KB
// window slid by 32 chars cost 270 µs and 100 KB on the wire per flush, against 24 µs and 69 B within
// the scan. The scan bounds the worst case, repetitive text that verifies far before it fails
// (`"a".repeat(n)` against the same with one `b`): 1.2 ms per flush at 1 MB with this default, 6.8 ms
// at 4 MB with no bound; a slide of 1 MB is found in 0.12 ms.
const DEFAULT_OVERLAP_SCAN = 1 << 20;
// Past this many live pending entries or trie nodes the window becomes one base: it bounds the
// metadata a long structural burst (5000 × set/shift/push) can pile up before a flush.
const MAX_PENDING = 4096;
/** Link version meaning "keys not computed yet": the next lookup scans the parent. */
const UNKNOWN = -1;
/** Queued first placements before they are settled into the WeakMap regardless. */
const MAX_UNSETTLED = 4096;
/** Containers whose proxies `proxyOf` remembers without a lookup. */
const PROXY_CACHE = 4;
/** Paths remembered by identity for explicit edits and sets. */
const MAX_SLOTS = 8;
/** What `splice` returns when it removed nothing (callers that hand it out make a fresh array). */
const NONE_REMOVED = Object.freeze([]) as unknown as unknown[];
/** Never a proxy: what `rawArray` has seen before its first call. */
const NO_PROXY = {};
const MUTATORS = new Set(["push", "pop", "shift", "unshift", "splice", "sort", "reverse", "fill", "copyWithin"]);

/** A parent and key an explicit edit reached, by path identity (see `slotAt`). */
interface Slot {
  readonly path: NonEmptyPath;
  readonly segs: Seg[];
  readonly parent: Container;
  readonly key: Seg;
  readonly epoch: number;
  rope: Rope | undefined;
  /** The lane's slot for the same parent and key, when it has one (see `leafFor`). */
  leaf: Leaf | undefined;
}

interface Link {
  readonly parent: Container;
  keys: Seg[];
  /** For array parents: the parent's version the keys were computed at. */
  version: number;
}

interface Meta {
  proxy: object | undefined;
  links: Link[];
  /** Arrays only: bumped whenever element indices shift. */
  version: number;
  /** pathsOf's last answer, valid while no container has moved since (see `epoch`). */
  paths: Seg[][] | undefined;
  pathsEpoch: number;
}

function describe(v: unknown): string {
  if (typeof v === "function") return "a function";
  if (typeof v === "bigint") return "a BigInt";
  if (typeof v === "symbol") return "a symbol";
  if (typeof v === "number") return String(v);
  if (v === undefined) return "undefined";
  const proto = Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null;
  const name = proto?.constructor?.name;
  return name ? `a ${name}` : "a non-plain object";
}

/** Why a primitive is not JSON, or undefined when it is. */
function notJson(v: unknown): string | undefined {
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : `the number ${String(v)}`;
    case "object":
      if (v === null) return undefined;
  }
  return describe(v);
}

/** A dense array of `n` nulls whose elements are own data properties (no setter ran to make them). */
const nulls = (n: number): null[] => Array.from({ length: n }, () => null);

/** Canonical array index from a property key, or -1. */
function toIndex(key: string): number {
  const c = key.charCodeAt(0);
  if (c < 48 || c > 57 || (c === 48 && key.length > 1)) return -1;
  const n = Number(key);
  return Number.isSafeInteger(n) && n < 4294967295 && String(n) === key ? n : -1;
}

function toInteger(x: unknown): number {
  const n = Number(x);
  if (Number.isNaN(n)) return 0;
  return Math.trunc(n);
}

export function track<T extends object>(initial: T, options: TrackOptions = {}): Tracker<T> {
  const scan = options.maxOverlapScan ?? DEFAULT_OVERLAP_SCAN;
  const metas = new WeakMap<object, Meta>();
  const raws = new WeakMap<object, Container>();
  const log = new PendingLog();
  const lane = new LeafLane();
  let root: Container;
  let forceBase = true;
  let flushed = false;
  let dirty = true;
  // Bumped by every write that can move a container (place, remove, shift indices). A write of a
  // primitive over a primitive cannot, so the paths of its object stay valid: a burst of counter and
  // string writes does not walk the links again for each write.
  let epoch = 0;

  // Every adopted container is `placed` under the parent that first held it (null for the root). The
  // full Meta (proxy, links) is made only when the object is proxied or placed a second time, so a
  // pushed item that is never touched again costs little (a Meta per push was a third of W3's time).
  //
  // A first placement is not even put in the WeakMap at once: it is queued (in placement order) and
  // settled when something asks about positions — a Meta is made, a path walk meets an object `placed`
  // does not know, a root is set — or when the queue is full. A WeakMap.set of a young key costs
  // ~0.4 µs (the ephemeron write barrier), half of W3's push + flush; a queue entry costs next to
  // nothing. Until it settles, a queued object looks new to `walk`: placing it again re-checks its
  // subtree and queues it again, and settling turns the second entry into an alias link, which is what
  // an eager registration would have made of it. The queue holds its objects strongly, so at most
  // MAX_UNSETTLED removed objects outlive their removal until the next settle. The queue is two
  // parallel arrays (objects, their parents) reused from settle to settle, so a push makes no garbage
  // for it (it was a node object per placement). They are made full of nulls (`Array.from` defines its
  // elements; `fill` would assign them), so every write lands on an own element: a setter planted on
  // Array.prototype at that index never sees them (`push` onto an array, or a write into a hole, would
  // run it).
  const placed = new WeakMap<object, Container | null>();
  let queuedChild: (object | null)[] = nulls(16);
  let queuedParent: (Container | null)[] = nulls(16);
  let unsettledCount = 0;
  const settle = (): void => {
    const n = unsettledCount;
    // Zero first: settling never queues (relink only makes Metas), and a Meta made on the way must
    // not settle again.
    unsettledCount = 0;
    for (let i = 0; i < n; i++) {
      const child = queuedChild[i]!;
      const parent = queuedParent[i]!;
      queuedChild[i] = null;
      queuedParent[i] = null;
      if (!placed.has(child)) placed.set(child, parent);
      else relink(child, parent);
    }
  };
  const queuePlacement = (child: object, parent: Container): void => {
    const n = unsettledCount;
    if (n === queuedChild.length) {
      const children: (object | null)[] = nulls(2 * n);
      const parents: (Container | null)[] = nulls(2 * n);
      for (let i = 0; i < n; i++) {
        children[i] = queuedChild[i]!;
        parents[i] = queuedParent[i]!;
      }
      queuedChild = children;
      queuedParent = parents;
    }
    queuedChild[n] = child;
    queuedParent[n] = parent;
    unsettledCount = n + 1;
    if (n + 1 >= MAX_UNSETTLED) settle();
  };
  const metaOf = (raw: object): Meta => {
    let m = metas.get(raw);
    if (!m && unsettledCount > 0) {
      // Settling can make this very Meta (a queued second placement of `raw` relinks it).
      settle();
      m = metas.get(raw);
    }
    if (!m) {
      m = { proxy: undefined, links: [], version: 0, paths: undefined, pathsEpoch: -1 };
      metas.set(raw, m);
      const first = placed.get(raw);
      if (first) m.links.push({ parent: first, keys: [], version: UNKNOWN });
      // Every object with a Meta is in `placed` too (null: no first parent), so one lookup there
      // answers "tracked?".
      else if (first === undefined) placed.set(raw, null);
    }
    return m;
  };
  /** Whether `raw` has a position (settling the queue when `placed` alone does not know it). */
  const isTracked = (raw: object): boolean => placed.has(raw) || (unsettledCount > 0 && (settle(), placed.has(raw)));

  const unwrap = (v: unknown): unknown => (typeof v === "object" && v !== null ? (raws.get(v) ?? v) : v);

  // The last few containers proxied and their proxies (a proxy, once made, is its object's for good): a
  // producer reads the same paths flush after flush (`state.content[0].text`, `state.truncation.…`:
  // three containers a W1 flush), and a hit skips a WeakMap lookup (~100 instructions; four pointer
  // compares are a few). They hold PROXY_CACHE objects strongly until other containers are proxied.
  const cachedRaw: (object | null)[] = nulls(PROXY_CACHE);
  const cachedProxy: (object | null)[] = nulls(PROXY_CACHE);
  let nextCached = 0;
  const proxyOf = (raw: Container): object => {
    for (let i = 0; i < PROXY_CACHE; i++) if (cachedRaw[i] === raw) return cachedProxy[i]!;
    const m = metaOf(raw);
    if (!m.proxy) {
      m.proxy = new Proxy(raw, Array.isArray(raw) ? arrayHandler : objectHandler);
      raws.set(m.proxy, raw);
    }
    cachedRaw[nextCached] = raw;
    cachedProxy[nextCached] = m.proxy;
    nextCached = (nextCached + 1) % PROXY_CACHE;
    return m.proxy;
  };

  // ---- positions -------------------------------------------------------------------------------

  const liveKeys = (link: Link, child: object): Seg[] => {
    const parent = link.parent;
    if (Array.isArray(parent)) {
      const version = metaOf(parent).version;
      if (link.version !== version) {
        const keys: number[] = [];
        for (let i = 0; i < parent.length; i++) if (parent[i] === child) keys.push(i);
        link.keys = keys;
        link.version = version;
        return keys;
      }
      return keep(link, (k) => parent[k as number] === child);
    }
    if (link.version === UNKNOWN) {
      link.version = 0;
      link.keys = Object.keys(parent).filter((k) => (parent as Record<string, unknown>)[k] === child);
      return link.keys;
    }
    return keep(link, (k) => Object.hasOwn(parent, k) && (parent as Record<string, unknown>)[k as string] === child);
  };

  /** Drop keys that no longer hold the child; allocation-free when all still do (every write asks). */
  const keep = (link: Link, holds: (k: Seg) => boolean): Seg[] => {
    const keys = link.keys;
    for (let i = 0; i < keys.length; i++) {
      if (!holds(keys[i]!)) {
        link.keys = keys.filter(holds);
        return link.keys;
      }
    }
    return keys;
  };

  const addLink = (child: object, parent: Container, key: Seg): void => {
    if (!placed.has(child)) {
      // A first placement (or one not settled yet) gives a new object a position; no existing
      // object's paths change.
      queuePlacement(child, parent);
      return;
    }
    epoch++;
    // Placed before: an alias or a move. From now on its positions are tracked in full.
    const m = metaOf(child);
    const version = Array.isArray(parent) ? metaOf(parent).version : 0;
    for (const link of m.links) {
      if (link.parent !== parent) continue;
      if (link.version === version && !link.keys.includes(key)) link.keys.push(key);
      return;
    }
    m.links.push({ parent, keys: [key], version });
  };

  /** A settled second placement: its key may have shifted since, so the link rescans its parent. */
  const relink = (child: object, parent: Container): void => {
    epoch++;
    const m = metaOf(child);
    for (const link of m.links) {
      if (link.parent !== parent) continue;
      link.version = UNKNOWN;
      return;
    }
    m.links.push({ parent, keys: [], version: UNKNOWN });
  };

  /** Every current path of a tracked container (fresh arrays the caller may extend, unless `readOnly`). Empty when detached. */
  const pathsOf = (raw: object, readOnly = false): Seg[][] => {
    if (raw === root) return [[]];
    const known = metas.get(raw);
    if (known !== undefined && known.pathsEpoch === epoch) {
      const cached = known.paths!;
      // A caller that only records the paths (a splice, a whole-array set) shares the cached arrays:
      // nothing writes into them, and a new epoch makes new ones.
      if (readOnly) return cached;
      const copy: Seg[][] = new Array(cached.length);
      for (let i = 0; i < cached.length; i++) copy[i] = cached[i]!.slice();
      return copy;
    }
    const out = walkPaths(raw);
    const m = metas.get(raw);
    if (m !== undefined) {
      m.paths = out.map((p) => p.slice());
      m.pathsEpoch = epoch;
    }
    return out;
  };

  const walkPaths = (raw: object): Seg[][] => {
    if (raw === root) return [[]];
    if (!isTracked(raw)) return [];
    const m = metaOf(raw);
    const out: Seg[][] = [];
    let dead = false;
    for (const link of m.links) {
      const keys = liveKeys(link, raw);
      if (keys.length === 0) {
        dead = true;
        continue;
      }
      for (const k of keys)
        if (typeof k === "string" && RESERVED_SEGMENTS.has(k)) throw new UnsafePathError(k, "the object is reachable only through a reserved key");
      for (const p of walkPaths(link.parent)) {
        for (let i = 0; i < keys.length; i++) out.push(i === keys.length - 1 ? (p.push(keys[i]!), p) : [...p, keys[i]!]);
      }
    }
    if (dead) m.links = m.links.filter((l) => l.keys.length > 0);
    return out;
  };

  /** Raw containers on every live path from `raw` up to the root, `raw` included. */
  const ancestorsOf = (raw: object): Set<object> => {
    const out = new Set<object>();
    const visit = (o: object): void => {
      if (out.has(o)) return;
      out.add(o);
      if (o === root || !isTracked(o)) return;
      const m = metaOf(o);
      for (const link of m.links) if (liveKeys(link, o).length > 0) visit(link.parent);
    };
    visit(raw);
    return out;
  };

  // ---- adoption: JSON check, unwrapping, links ---------------------------------------------------

  // Adoption state, reused across calls: a push of a small object must not allocate a Set, a closure
  // and a path array per property (that showed as a third of W3's time, in GC).
  // The containers being walked, outermost first: an array (depth is small) is cheaper than a Set.
  const onStack: object[] = [];
  const at: Seg[] = [];
  let adoptParent: Container | null = null;
  let ancestors: Set<object> | undefined;

  const reject = (what: string, key?: Seg): never => {
    throw new NotJsonError(key === undefined ? [...at] : [...at, key], what);
  };

  const checkChild = (node: Container, key: Seg, c: unknown): void => {
    const raw = unwrap(c);
    if (raw !== c) defineData(node, key, raw);
    if (isContainer(raw)) {
      at.push(key);
      walk(raw);
      at.pop();
      addLink(raw, node, key);
    } else {
      const bad = notJson(raw);
      if (bad) reject(bad, key);
    }
  };

  const walk = (node: Container): void => {
    if (onStack.includes(node)) reject("a cycle");
    // `placed` alone, not isTracked: a queued placement looks new here (see `settle`), and settling
    // on every push would cost what the queue saves.
    if (placed.has(node)) {
      // Already tracked: its subtree was checked when it was adopted. It only has to stay acyclic here.
      if (adoptParent) {
        ancestors ??= ancestorsOf(adoptParent);
        if (ancestors.has(node)) reject("a cycle (the value contains the object it is being put into)");
      }
      return;
    }
    if (!Object.isExtensible(node)) reject("a frozen or non-extensible object");
    onStack.push(node);
    if (Array.isArray(node)) {
      // A dense array without extra properties has exactly its indices plus "length" as own keys.
      if (Reflect.ownKeys(node).length !== node.length + 1) reject("a sparse array or an array with extra properties");
      for (let i = 0; i < node.length; i++) {
        const desc = Object.getOwnPropertyDescriptor(node, i)!;
        if (!("value" in desc)) reject("an accessor property", i);
        if (desc.value === undefined) reject("an undefined array element (use null)", i);
        checkChild(node, i, desc.value);
      }
    } else {
      const proto = Object.getPrototypeOf(node);
      if (proto !== Object.prototype && proto !== null) reject(describe(node));
      const keys = Object.keys(node);
      // Symbol keys and non-enumerable properties would not replicate: every own key must be an
      // enumerable string. Two counts instead of Reflect.ownKeys, which has no fast path (170 ns
      // for a two-key object against 50 ns for both of these).
      if (Object.getOwnPropertyNames(node).length !== keys.length || Object.getOwnPropertySymbols(node).length !== 0) {
        reject("an object with symbol keys or non-enumerable properties");
      }
      for (const k of keys) {
        const desc = Object.getOwnPropertyDescriptor(node, k)!;
        if (!("value" in desc)) reject("an accessor (getter/setter) property", k);
        if (desc.value !== undefined) checkChild(node, k, desc.value);
      }
    }
    onStack.pop();
  };

  /**
   * `walk` and `cloneJson` in one pass for a plain object whose own properties are all enumerable data
   * properties holding JSON primitives: its copy for the batch, or undefined when the object needs the
   * general walk (a container or undefined value, or anything the walk rejects: it then says why). Such
   * an object cannot be an ancestor of anything, so no cycle check is needed, and it links no children.
   * One descriptor per property, as the walk reads them (a getter is never called).
   */
  const cloneFlat = (node: object): Record<string, unknown> | undefined => {
    if (!Object.isExtensible(node) || Object.getPrototypeOf(node) !== Object.prototype) return undefined;
    const names = Object.getOwnPropertyNames(node);
    if (Object.getOwnPropertySymbols(node).length !== 0) return undefined;
    for (let i = 0; i < names.length; i++) {
      const desc = Object.getOwnPropertyDescriptor(node, names[i]!)!;
      // An accessor's descriptor has no value: undefined, which takes the general walk below.
      if (desc.enumerable !== true) return undefined;
      const v: unknown = desc.value;
      const kind = typeof v;
      if (kind === "string" || kind === "boolean" || v === null || (kind === "number" && Number.isFinite(v))) continue;
      return undefined;
    }
    // Spread defines own data properties (no setter on Object.prototype runs; "__proto__" stays a key).
    return { ...(node as Record<string, unknown>) };
  };

  /**
   * Check that `value` is plain JSON and can live under `parent` without a cycle, replace nested
   * proxies by their raw objects, and register links for every container in it. Returns the raw value.
   */
  const adopt = (value: unknown, parent: Container | null, key: Seg | undefined): unknown => {
    const v = unwrap(value);
    if (!isContainer(v)) {
      const bad = notJson(v);
      if (bad) throw new NotJsonError(key === undefined ? [] : [key], bad);
      return v;
    }
    adoptParent = parent;
    if (key !== undefined) at.push(key);
    try {
      walk(v);
    } finally {
      // Pops, not `length = 0`: a length store goes through a setter builtin, ~6% of a push-per-flush
      // stream for two stores that a walk which returned normally leaves with at most one entry.
      while (onStack.length > 0) onStack.pop();
      while (at.length > 0) at.pop();
      adoptParent = null;
      ancestors = undefined;
    }
    return v;
  };

  // ---- recording -------------------------------------------------------------------------------

  const clearPending = (): void => {
    log.clear();
    lane.clear();
  };

  /** Before anything is recorded in the log: the lane's slots go first, in order (see lane.ts). */
  const spill = (): void => {
    if (lane.size > 0) lane.spillInto(log);
  };

  /**
   * The lane slot for `parent[key]` (`leafFresh` says whether this window opened it now), or undefined
   * when the write must go to the log: something is pending there, the lane is full, or the slot's
   * paths are from before a container moved.
   */
  let leafFresh = false;
  const leafFor = (parent: Container, key: Seg, slot?: Slot): Leaf | undefined => {
    if (!log.empty) return undefined;
    // An explicit edit's slot remembers its lane slot: no scan while the lane keeps it.
    let leaf = slot?.leaf;
    if (leaf === undefined || !leaf.kept) leaf = lane.find(parent, key);
    if (leaf !== undefined && leaf.active) {
      leafFresh = false;
      return leaf.epoch === epoch ? leaf : undefined;
    }
    if (lane.full) return undefined;
    let paths: Seg[][] | undefined;
    if (leaf === undefined || leaf.epoch !== epoch) {
      paths = pathsOf(parent);
      for (const p of paths) p.push(key);
    }
    if (lane.insidePushed(paths ?? leaf!.paths)) return undefined;
    leafFresh = true;
    leaf = lane.open(leaf, parent, key, paths, epoch);
    if (slot !== undefined) slot.leaf = leaf;
    return leaf;
  };

  /** A primitive or string put over a primitive, a string or nothing: recorded in the lane when it can be. */
  const recordLeaf = (parent: Container, key: Seg, old: unknown, v: unknown, slot: Slot | undefined): boolean => {
    const leaf = leafFor(parent, key, slot);
    if (leaf === undefined) return false;
    if (typeof v === "string" && typeof old === "string") return lane.assign(leaf, old, v, leafFresh);
    lane.set(leaf, v);
    return true;
  };

  /**
   * Items pushed onto the end of `t` (adopted already), recorded in the lane when it can take them:
   * false when the log must (something is pending there, the lane is full, or its slot for the array
   * has paths from before a container moved).
   */
  const recordPush = (t: unknown[], index: number, items: unknown[], paths: Seg[][], copy: Record<string, unknown> | undefined): boolean => {
    if (!log.empty) return false;
    let leaf = lane.find(t, PUSH);
    if (leaf !== undefined && leaf.active) {
      if (leaf.epoch !== epoch) return false;
    } else {
      if (lane.full) return false;
      const fresh = leaf === undefined || leaf.epoch !== epoch;
      // An array inside items pushed in this window: the log folds the push into them.
      if (lane.insidePushed(fresh ? paths : leaf!.paths)) return false;
      leaf = lane.open(leaf, t, PUSH, fresh ? paths : undefined, epoch);
    }
    lane.push(leaf, index, copy !== undefined ? [copy] : cloneJson(items));
    return true;
  };

  const afterRecord = (): void => {
    if (log.live > MAX_PENDING || log.nodes > MAX_PENDING) {
      clearPending();
      forceBase = true;
    }
  };

  const recordValue = (path: Seg[], old: unknown, next: unknown): void => {
    if (typeof next === "string" && typeof old === "string") log.string(path, old, next);
    else if (isContainer(old) && isContainer(next) && Array.isArray(old) === Array.isArray(next)) {
      if (Array.isArray(old)) diffArray(path, old, next as unknown[]);
      else diffObject(path, old as Record<string, unknown>, next as Record<string, unknown>);
    } else log.set(path, cloneJson(next));
  };

  const diffObject = (path: Seg[], old: Record<string, unknown>, next: Record<string, unknown>): void => {
    const oldKeys = Object.keys(old);
    const nextKeys = Object.keys(next);
    // A diff cannot walk through a reserved key, so the nearest safe parent is set whole.
    if (oldKeys.some((k) => RESERVED_SEGMENTS.has(k)) || nextKeys.some((k) => RESERVED_SEGMENTS.has(k))) {
      log.set(path, cloneJson(next));
      return;
    }
    for (const k of nextKeys) {
      const nv = next[k];
      if (nv === undefined) continue;
      const ov = Object.hasOwn(old, k) ? old[k] : undefined;
      if (ov === nv) continue;
      if (ov === undefined) log.set([...path, k], cloneJson(nv));
      else recordValue([...path, k], ov, nv);
    }
    for (const k of oldKeys) {
      if (old[k] !== undefined && (!Object.hasOwn(next, k) || next[k] === undefined)) log.delete([...path, k]);
    }
  };

  const diffArray = (path: Seg[], old: readonly unknown[], next: readonly unknown[]): void => {
    const ol = old.length;
    const nl = next.length;
    if (ol === nl) {
      for (let i = 0; i < nl; i++) if (old[i] !== next[i]) recordValue([...path, i], old[i], next[i]);
      return;
    }
    const min = Math.min(ol, nl);
    let pre = 0;
    while (pre < min && jsonEqual(old[pre], next[pre])) pre++;
    let suf = 0;
    while (suf < min - pre && jsonEqual(old[ol - 1 - suf], next[nl - 1 - suf])) suf++;
    if (pre + suf >= min) {
      const remove = ol - pre - suf;
      if (pre === 0 && remove === ol) log.set(path, cloneJson(next));
      else log.splice(path, pre, remove, cloneJson(next.slice(pre, nl - suf)));
      return;
    }
    for (let i = 0; i < min; i++) if (old[i] !== next[i]) recordValue([...path, i], old[i], next[i]);
    if (nl > ol) log.splice(path, ol, 0, cloneJson(next.slice(ol)));
    else log.splice(path, nl, ol - nl, []);
  };

  /** Record `raw` (an array, already mutated) as a whole at each of its positions. */
  const recordWhole = (raw: unknown[]): void => {
    if (forceBase) return;
    spill();
    for (const p of pathsOf(raw, true)) {
      if (p.length === 0) {
        clearPending();
        forceBase = true;
        return;
      }
      log.set(p, cloneJson(raw));
    }
    afterRecord();
  };

  // ---- object writes -----------------------------------------------------------------------------

  const checkKey = (key: string | symbol): string => {
    if (typeof key === "symbol") throw new NotJsonError([], `a symbol key (${String(key)})`);
    // Every reserved segment starts with "_", "c" or "p": any other key needs no Set lookup.
    const c = key.charCodeAt(0);
    if ((c === 95 || c === 99 || c === 112) && RESERVED_SEGMENTS.has(key))
      throw new UnsafePathError(key, "reserved segments cannot be written through the tracker");
    return key;
  };

  /** `slot`: the explicit set's remembered slot, when it comes from `set(path, value)`. */
  const setProperty = (t: Record<string, unknown>, key: string, value: unknown, slot?: Slot): boolean => {
    dirty = true;
    const had = Object.hasOwn(t, key);
    const old = had ? t[key] : undefined;
    if (value === undefined) return deleteProperty(t, key);
    const v = adopt(value, t, key);
    // Equal strings of equal length would be compared char by char (and a cons string flattened) only
    // to find a no-op that the flush-time diff finds anyway.
    if (typeof v !== "string" && had && old === v) return true;
    if (isContainer(old)) epoch++;
    // A leaf write (a counter, a status string) goes to the lane; the rest, and every write under a
    // pending base (which still checks the object's paths), to the log.
    if (forceBase || isContainer(v) || isContainer(old) || !recordLeaf(t, key, old, v, slot)) {
      const paths = pathsOf(t);
      if (!forceBase) {
        spill();
        for (const p of paths) {
          p.push(key);
          if (old === undefined) log.set(p, cloneJson(v));
          else recordValue(p, old, v);
        }
        afterRecord();
      }
    }
    // An own data property can be assigned directly; a new key must not reach an inherited setter.
    if (had) t[key] = v;
    else defineData(t, key, v);
    if (isContainer(v)) addLink(v, t, key);
    return true;
  };

  const deleteProperty = (t: Record<string, unknown>, key: string): boolean => {
    dirty = true;
    if (!Object.hasOwn(t, key)) return true;
    const was = t[key];
    if (isContainer(was)) epoch++;
    const paths = pathsOf(t);
    if (!forceBase && was !== undefined) {
      spill();
      for (const p of paths) {
        p.push(key);
        log.delete(p);
      }
      afterRecord();
    }
    delete t[key];
    return true;
  };

  const refuse = (what: string) => (): never => {
    throw new TypeError(`${what} is not supported on tracked state: it cannot be expressed as JSON ops`);
  };

  const objectHandler: ProxyHandler<Record<string, unknown>> = {
    get(t, key) {
      const v = (t as Record<string | symbol, unknown>)[key];
      if (typeof v === "object" && v !== null && typeof key === "string" && Object.hasOwn(t, key)) return proxyOf(v as Container);
      return v;
    },
    set(t, key, value) {
      return setProperty(t, checkKey(key), value);
    },
    deleteProperty(t, key) {
      return deleteProperty(t, checkKey(key));
    },
    defineProperty: refuse("Object.defineProperty"),
    setPrototypeOf: refuse("Object.setPrototypeOf"),
    preventExtensions: refuse("Object.preventExtensions (and freeze/seal)"),
  };

  // ---- array writes ------------------------------------------------------------------------------

  /** `items` is a fresh array owned by the caller (rest arguments or a literal): adopted in place. */
  const splice = (t: unknown[], index: number, remove: number, items: unknown[]): unknown[] => {
    dirty = true;
    const len = t.length;
    // A lone plain object of primitives (a transcript entry) is checked and copied for the batch in one
    // pass; anything else takes the general walk, and the batch's copy is made when it is recorded.
    let copy: Record<string, unknown> | undefined;
    if (items.length === 1) {
      const item = items[0];
      if (item === undefined) throw new NotJsonError([index], "an undefined array element (use null)");
      const raw = unwrap(item);
      if (isContainer(raw) && !Array.isArray(raw)) copy = cloneFlat(raw);
      items[0] = copy !== undefined ? raw : adopt(item, t, index);
    } else {
      for (let j = 0; j < items.length; j++) {
        const item = items[j];
        if (item === undefined) throw new NotJsonError([index + j], "an undefined array element (use null)");
        items[j] = adopt(item, t, index + j);
      }
      if (remove === 0 && items.length === 0) return NONE_REMOVED;
    }
    const paths = pathsOf(t, true);
    // Removing elements or shifting indices moves existing containers; appending at the end does not.
    if (remove > 0 || index < len) epoch++;
    if (!forceBase && !(remove === 0 && index === len && recordPush(t, index, items, paths, copy))) {
      spill();
      const fullCover = len > 0 && index === 0 && remove === len;
      for (const p of paths) {
        if (fullCover && p.length === 0) {
          clearPending();
          forceBase = true;
          break;
        }
        if (fullCover) log.set(p, cloneJson(items));
        else log.splice(p, index, remove, cloneJson(items));
      }
      afterRecord();
    }
    const removed = remove === 0 ? NONE_REMOVED : t.slice(index, index + remove);
    // One item pushed without a spread: the optimising compiler inlines that call.
    if (remove === 0 && index === len && items.length === 1) t.push(items[0]);
    else if (remove === 0 && index === len && items.length <= 10_000) t.push(...items);
    else spliceInto(t, index, remove, items);
    if (remove !== items.length && index + remove < len) metaOf(t).version++;
    for (let j = 0; j < items.length; j++) {
      const item = items[j];
      if (isContainer(item)) addLink(item, t, index + j);
    }
    return removed;
  };

  const setElement = (t: unknown[], i: number, value: unknown): boolean => {
    if (value === undefined) throw new NotJsonError([i], "an undefined array element (use null, or splice to remove)");
    const len = t.length;
    if (i > len) throw new TypeError(`cannot write index ${i} of an array of ${len}: it would leave holes (arrays must stay dense)`);
    if (i === len) {
      splice(t, len, 0, [value]);
      return true;
    }
    dirty = true;
    const old = t[i];
    const v = adopt(value, t, i);
    if (old === v) return true;
    if (isContainer(old)) epoch++;
    const paths = pathsOf(t);
    if (!forceBase) {
      spill();
      for (const p of paths) {
        p.push(i);
        recordValue(p, old, v);
      }
      afterRecord();
    }
    defineData(t, i, v);
    if (isContainer(v)) addLink(v, t, i);
    return true;
  };

  const setLength = (t: unknown[], value: unknown): boolean => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`invalid array length ${String(value)}`);
    const len = t.length;
    if (n < len) splice(t, n, len - n, []);
    else if (n > len) splice(t, len, 0, new Array<null>(n - len).fill(null));
    return true;
  };

  // The last tracked array a mutator was called on, by its proxy (see `proxyOf`).
  let lastArrayProxy: unknown = NO_PROXY;
  let lastArray: unknown[] = [];
  const rawArray = (self: unknown): unknown[] => {
    if (self === lastArrayProxy) return lastArray;
    const t = unwrap(self);
    if (!Array.isArray(t) || t === self) throw new TypeError("tracked array method called on something that is not a tracked array");
    lastArrayProxy = self;
    lastArray = t;
    return t;
  };

  const mutators: Record<string, (this: unknown, ...args: unknown[]) => unknown> = {
    push(...items) {
      const t = rawArray(this);
      splice(t, t.length, 0, items);
      return t.length;
    },
    pop() {
      const t = rawArray(this);
      return t.length === 0 ? undefined : splice(t, t.length - 1, 1, [])[0];
    },
    shift() {
      const t = rawArray(this);
      return t.length === 0 ? undefined : splice(t, 0, 1, [])[0];
    },
    unshift(...items) {
      const t = rawArray(this);
      splice(t, 0, 0, items);
      return t.length;
    },
    splice(...args) {
      const t = rawArray(this);
      if (args.length === 0) return [];
      const len = t.length;
      const rel = toInteger(args[0]);
      const start = rel < 0 ? Math.max(len + rel, 0) : Math.min(rel, len);
      const remove = args.length === 1 ? len - start : Math.min(Math.max(toInteger(args[1]), 0), len - start);
      const removed = splice(t, start, remove, args.slice(2));
      return removed === NONE_REMOVED ? [] : removed;
    },
    sort(compare) {
      const t = rawArray(this);
      dirty = true;
      t.sort(compare as ((a: unknown, b: unknown) => number) | undefined);
      metaOf(t).version++;
      epoch++;
      recordWhole(t);
      return this;
    },
    reverse() {
      const t = rawArray(this);
      dirty = true;
      t.reverse();
      metaOf(t).version++;
      epoch++;
      recordWhole(t);
      return this;
    },
    fill(value, start, end) {
      const t = rawArray(this);
      dirty = true;
      if (value === undefined) throw new NotJsonError([], "an undefined array element (use null)");
      const v = adopt(value, t, undefined);
      t.fill(v, start as number | undefined, end as number | undefined);
      metaOf(t).version++;
      epoch++;
      if (isContainer(v)) for (let i = 0; i < t.length; i++) if (t[i] === v) addLink(v, t, i);
      recordWhole(t);
      return this;
    },
    copyWithin(target, start, end) {
      const t = rawArray(this);
      dirty = true;
      t.copyWithin(target as number, start as number, end as number | undefined);
      metaOf(t).version++;
      epoch++;
      recordWhole(t);
      return this;
    },
  };

  const arrayHandler: ProxyHandler<unknown[]> = {
    get(t, key) {
      if (typeof key === "string") {
        // An index (the common read) is never a mutator's name: no Set lookup for it.
        const c = key.charCodeAt(0);
        if (!(c >= 48 && c <= 57) && MUTATORS.has(key)) return mutators[key];
        const v = (t as unknown as Record<string, unknown>)[key];
        if (typeof v === "object" && v !== null && Object.hasOwn(t, key)) return proxyOf(v as Container);
        return v;
      }
      return (t as unknown as Record<symbol, unknown>)[key];
    },
    set(t, key, value) {
      if (typeof key === "symbol") throw new NotJsonError([], `a symbol key (${String(key)}) on an array`);
      if (key === "length") return setLength(t, value);
      const i = toIndex(key);
      if (i < 0) throw new TypeError(`cannot set property ${JSON.stringify(key)} on a tracked array: arrays carry only elements`);
      return setElement(t, i, value);
    },
    deleteProperty(_t, key) {
      throw new TypeError(`cannot delete element ${String(key)} of a tracked array: it would leave a hole; use splice()`);
    },
    defineProperty: refuse("Object.defineProperty"),
    setPrototypeOf: refuse("Object.setPrototypeOf"),
    preventExtensions: refuse("Object.preventExtensions (and freeze/seal)"),
  };

  // ---- explicit string edits ---------------------------------------------------------------------

  // Slots resolved by path identity: a producer edits the same few paths over and over, and while no
  // container has moved (epoch) the walk from the root would find the same parents again. A slot also
  // keeps its string's rope, so a hit costs no lookup and no allocation.
  const slots: Slot[] = [];
  let nextSlot = 0;
  const sameSegs = (a: readonly Seg[], b: readonly Seg[]): boolean => {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  };
  /** The parent and key `path` names (the parent must exist; the key need not). */
  const slotAt = (path: NonEmptyPath): Slot => {
    for (let i = 0; i < slots.length; i++) {
      const c = slots[i]!;
      if (c.path === path && c.epoch === epoch && sameSegs(c.segs, path)) return c;
    }
    const [parent, key] = resolveParent(path);
    const slot: Slot = { path, segs: [...path], parent, key, epoch, rope: undefined, leaf: undefined };
    // Defined, not pushed: a setter planted on Array.prototype must not see the tracker's own arrays.
    defineData(slots, nextSlot, slot);
    nextSlot = (nextSlot + 1) % MAX_SLOTS;
    return slot;
  };
  /** The own string property at `path`; a clear error when there is none. */
  const stringSlot = (path: NonEmptyPath): Slot => {
    const slot = slotAt(path);
    const node = slot.parent;
    const seg = slot.key;
    const has = Array.isArray(node) ? (seg as number) < node.length : Object.hasOwn(node, typeof seg === "string" ? seg : String(seg));
    if (!has) throw new PathError(path, `nothing at ${JSON.stringify(path)}`);
    const value = (node as Record<Seg, unknown>)[seg];
    if (typeof value !== "string")
      throw new PathError(path, `expected a string, found ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`);
    return slot;
  };
  const resolveParent = (path: NonEmptyPath): [Container, Seg] => {
    assertSafePath(path);
    if (path.length === 0) throw new PathError([], "an explicit edit needs a path below the root");
    let node: unknown = root;
    for (let i = 0; i < path.length; i++) {
      if (!isContainer(node)) throw new PathError(path, `${JSON.stringify(path.slice(0, i))} is not an object or array`);
      const seg = path[i]!;
      if (Array.isArray(node) && (typeof seg !== "number" || !Number.isSafeInteger(seg) || seg < 0)) {
        throw new PathError(path, `${JSON.stringify(path.slice(0, i))} is an array: ${JSON.stringify(seg)} is not an index`);
      }
      if (i === path.length - 1) return [node, seg];
      const has = Array.isArray(node) ? (seg as number) < node.length : Object.hasOwn(node, String(seg));
      if (!has) throw new PathError(path, `nothing at ${JSON.stringify(path.slice(0, i + 1))}`);
      node = (node as Record<Seg, unknown>)[seg];
    }
    throw new PathError(path, "unreachable");
  };

  /** `set(path, value)`: an assignment at `path` without a proxy (the same checks, the same ops). */
  const setAt = (path: NonEmptyPath, value: unknown): void => {
    const slot = slotAt(path);
    const key = slot.key;
    // A number or boolean over a number or boolean at a slot the lane keeps (a producer's counter, once
    // per flush): what setProperty would do, without its general checks (two counters set and flushed:
    // ~3,000 → ~2,600 instructions). A slot not yet written in this window is opened here only while no
    // push is pending in the lane, so the general path decides whether it lies inside pushed items.
    const leaf = slot.leaf;
    if (leaf !== undefined && leaf.kept && leaf.epoch === epoch && !forceBase && log.empty && typeof key === "string") {
      const t = slot.parent as Record<string, unknown>;
      const old = t[key];
      const kind = typeof value;
      if (
        (kind === "boolean" || (kind === "number" && Number.isFinite(value))) &&
        (typeof old === "number" || typeof old === "boolean") &&
        Object.hasOwn(t, key) &&
        (leaf.active || (!lane.full && lane.pushing === 0))
      ) {
        dirty = true;
        if (old === value) return;
        if (!leaf.active) {
          leafFresh = true;
          lane.open(leaf, t, key, undefined, epoch);
        }
        lane.set(leaf, value);
        t[key] = value;
        return;
      }
    }
    if (Array.isArray(slot.parent)) setElement(slot.parent, key as number, value);
    else setProperty(slot.parent, typeof key === "string" ? key : String(key), value, slot);
  };

  /** Record an explicit edit of the slot (`before` → `after`: `text` appended, or `drop` units cut) and store it. */
  const editString = (slot: Slot, before: string, after: string, text: string, drop: number): void => {
    dirty = true;
    if (!forceBase) {
      const leaf = leafFor(slot.parent, slot.key, slot);
      if (leaf !== undefined) lane.edit(leaf, before, after, text, drop, leafFresh);
      else {
        spill();
        for (const p of pathsOf(slot.parent)) {
          p.push(slot.key);
          if (drop === 0) log.append(p, before, after, text);
          else log.truncate(p, before, after, drop);
        }
        afterRecord();
      }
    }
    // The slot is an own data property (stringSlot checked), so plain assignment reaches no setter.
    (slot.parent as Record<Seg, unknown>)[slot.key] = after;
  };

  // A string edited explicitly is kept as a Rope (no copy per edit), found by its slot and remembered
  // per parent and key while nothing else writes the string.
  const ropes = new WeakMap<Container, Map<Seg, Rope>>();
  const ropeOf = (slot: Slot, value: string): Rope => {
    // A different value means something else wrote the slot since: start over from it.
    if (slot.rope !== undefined && slot.rope.value === value) return slot.rope;
    let byKey = ropes.get(slot.parent);
    if (!byKey) ropes.set(slot.parent, (byKey = new Map()));
    let r = byKey.get(slot.key);
    if (!r || r.value !== value) {
      r = new Rope(value);
      byKey.set(slot.key, r);
    }
    slot.rope = r;
    return r;
  };

  const appendText = (path: NonEmptyPath, text: string): void => {
    if (typeof text !== "string") throw new TypeError(`append() takes a string, got ${describe(text)}`);
    const slot = stringSlot(path);
    if (text.length === 0) return;
    const before = (slot.parent as Record<Seg, string>)[slot.key]!;
    const r = ropeOf(slot, before);
    r.append(text);
    editString(slot, before, r.value, text, 0);
  };

  const truncateText = (path: NonEmptyPath, count: number): void => {
    const slot = stringSlot(path);
    const before = (slot.parent as Record<Seg, string>)[slot.key]!;
    if (!Number.isSafeInteger(count) || count < 0 || count > before.length) {
      throw new RangeError(`truncate() count must be an integer from 0 to the string's length ${before.length}, got ${String(count)}`);
    }
    if (count === 0) return;
    const r = ropeOf(slot, before);
    r.drop(count);
    editString(slot, before, r.value, "", count);
  };

  // ---- the tracker -------------------------------------------------------------------------------

  /** The root's proxy, as `state` hands it out. */
  let rootProxy: object | undefined;
  const setRoot = (value: unknown): void => {
    const raw = unwrap(value);
    if (!isContainer(raw)) throw new TypeError(`tracked state must be an object or array, got ${raw === null ? "null" : typeof raw}`);
    adopt(raw, null, undefined);
    if (!isTracked(raw)) placed.set(raw, null);
    root = raw;
    rootProxy = undefined;
    epoch++;
  };

  setRoot(initial);

  const core: TrackerCore<T> = {
    flush() {
      dirty = false;
      flushed = true;
      if (forceBase) {
        forceBase = false;
        clearPending();
        return [["r", cloneJson(root)]];
      }
      if (lane.size > 0 && log.empty) return lane.drain(scan);
      spill();
      return log.drain(scan);
    },
    append: appendText,
    truncate: truncateText,
    set: setAt,
    positions(path) {
      assertSafePath(path);
      let node: unknown = root;
      for (const seg of path) {
        if (!isContainer(node) || !Object.hasOwn(node, seg)) return 0;
        node = (node as Record<Seg, unknown>)[seg];
      }
      return isContainer(node) && isTracked(node) ? pathsOf(node, true).length : 0;
    },
    rebase() {
      dirty = true;
      clearPending();
      forceBase = true;
    },
    discard() {
      dirty = false;
      clearPending();
      if (flushed) forceBase = false;
    },
    getState: () => (rootProxy ??= proxyOf(root)) as T,
    setState(next) {
      dirty = true;
      if (unwrap(next) !== root) setRoot(next);
      clearPending();
      lane.clear(true);
      forceBase = true;
    },
    getTarget: () => root as T,
    isDirty: () => dirty,
  };
  return new TrackerFace(core);
}

/** What one tracker does, as closures over its state (`track`); `TrackerFace` hands it out. */
interface TrackerCore<T> extends Omit<Tracker<T>, "state" | "target" | "dirty"> {
  getState(): T;
  setState(next: T): void;
  getTarget(): T;
  isDirty(): boolean;
}

// The tracker as handed out: its accessors live on this one prototype, so every tracker has the same
// shape. Accessors defined on each tracker object, with getters of its own, gave every tracker a map of
// its own, and code that reads `dirty` or `target` (the output sink, on every write) went polymorphic
// as soon as a second tracker existed (+550 instructions of LoadIC a sink write with two, cachegrind).
// (An object literal with a getter is made in dictionary mode: every call was a hash lookup.)
class TrackerFace<T> implements Tracker<T> {
  readonly #core: TrackerCore<T>;
  constructor(core: TrackerCore<T>) {
    this.#core = core;
  }
  get state(): T {
    return this.#core.getState();
  }
  set state(next: T) {
    this.#core.setState(next);
  }
  get target(): T {
    return this.#core.getTarget();
  }
  get dirty(): boolean {
    return this.#core.isDirty();
  }
  flush(): Op[] {
    return this.#core.flush();
  }
  append(path: NonEmptyPath, text: string): void {
    this.#core.append(path, text);
  }
  truncate(path: NonEmptyPath, count: number): void {
    this.#core.truncate(path, count);
  }
  set(path: NonEmptyPath, value: unknown): void {
    this.#core.set(path, value);
  }
  positions(path: NonEmptyPath): number {
    return this.#core.positions(path);
  }
  rebase(): void {
    this.#core.rebase();
  }
  discard(): void {
    this.#core.discard();
  }
}
