// The memory backend: the reference semantics with nothing durable. Commits apply at admission.
import type { Value, ValueList } from "./address.js";
import { StoreClosedError } from "./errors.js";
import { normalizeReadOptions } from "./read-options.js";
import { scopeKey, type Scope } from "./scope.js";
import { ScopedState } from "./scoped-state.js";
import type { CommitResult, ListPage, ListReadOptions, Store, StoreStats } from "./store.js";
import { prepareTransaction, type Write } from "./write.js";

class MemoryStore implements Store {
  readonly #state = new ScopedState();
  #nextSeq = 1;
  #closed = false;

  commit<Sc extends Scope>(writes: readonly Write<Sc>[]): Promise<CommitResult> {
    try {
      if (this.#closed) throw new StoreClosedError("commit");
      const tx = prepareTransaction(writes);
      const seq = this.#nextSeq;
      this.#nextSeq += tx.writes.length;
      this.#state.apply(tx.scope, seq, tx.writes);
      return Promise.resolve({ seq });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  get<T>(address: Value<T, Scope>): T | undefined {
    if (this.#closed) throw new StoreClosedError("read");
    const json = this.#state.getJson(scopeKey(address.scope), address.namespace, address.key);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T> {
    if (this.#closed) throw new StoreClosedError("read");
    return this.#state.readList<T>(scopeKey(address.scope), address.namespace, address.key, normalizeReadOptions(options));
  }

  stats(): StoreStats {
    if (this.#closed) throw new StoreClosedError("read stats");
    return this.#state.stats();
  }

  sync(): Promise<void> {
    return this.#closed ? Promise.reject(new StoreClosedError("sync")) : Promise.resolve();
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}

export function createMemoryStore(): Store {
  return new MemoryStore();
}
