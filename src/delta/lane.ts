// The leaf lane: while nothing structural is pending, the tracker records leaf writes here instead of
// in the pending log — a primitive or string put over a primitive or string, explicit string edits,
// and items pushed onto the end of an array (a transcript growing by one entry per flush: the log
// made a trie node, a Map and an entry for each). One entry per written slot (parent object + key, or
// an array and PUSH for its end), found by a short scan, holding the slot's
// paths: a counter bumped and a window slid per flush cost no trie nodes, no Map and no path walk (the
// log built ~7 trie nodes and 4 Maps per such flush). A slot outlives its window, so the next window
// that writes it reuses its paths while no container has moved since (the tracker's epoch). Every
// batch that writes the slot carries the same path arrays, so nothing writes into them once made
// (not frozen: that cost ~15% more instructions per flush, frozen arrays taking slower element paths).
//
// It is exact because of one rule: the lane is used only while the log is empty, and the first record
// that goes to the log spills the lane into it first, in order. A leaf slot holds a primitive and a
// push moves no existing element, so the lane's ops commute except with a write inside items pushed in
// the same window — which can only be made after the push, and is drained after it (the lane keeps
// record order, and `set` only ever moves a slot later). Whatever would fold a write into an earlier
// payload (a pending set, a splice's items) is in the log, never behind the lane.
import { spliceInto } from "./apply.js";
import { cloneJson, type Container } from "./json.js";
import type { NonEmptyPath, Op, Seg } from "./ops.js";
import { editAppend, editDrop, editOps, type PendingLog, stringOps, type TextEdit } from "./pending.js";

/** The key of an array's push slot (never a real key: those are strings or indices ≥ 0). */
export const PUSH = -1;

/** A written slot and what the window did to it: `s` set a value, `str` assigned a string (diffed at flush), `ed` explicit edits, `p` items pushed at `index` (the slot's paths are the array's). */
export interface Leaf extends TextEdit {
  readonly parent: Container;
  readonly key: Seg;
  /** Every path of the slot (never written once made), valid while the tracker's epoch is `epoch`. */
  paths: readonly (readonly Seg[])[];
  epoch: number;
  /** Written in the current window (listed in `leaves`). */
  active: boolean;
  /** Still one of the lane's slots (false once evicted or forgotten: a holder must look it up again). */
  kept: boolean;
  kind: "s" | "str" | "ed" | "p";
  value: unknown;
  anchor: string;
  current: string;
  index: number;
  /** Copies of the pushed items (the lane's own: the first path's op carries them). */
  items: unknown[];
  /** The front-drop the slot's last assigned string slid by: the next diff tries it first (kept across windows). */
  hint: number;
}

const NO_ITEMS: unknown[] = [];

// Slots kept, written in this window or not (a window that writes more spills to the log, which has
// its own bounds). They hold their parents strongly: at most this many removed objects outlive their
// removal until the slot is reused or the lane reset.
const MAX_SLOTS = 64;

export class LeafLane {
  /**
   * Written in the current window, in record order: the first `count` entries. The array is reused
   * from window to window (a new one per flush was an allocation and a growth of its store per push in
   * a transcript stream); entries past `count` are null.
   */
  private leaves: (Leaf | null)[] = [];
  private count = 0;
  /** Every slot kept (a superset of `leaves`). */
  private slots: Leaf[] = [];
  /** Push slots written in this window. */
  pushing = 0;

  get size(): number {
    return this.count;
  }

  get full(): boolean {
    return this.count >= MAX_SLOTS;
  }

  /** The slot kept for `parent[key]`, written in this window or not. */
  find(parent: Container, key: Seg): Leaf | undefined {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i++) {
      const leaf = slots[i]!;
      if (leaf.parent === parent && leaf.key === key) return leaf;
    }
    return undefined;
  }

  /**
   * Start writing a slot in this window (the caller checked `full`): `leaf` is the kept slot for it or
   * undefined; `paths` are new paths when the kept ones are stale or missing. Its kind is
   * set by the first write below.
   */
  open(leaf: Leaf | undefined, parent: Container, key: Seg, paths: Seg[][] | undefined, epoch: number): Leaf {
    if (leaf === undefined) {
      if (this.slots.length >= MAX_SLOTS) {
        const cold = this.slots.findIndex((l) => !l.active);
        this.slots[cold]!.kept = false;
        this.slots.splice(cold, 1);
      }
      leaf = {
        parent,
        key,
        paths: [],
        epoch,
        active: true,
        kept: true,
        kind: "s",
        value: undefined,
        anchor: "",
        current: "",
        index: 0,
        items: NO_ITEMS,
        hint: 0,
        baseLength: 0,
        drop: 0,
        text: "",
        textStart: 0,
      };
      this.slots.push(leaf);
    }
    if (paths !== undefined) {
      leaf.paths = paths;
      leaf.epoch = epoch;
    }
    leaf.active = true;
    leaf.drop = 0;
    leaf.text = "";
    leaf.textStart = 0;
    if (this.count < this.leaves.length) this.leaves[this.count] = leaf;
    else this.leaves.push(leaf);
    this.count++;
    return leaf;
  }

  /**
   * A value put at the slot: whatever the window did to it before is restated by the set, which moves
   * to the end as the log's would (the ops commute either way; the order keeps the wire what it was).
   */
  set(leaf: Leaf, value: unknown): void {
    leaf.kind = "s";
    leaf.value = value;
    const leaves = this.leaves;
    const last = this.count - 1;
    if (leaves[last] !== leaf) {
      // Shifted by hand: splice() would allocate the removed element's array on every bump.
      let i = leaves.indexOf(leaf);
      for (; i < last; i++) leaves[i] = leaves[i + 1]!;
      leaves[last] = leaf;
    }
  }

  /**
   * A string assigned over the string `before`. False when the slot holds explicit edits: a diff after
   * them needs its own entry, which only the log keeps.
   */
  assign(leaf: Leaf, before: string, after: string, fresh: boolean): boolean {
    if (fresh) {
      leaf.kind = "str";
      leaf.anchor = before;
      leaf.current = after;
      return true;
    }
    if (leaf.kind === "str") leaf.current = after;
    else if (leaf.kind === "s") leaf.value = after;
    else return false;
    return true;
  }

  /** Explicit edits of the string `before` (now `after`): an append of `text`, then a front-drop of `drop`. */
  edit(leaf: Leaf, before: string, after: string, text: string, drop: number, fresh: boolean): void {
    if (fresh) {
      leaf.kind = "ed";
      leaf.baseLength = before.length;
    }
    if (leaf.kind === "str") leaf.current = after;
    else if (leaf.kind === "s") leaf.value = after;
    else {
      if (text.length > 0) editAppend(leaf, text);
      if (drop > 0) editDrop(leaf, drop);
    }
  }

  /** Items pushed at `index` (the array's length before them), copied already. */
  push(leaf: Leaf, index: number, items: unknown[]): void {
    if (leaf.kind !== "p" || leaf.items === NO_ITEMS) {
      this.pushing++;
      leaf.kind = "p";
      leaf.index = index;
      leaf.items = items;
    } else spliceInto(leaf.items, leaf.items.length, 0, items);
  }

  /**
   * Whether one of `paths` lies inside items pushed in this window. A write there belongs in the log,
   * which folds it into the pushed items; the lane would state it twice once spilled (the items
   * copied at the push, then the write on its own) — see the rule at the top.
   */
  insidePushed(paths: readonly (readonly Seg[])[]): boolean {
    if (this.pushing === 0) return false;
    for (let j = 0; j < this.count; j++) {
      const push = this.leaves[j]!;
      if (push.kind !== "p") continue;
      for (const at of push.paths) {
        for (const p of paths) {
          const i = p[at.length];
          if (typeof i !== "number" || i < push.index || p.length <= at.length) continue;
          let k = 0;
          while (k < at.length && p[k] === at[k]) k++;
          if (k === at.length) return true;
        }
      }
    }
    return false;
  }

  /** The ops of the window, slot by slot; the lane is empty afterwards. */
  drain(maxOverlapScan: number): Op[] {
    // One slot at one path set or pushed onto (a transcript's flush): its op in a literal, no array grown.
    if (this.count === 1) {
      const leaf = this.leaves[0]!;
      if (leaf.paths.length === 1 && (leaf.kind === "s" || leaf.kind === "p")) {
        const path = leaf.paths[0] as NonEmptyPath;
        const op: Op = leaf.kind === "s" ? ["s", path, leaf.value] : ["p", path, leaf.index, 0, leaf.items];
        this.leaves[0] = null;
        this.count = 0;
        this.pushing = 0;
        leaf.active = false;
        release(leaf);
        return [op];
      }
    }
    const ops: Op[] = [];
    const leaves = this.leaves;
    for (let j = 0; j < this.count; j++) {
      const leaf = leaves[j]!;
      leaves[j] = null;
      leaf.active = false;
      for (let i = 0; i < leaf.paths.length; i++) {
        const path = leaf.paths[i] as NonEmptyPath;
        if (leaf.kind === "s") ops.push(["s", path, leaf.value]);
        else if (leaf.kind === "p") ops.push(["p", path, leaf.index, 0, i === 0 ? leaf.items : cloneJson(leaf.items)]);
        else if (leaf.kind === "ed") editOps(leaf, path, ops);
        else if (i === 0) leaf.hint = stringOps(leaf.anchor, leaf.current, path, maxOverlapScan, ops, leaf.hint);
        else stringOps(leaf.anchor, leaf.current, path, maxOverlapScan, ops, leaf.hint);
      }
      release(leaf);
    }
    this.count = 0;
    this.pushing = 0;
    return ops;
  }

  /** Move every slot into the (empty) log, in order, as the log would have recorded it. */
  spillInto(log: PendingLog): void {
    const leaves = this.leaves;
    const n = this.count;
    this.count = 0;
    this.pushing = 0;
    for (let j = 0; j < n; j++) {
      const leaf = leaves[j]!;
      leaves[j] = null;
      leaf.active = false;
      for (let i = 0; i < leaf.paths.length; i++) {
        // The log never writes into a path it was given.
        const path = leaf.paths[i] as Seg[];
        if (leaf.kind === "s") log.set(path, leaf.value);
        else if (leaf.kind === "p") log.splice(path, leaf.index, 0, i === 0 ? leaf.items : cloneJson(leaf.items));
        else if (leaf.kind === "str") log.string(path, leaf.anchor, leaf.current);
        else log.edit(path, leaf);
      }
      release(leaf);
    }
  }

  /** Drop what the window wrote; with `forget`, the kept slots too (a new root: their parents may be gone). */
  clear(forget = false): void {
    const leaves = this.leaves;
    for (let j = 0; j < this.count; j++) {
      const leaf = leaves[j]!;
      leaves[j] = null;
      leaf.active = false;
      release(leaf);
    }
    this.count = 0;
    this.pushing = 0;
    if (forget) {
      for (const leaf of this.slots) leaf.kept = false;
      this.slots = [];
    }
  }
}

/** A slot between windows holds no values (they would outlive their window). */
function release(leaf: Leaf): void {
  leaf.value = undefined;
  leaf.anchor = "";
  leaf.current = "";
  leaf.text = "";
  leaf.items = NO_ITEMS;
}
