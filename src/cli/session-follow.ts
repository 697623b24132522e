// A followed session's view, kept current in O(what changed): `spool serve` holds one per live JSONL or
// SQLite session. It keeps what it read — the transcript up to the last seq read, each settled call's record
// until that record has an end, the latest-activity fold after each settled call, each open call's
// output folded up to its last batch — and on a change reads only what lies past it: transcript
// entries after that seq, output batches after the last folded, the session record, the open
// operations and the records of calls not yet ended (a few values). The tracked state is changed in
// place (entries pushed, changed calls and fields set), so the tracker diffs only what changed. What it
// cannot follow — the transcript shrank or was cleared (the session's list count says so), another
// writer (the session record's pid) — makes update() return false: the caller reads the session whole.
// The view is always what viewFromSnapshot gives for the same snapshot (test/cli/session-follow.test.ts).
// Measured (bench/serve.bench.mjs): before, the whole view read and assigned on every change cost a
// live session of 10,000 calls 310-600 ms and 21-30 MB read per change, 50,000 calls 1.8-2.4 s, and
// serve a whole core with one output streaming; now a change to an open call costs under 1 ms and 4 KiB
// read at 1k-50k calls. A read from the transcript's cursor reads the store's whole segment around
// it (up to 256 KiB).
// Traps: a settled call's record is read again until it records an end, and then no more (no writer
// rewrites an ended record); a call that has no record is looked up again only when the number of
// session values changed (its record would be a new value); the list count is the whole session's, so
// a clear is missed only if another session list grew by what the transcript lost between two looks
// (no writer keeps another session list).
import { isDeepStrictEqual } from "node:util";
import { apply, decoder, type Decoder, type WireOp } from "../delta/index.js";
import { callRecord, OPEN_OPERATIONS, outputList, TRANSCRIPT, type ToolCall } from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import type { ListElement, SessionSnapshot } from "../store/index.js";
import type { MutableState } from "../harness/index.js";
import type { ToolResultMessage } from "../context/index.js";
import { laterRun, openCall, runInfoOf, sessionHeader, settledCall, type CallView, type RunInfo, type SessionView } from "./session-view.js";

export interface FollowedView {
  /** The view as it was when followed (a full read): the state to publish first. */
  readonly view: SessionView;
  /**
   * Brings `state` (holding this view) up to date with the snapshot by targeted mutations; false when
   * what changed cannot be followed and the session must be read whole again (nothing was changed).
   */
  update(state: MutableState<SessionView>, live: boolean): boolean;
}

/** An open call's durable output, folded up to the last batch read (what readDurableOutput folds). */
interface OutputFold {
  lastSeq: number | undefined;
  decoder: Decoder;
  state: ToolOutputState | undefined;
}

/** A call's record as the latest-activity fold uses it. */
type Times = Pick<RunInfo, "startedAt" | "endedAt"> | undefined;

const SESSION_HEADER_KEYS = ["command", "status", "exitCode", "startedAt", "endedAt"] as const;
/** Items per push: a spread of a huge array overflows the argument stack. */
const PUSH_CHUNK = 10_000;

export function followView(id: string, snap: Pick<SessionSnapshot, "get" | "readList" | "stats">, live: boolean): FollowedView {
  const info0 = runInfoOf(snap);
  const pid = info0.pid;
  let info = info0;
  /** The seq of the last transcript entry read. */
  let cursor: number | undefined;
  /** Session-scope list elements when last looked: the transcript's growth must account for any change. */
  let elements = 0;
  let values = -1;
  /** Per settled call, its record's times (undefined: no record). */
  const times: Times[] = [];
  /** after[i]: the latest activity folded over the session record and settled calls 0…i-1. */
  const after: (string | null | undefined)[] = [info0.endedAt ?? info0.startedAt];
  /** Settled calls whose record may still change (none yet, or not ended), with its text when read. */
  const pending = new Map<number, string | undefined>();
  const folds = new Map<string, OutputFold>();

  /** Reads the output batches of an open call past its fold; true when any were read. */
  const advance = (fold: OutputFold, opId: string, callId: string): boolean => {
    const address = outputList(opId, callId);
    const fresh: ListElement<WireOp[]>[] = [];
    for (let c = fold.lastSeq; ; ) {
      const page = snap.readList(address, c !== undefined ? { cursor: c } : {});
      for (const el of page.elements) fresh.push(el);
      if (page.cursor === undefined) break;
      c = page.cursor;
    }
    if (fresh.length === 0) {
      if (fold.lastSeq === undefined) return false;
      // Nothing past the fold: the list is as it was, unless the operation settled and ran again
      // under the same id and start time with nothing written yet, its old scope retired with the
      // list (seen otherwise only by its result in the transcript, which a clear can take first).
      const last = snap.readList(address, { order: "desc", limit: 1 }).elements[0];
      if (last?.seq === fold.lastSeq) return false;
      fold.lastSeq = undefined;
      fold.decoder = decoder();
      fold.state = undefined;
      advance(fold, opId, callId);
      return true;
    }
    // A base starts the fold again, as a read backwards to the last base does.
    let from = 0;
    for (let i = fresh.length - 1; i >= 0; i--) {
      if (fresh[i]!.tag === "base") {
        from = i;
        fold.decoder = decoder();
        fold.state = undefined;
        break;
      }
    }
    for (let i = from; i < fresh.length; i++) fold.state = apply(fold.state, fold.decoder.decode(fresh[i]!.value));
    fold.lastSeq = fresh[fresh.length - 1]!.seq;
    return true;
  };

  /**
   * Brings `view` up to date, reading the current value through `raw` and writing through `draft` (the
   * same object when building; the tracked raw value and its proxy when following).
   */
  const step = (raw: SessionView, draft: SessionView, live: boolean, building: boolean): boolean => {
    const now = runInfoOf(snap);
    if (now.pid !== pid) return false;
    const added: ToolResultMessage[] = [];
    for (;;) {
      const page = snap.readList(TRANSCRIPT, cursor !== undefined ? { cursor } : {});
      for (const el of page.elements) added.push(el.value);
      const last = page.elements[page.elements.length - 1];
      if (last !== undefined) cursor = last.seq;
      if (page.cursor === undefined) break;
    }
    const stats = snap.stats();
    if (!building && stats.listElements !== elements + added.length) return false;
    elements = stats.listElements;
    const valuesChanged = stats.values !== values;
    values = stats.values;

    const before = times.length;
    const settled = before + added.length;
    const infoChanged = !isDeepStrictEqual(now, info);
    info = now;
    const header = sessionHeader(now, live);
    for (const k of SESSION_HEADER_KEYS) if (raw[k] !== header[k]) (draft as unknown as Record<string, unknown>)[k] = header[k];
    /** The lowest settled call whose record changed: the activity fold is redone from there. */
    let redo = infoChanged ? 0 : settled;
    if (infoChanged) after[0] = now.endedAt ?? now.startedAt;
    const legacy = (n: number): RunInfo | undefined => (n === 1 ? now : undefined);
    const read = (i: number, callId: string): RunInfo | undefined => {
      const run = snap.get(callRecord(callId));
      times[i] = run === undefined ? undefined : { startedAt: run.startedAt, endedAt: run.endedAt };
      if (run === undefined || run.endedAt === null) pending.set(i, run === undefined ? undefined : JSON.stringify(run));
      else pending.delete(i);
      return run;
    };

    // Settled calls whose record may have changed since.
    const calls = raw.calls;
    for (const [i, was] of [...pending]) {
      if (was === undefined && !valuesChanged) continue;
      const m = raw.transcript[i]!;
      const run = read(i, m.toolCallId);
      if ((run === undefined ? undefined : JSON.stringify(run)) === was) continue;
      draft.calls[i] = settledCall(m, run, legacy(settled));
      redo = Math.min(redo, i);
    }
    // Sessions recorded before per-call records: a session of one call shows the session record's details.
    if (before === 1 && times[0] === undefined && (settled !== 1 || infoChanged)) {
      draft.calls[0] = settledCall(raw.transcript[0]!, undefined, legacy(settled));
    }

    // The calls that settled since, then the open ones, in place of the open calls shown before.
    const target: { view: CallView | undefined; call?: ToolCall; fold?: OutputFold; grew?: boolean; run?: RunInfo }[] = [];
    const settledIds = new Set<string>();
    for (let k = 0; k < added.length; k++) {
      const m = added[k]!;
      settledIds.add(m.toolCallId);
      target.push({ view: settledCall(m, read(before + k, m.toolCallId), legacy(settled)) });
    }
    if (added.length > 0) {
      redo = Math.min(redo, before);
      for (let k = 0; k < added.length; k += PUSH_CHUNK) draft.transcript.push(...added.slice(k, k + PUSH_CHUNK));
    }
    const open = snap.get(OPEN_OPERATIONS) ?? {};
    const seen = new Set<string>();
    for (let i = redo; i < settled; i++) after[i + 1] = laterRun(after[i], times[i]);
    after.length = settled + 1;
    let at = after[settled];
    for (const [opId, op] of Object.entries(open)) {
      for (const c of op.calls) {
        // An operation id may be used again after it settled: its scope is then a new one.
        const key = `${opId}\n${op.startedAt}\n${c.toolCallId}`;
        seen.add(key);
        let fold = folds.get(key);
        const fresh = fold === undefined || settledIds.has(c.toolCallId);
        if (fresh) folds.set(key, (fold = { lastSeq: undefined, decoder: decoder(), state: undefined }));
        // A fold started now is shown whole, whatever the view held for this call before.
        const grew = advance(fold!, opId, c.toolCallId) || fresh;
        const run = snap.get(callRecord(c.toolCallId));
        at = laterRun(at, run);
        target.push({ view: undefined, call: c, fold, grew, ...(run !== undefined ? { run } : {}) });
      }
    }
    for (const key of folds.keys()) if (!seen.has(key)) folds.delete(key);
    if (raw.lastActivityAt !== at) draft.lastActivityAt = at;

    const shown = calls.length - before;
    for (let p = 0; p < target.length; p++) {
      const t = target[p]!;
      const j = before + p;
      const cur = p < shown ? calls[j] : undefined;
      if (t.view !== undefined) {
        if (cur !== undefined) draft.calls[j] = t.view;
        continue;
      }
      const c = t.call!;
      if (cur !== undefined && cur.id === c.toolCallId && !cur.ended && !t.grew) {
        // The same open call in the same place, its output unchanged: only what else changed.
        const next = openCall(c, undefined, t.run);
        const d = draft.calls[j]!;
        if (cur.name !== next.name) d.name = next.name;
        if (!isDeepStrictEqual(cur.args, next.args)) d.args = next.args;
        if (!isDeepStrictEqual(cur.run, next.run)) {
          if (next.run === undefined) delete d.run;
          else d.run = next.run;
        }
        continue;
      }
      t.view = openCall(c, t.fold!.state === undefined ? undefined : structuredClone(t.fold!.state), t.run);
      if (cur !== undefined) draft.calls[j] = t.view;
    }
    if (target.length < shown) draft.calls.splice(before + target.length);
    else if (target.length > shown) {
      const more = target.slice(shown).map((t) => t.view!);
      for (let k = 0; k < more.length; k += PUSH_CHUNK) draft.calls.push(...more.slice(k, k + PUSH_CHUNK));
    }
    return true;
  };

  const view: SessionView = {
    id,
    ...sessionHeader(info0, live),
    lastActivityAt: info0.endedAt ?? info0.startedAt,
    calls: [],
    transcript: [],
  };
  step(view, view, live, true);
  return {
    view,
    update(state, nowLive) {
      let ok = false;
      state.mutate((draft) => {
        ok = step(state.value, draft, nowLive, false);
      });
      return ok;
    },
  };
}
