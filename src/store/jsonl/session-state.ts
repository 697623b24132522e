// A JSONL session as the store and its readers hold it: the session scope indexed over the main log
// (main-state.ts), each live ephemeral scope in memory as JSON text. An ephemeral scope lives as long
// as its operation and its sidecar is replayed whole on open; the session scope is the transcript and
// grows with the session, so it is the part kept on disk.
import type { NormalReadOptions } from "../read-options.js";
import { ScopedState } from "../scoped-state.js";
import type { ListPage, StoreStats } from "../store.js";
import type { PreparedWrite } from "../write.js";
import type { LineLoc } from "./list-segments.js";
import type { MainState } from "./main-state.js";
import type { DecodedWrite } from "./records.js";

export class SessionState {
  readonly main: MainState;
  readonly scoped = new ScopedState();

  constructor(main: MainState) {
    this.main = main;
  }

  /** A transaction of the main log, at `at`. */
  applyMain(seq: number, writes: readonly (PreparedWrite | DecodedWrite)[], at: LineLoc): void {
    this.main.apply(seq, writes, at, (scope) => this.scoped.retire(scope));
  }

  /** A transaction of an ephemeral scope's sidecar. */
  applyScoped(scope: string, seq: number, writes: readonly PreparedWrite[]): void {
    this.scoped.apply(scope, seq, writes);
  }

  get<T>(scope: string, ns: string, key: string): T | undefined {
    if (scope === "") return this.main.get<T>(ns, key);
    const json = this.scoped.getJson(scope, ns, key);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  readList<T>(scope: string, ns: string, key: string, o: NormalReadOptions): ListPage<T> {
    return scope === "" ? this.main.readList<T>(ns, key, o) : this.scoped.readList<T>(scope, ns, key, o);
  }

  /** Session-scope records in seq order, one write each: what a fork copies. */
  sessionRecords(): Generator<{ seq: number; write: PreparedWrite }> {
    return this.main.records();
  }

  /** Session-scope counts, as every backend reports them. */
  stats(): StoreStats {
    return this.main.stats();
  }
}
