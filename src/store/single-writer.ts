// One writer per session, whatever the backend. JSONL takes its lock itself (it must, to repair a
// torn tail safely); a backend that arbitrates concurrent connections on its own (SQLite) would let
// two `spool run --session ID` interleave one session's operation and call ids, so the repository
// takes the same lock file for it and releases it when the store closes.
import { acquireLock } from "./jsonl/lock.js";
import type { Store } from "./store.js";

/** Takes `<file>.lock` (SessionLockedError when a live process holds it), then opens; the lock goes with close(). */
export async function openSingleWriter(file: string, open: () => Promise<Store>): Promise<Store> {
  const release = acquireLock(`${file}.lock`, file);
  let store: Store;
  try {
    store = await open();
  } catch (e) {
    release();
    throw e;
  }
  let closing: Promise<void> | undefined;
  return {
    commit: (writes) => store.commit(writes),
    get: (address) => store.get(address),
    readList: (address, options) => store.readList(address, options),
    stats: () => store.stats(),
    sync: () => store.sync(),
    close: () => (closing ??= store.close().finally(release)),
  };
}
