// A read-only view of a JSONL session as it is on disk right now, without taking the writer's lock:
// `spool serve` and `spool inspect` read sessions another process is still writing. A torn tail is
// ignored, never repaired from here (the writer owns the file). Session-scope reads go to the file
// (a log replaced under the view fails them with SessionChangedError).
import type { Value, ValueList } from "../address.js";
import { normalizeReadOptions } from "../read-options.js";
import { scopeKey, type Scope } from "../scope.js";
import type { ListPage, ListReadOptions, StoreStats } from "../store.js";
import { loadSession } from "./replay.js";
import type { SessionState } from "./session-state.js";

export interface SessionSnapshot {
  get<T>(address: Value<T, Scope>): T | undefined;
  readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T>;
  stats(): StoreStats;
}

/** Reads through to `state` as it is at each call (a follower's state keeps growing). */
export function snapshotOf(state: () => SessionState): SessionSnapshot {
  return {
    get<T>(address: Value<T, Scope>) {
      return state().get<T>(scopeKey(address.scope), address.namespace, address.key);
    },
    readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions) {
      return state().readList<T>(scopeKey(address.scope), address.namespace, address.key, normalizeReadOptions(options));
    },
    stats: () => state().stats(),
  };
}

export function readJsonlSnapshot(path: string): SessionSnapshot {
  const { state } = loadSession(path, { repair: false });
  return snapshotOf(() => state);
}
