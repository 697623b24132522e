// One base for a burst of subscribers. The state hands every new subscriber its own copy of the value;
// when nothing was published since an earlier subscriber's base, the two are equal, so the later one
// is sent the earlier one's batch — and with it the payload already serialised for it (frame.ts).
// A reconnect storm of N subscribers on a 20 MB state then costs one serialisation, not N.
// "Nothing was published since" is only known while someone is watching every batch: the cache is
// kept only while the state has a subscriber on this server, and for a short time.
import type { Op } from "../delta/index.js";
import type { ReplicatedState } from "./source.js";

const KEEP_MS = 1000;

interface Watch {
  subscribers: number;
  /** The last batch any subscriber of this state was handed (one array per publish, shared by all). */
  lastBatch?: readonly Op[];
  base?: readonly Op[];
  timer?: ReturnType<typeof setTimeout>;
}

export interface BaseSharing {
  /** Call before subscribing; returns what to call when the subscription ends. */
  watch(state: ReplicatedState): () => void;
  /** Every batch a subscriber is handed goes through here; a subscription's first batch may be swapped for an equal shared one. */
  batch(state: ReplicatedState, ops: readonly Op[], first: boolean): readonly Op[];
}

export function createBaseSharing(): BaseSharing {
  const watches = new WeakMap<ReplicatedState, Watch>();
  const forget = (w: Watch): void => {
    w.base = undefined;
    if (w.timer) clearTimeout(w.timer);
    w.timer = undefined;
  };
  return {
    watch(state) {
      let w = watches.get(state);
      if (!w) watches.set(state, (w = { subscribers: 0 }));
      const watch = w;
      watch.subscribers++;
      return () => {
        if (--watch.subscribers === 0) {
          forget(watch);
          watch.lastBatch = undefined;
        }
      };
    },
    batch(state, ops, first) {
      const w = watches.get(state);
      if (!w) return ops;
      if (!first) {
        if (ops !== w.lastBatch) {
          w.lastBatch = ops;
          forget(w); // the value moved on
        }
        return ops;
      }
      // The first subscriber has no earlier watcher to vouch that nothing changed before it.
      if (w.base !== undefined && w.subscribers > 1) return w.base;
      forget(w);
      w.base = ops;
      w.timer = setTimeout(() => forget(w), KEEP_MS);
      w.timer.unref?.();
      return ops;
    },
  };
}
