// The in-memory session state shared by the memory backend and the JSONL backend's replay.
// Physical identity is (scope, namespace, key); values and lists are separate spaces.
import type { NormalReadOptions } from "./read-options.js";
import type { ListElement, ListPage, StoreStats } from "./store.js";
import type { PreparedWrite } from "./write.js";

interface StoredValue {
  seq: number;
  json: string;
}
/** Parallel arrays in ascending seq order: appends always carry the highest seq so far. */
interface StoredList {
  seqs: number[];
  jsons: string[];
  tags: (string | undefined)[];
}
interface ScopeData {
  values: Map<string, StoredValue>;
  lists: Map<string, StoredList>;
}

/** Length-prefixing makes the pair unambiguous whatever characters the names contain. */
function nameKey(ns: string, key: string): string {
  return `${ns.length}:${ns}${key}`;
}

/** First index whose seq is > s. */
function upperBound(seqs: readonly number[], s: number): number {
  let lo = 0;
  let hi = seqs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (seqs[mid]! <= s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class ScopedState {
  readonly #scopes = new Map<string, ScopeData>();

  #data(scope: string, create: true): ScopeData;
  #data(scope: string, create: false): ScopeData | undefined;
  #data(scope: string, create: boolean): ScopeData | undefined {
    let d = this.#scopes.get(scope);
    if (d === undefined && create) {
      d = { values: new Map(), lists: new Map() };
      this.#scopes.set(scope, d);
    }
    return d;
  }

  /** Applies one transaction whose first write has `seq`; write i gets seq + i. */
  apply(scope: string, seq: number, writes: readonly PreparedWrite[]): void {
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i]!;
      const s = seq + i;
      switch (w.op) {
        case "set":
          this.#data(scope, true).values.set(nameKey(w.ns, w.key), { seq: s, json: w.json });
          break;
        case "delete":
          this.#data(scope, false)?.values.delete(nameKey(w.ns, w.key));
          break;
        case "append": {
          const lists = this.#data(scope, true).lists;
          const k = nameKey(w.ns, w.key);
          let l = lists.get(k);
          if (l === undefined) {
            l = { seqs: [], jsons: [], tags: [] };
            lists.set(k, l);
          }
          l.seqs.push(s);
          l.jsons.push(w.json);
          l.tags.push(w.tag);
          break;
        }
        case "clear":
          this.#data(scope, false)?.lists.delete(nameKey(w.ns, w.key));
          break;
        case "retire":
          this.#scopes.delete(w.scope);
          break;
      }
    }
    const d = this.#scopes.get(scope);
    if (scope !== "" && d !== undefined && d.values.size === 0 && d.lists.size === 0) this.#scopes.delete(scope);
  }

  /** Drops a scope whole: what a retirement does to the state. */
  retire(scope: string): void {
    this.#scopes.delete(scope);
  }

  getJson(scope: string, ns: string, key: string): string | undefined {
    return this.#scopes.get(scope)?.values.get(nameKey(ns, key))?.json;
  }

  readList<T>(scope: string, ns: string, key: string, o: NormalReadOptions): ListPage<T> {
    const l = this.#scopes.get(scope)?.lists.get(nameKey(ns, key));
    if (l === undefined) return { elements: [] };
    const elements: ListElement<T>[] = [];
    const n = l.seqs.length;
    if (!o.desc) {
      let i = o.cursor === undefined ? 0 : upperBound(l.seqs, o.cursor);
      for (; i < n && elements.length < o.limit; i++) {
        const tag = l.tags[i];
        elements.push(element(l.seqs[i]!, l.jsons[i]!, tag));
        if (tag !== undefined && tag === o.stopAtTag) {
          i++;
          break;
        }
      }
      return i < n && elements.length > 0 ? { elements, cursor: elements[elements.length - 1]!.seq } : { elements };
    }
    let i = (o.cursor === undefined ? n : upperBound(l.seqs, o.cursor - 1)) - 1;
    for (; i >= 0 && elements.length < o.limit; i--) {
      const tag = l.tags[i];
      elements.push(element(l.seqs[i]!, l.jsons[i]!, tag));
      if (tag !== undefined && tag === o.stopAtTag) {
        i--;
        break;
      }
    }
    return i >= 0 && elements.length > 0 ? { elements, cursor: elements[elements.length - 1]!.seq } : { elements };
  }

  /** Records per scope (values plus list items): what a follower compares to see what was deleted. */
  recordCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [scope, d] of this.#scopes) {
      let n = d.values.size;
      for (const l of d.lists.values()) n += l.seqs.length;
      counts.set(scope, n);
    }
    return counts;
  }

  stats(): StoreStats {
    const d = this.#scopes.get("");
    let listElements = 0;
    for (const l of d?.lists.values() ?? []) listElements += l.seqs.length;
    return { values: d?.values.size ?? 0, lists: d?.lists.size ?? 0, listElements };
  }

  /** Every live record of every scope, one write each (scope "" is the session): what a resync rewrites. */
  *allRecords(): Generator<{ scope: string; seq: number; write: PreparedWrite }> {
    for (const scope of this.#scopes.keys()) for (const r of this.records(scope)) yield { scope, ...r };
  }

  /** Session-scope records in seq order, one write each: what a fork copies. */
  *sessionRecords(): Generator<{ seq: number; write: PreparedWrite }> {
    yield* this.records("");
  }

  /** One scope's live records in seq order, one write each: what a sidecar is rewritten as. */
  *records(scope: string): Generator<{ seq: number; write: PreparedWrite }> {
    const d = this.#scopes.get(scope);
    if (d === undefined) return;
    const out: { seq: number; write: PreparedWrite }[] = [];
    const split = (k: string): [string, string] => {
      const colon = k.indexOf(":");
      const len = Number(k.slice(0, colon));
      return [k.slice(colon + 1, colon + 1 + len), k.slice(colon + 1 + len)];
    };
    for (const [k, v] of d.values) {
      const [ns, key] = split(k);
      out.push({ seq: v.seq, write: { op: "set", ns, key, json: v.json } });
    }
    for (const [k, l] of d.lists) {
      const [ns, key] = split(k);
      for (let i = 0; i < l.seqs.length; i++) {
        out.push({ seq: l.seqs[i]!, write: { op: "append", ns, key, json: l.jsons[i]!, tag: l.tags[i] } });
      }
    }
    out.sort((a, b) => a.seq - b.seq);
    yield* out;
  }
}

function element<T>(seq: number, json: string, tag: string | undefined): ListElement<T> {
  return tag === undefined ? { seq, value: JSON.parse(json) as T } : { seq, value: JSON.parse(json) as T, tag };
}
