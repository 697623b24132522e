// One writer per session, whatever the backend. JSONL takes its lock itself (it must, to repair a
// torn tail safely); a backend that arbitrates concurrent connections on its own (SQLite) would let
// two `spool run --session ID` interleave one session's operation and call ids, so the repository
// takes the same lock file for it and releases it when the store closes.
import { acquireLock, retakeLock } from "./jsonl/lock.js";
import type { Store } from "./store.js";

/**
 * Takes `<file>.lock` (SessionLockedError when a live process holds it), then opens; the lock goes with
 * close(). `open` gets `relock`, for a store that writes its file again after the session directory was
 * deleted under it (the lock file went with it): it takes the lock again, or throws if another process has.
 */
export async function openSingleWriter(file: string, open: (relock: () => void) => Promise<Store>): Promise<Store> {
  const lockPath = `${file}.lock`;
  let release = acquireLock(lockPath, file);
  let store: Store;
  try {
    store = await open(() => {
      release = retakeLock(lockPath, file, release);
    });
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
    close: () => (closing ??= store.close().finally(() => release())),
  };
}
