// A read-only view of a JSONL session as it is on disk right now, without taking the writer's lock:
// `spool serve` and `spool inspect` read sessions another process is still writing. A torn tail is
// ignored, never repaired from here (the writer owns the file).
import type { Value, ValueList } from "../address.js";
import { normalizeReadOptions } from "../read-options.js";
import { scopeKey, type Scope } from "../scope.js";
import type { ScopedState } from "../scoped-state.js";
import type { ListPage, ListReadOptions, StoreStats } from "../store.js";
import { loadSession } from "./replay.js";

export interface SessionSnapshot {
  get<T>(address: Value<T, Scope>): T | undefined;
  readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T>;
  stats(): StoreStats;
}

/** Reads through to `state` as it is at each call (a follower's state keeps growing). */
export function snapshotOf(state: ScopedState): SessionSnapshot {
  return {
    get<T>(address: Value<T, Scope>) {
      const json = state.getJson(scopeKey(address.scope), address.namespace, address.key);
      return json === undefined ? undefined : (JSON.parse(json) as T);
    },
    readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions) {
      return state.readList<T>(scopeKey(address.scope), address.namespace, address.key, normalizeReadOptions(options));
    },
    stats: () => state.stats(),
  };
}

export function readJsonlSnapshot(path: string): SessionSnapshot {
  return snapshotOf(loadSession(path, { repair: false }).state);
}
