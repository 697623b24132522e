// Reads served from an in-memory ScopedState: the backends that keep the session in memory (JSONL
// replay, PostgreSQL) and the read-only snapshots answer get/readList exactly alike through these.
import type { Value, ValueList } from "./address.js";
import type { SessionSnapshot } from "./jsonl/snapshot.js";
import { normalizeReadOptions } from "./read-options.js";
import { scopeKey, type Scope } from "./scope.js";
import type { ScopedState } from "./scoped-state.js";
import type { ListPage, ListReadOptions } from "./store.js";

export function getFromState<T>(state: ScopedState, address: Value<T, Scope>): T | undefined {
  const json = state.getJson(scopeKey(address.scope), address.namespace, address.key);
  return json === undefined ? undefined : (JSON.parse(json) as T);
}

export function readListFromState<T>(state: ScopedState, address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T> {
  return state.readList<T>(scopeKey(address.scope), address.namespace, address.key, normalizeReadOptions(options));
}

/** A read-only snapshot over `state` as it is at each call (a follower replaces or grows it). */
export function stateSnapshot(state: () => ScopedState): SessionSnapshot {
  return {
    get: <T>(address: Value<T, Scope>) => getFromState(state(), address),
    readList: <T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T> => readListFromState(state(), address, options),
    stats: () => state().stats(),
  };
}
