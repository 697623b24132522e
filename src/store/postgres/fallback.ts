// When the database stays down, the session moves to a local JSONL log (the format `spool inspect
// --root` reads): memory holds every acknowledged commit, so the log is written from it, with the
// same seqs, and the store carries on there.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { list, value } from "../address.js";
import { encodeHeader, encodeTransaction, FORMAT_VERSION, SCOPE_FORMAT } from "../jsonl/records.js";
import { sidecarName } from "../jsonl/replay.js";
import { sidecarDir } from "../layout.js";
import { createWithHeader, newSessionHeader, openJsonlStore } from "../jsonl/store.js";
import { ephemeralScope, sessionScope, type Scope } from "../scope.js";
import type { ScopedState } from "../scoped-state.js";
import type { Store } from "../store.js";
import { appendList, deleteList, deleteValue, retireScope, setValue, type PreparedWrite, type Write } from "../write.js";

/** Rebuilds the public writes for prepared ones (JSON text round-trips exactly through parse/stringify). */
export function toWrites(scopeId: string, writes: readonly PreparedWrite[]): Write<Scope>[] {
  const scope = (scopeId === "" ? sessionScope : ephemeralScope(scopeId)) as Scope;
  return writes.map((w) => {
    switch (w.op) {
      case "set":
        return setValue(value(w.ns, w.key, scope), JSON.parse(w.json)) as Write<Scope>;
      case "delete":
        return deleteValue(value(w.ns, w.key, scope)) as Write<Scope>;
      case "append":
        return appendList(list(w.ns, w.key, scope), JSON.parse(w.json), w.tag) as Write<Scope>;
      case "clear":
        return deleteList(list(w.ns, w.key, scope)) as Write<Scope>;
      case "retire":
        return retireScope(ephemeralScope(w.scope)) as Write<Scope>;
    }
  });
}

export async function writeFallback(path: string, sessionId: string, state: ScopedState, nextSeq: number): Promise<Store> {
  mkdirSync(dirname(path), { recursive: true });
  const byScope = new Map<string, string[]>();
  for (const r of state.allRecords()) {
    let lines = byScope.get(r.scope);
    if (lines === undefined) byScope.set(r.scope, (lines = []));
    lines.push(encodeTransaction(r.seq, r.scope, [r.write]));
  }
  // Records of one scope come out grouped by kind; a log needs them in seq order.
  const sorted = (lines: string[]): string =>
    lines
      .map((l) => [Number(/^\{"seq":(\d+)/.exec(l)![1]), l] as const)
      .sort((a, b) => a[0] - b[0])
      .map((x) => x[1])
      .join("");
  for (const [scope, lines] of byScope) {
    if (scope === "") continue;
    mkdirSync(sidecarDir(path), { recursive: true });
    const header = encodeHeader({ format: SCOPE_FORMAT, version: FORMAT_VERSION, sessionId, scopeId: scope });
    createWithHeader(join(sidecarDir(path), sidecarName(scope)), header, true, sorted(lines));
  }
  createWithHeader(path, encodeHeader(newSessionHeader(sessionId, nextSeq)), true, sorted(byScope.get("") ?? []));
  return openJsonlStore(path, { create: false });
}
