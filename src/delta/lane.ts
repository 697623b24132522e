// The leaf lane: while nothing structural is pending, the tracker records leaf writes here instead of
// in the pending log — a primitive or string put over a primitive or string, and explicit string
// edits. One entry per written slot (parent object + key), found by a short scan, holding the slot's
// paths from when it was first written in the window: a counter bumped and a window slid per flush
// cost no trie nodes, no Map and no path walk (the log built ~7 trie nodes and 4 Maps per such flush).
//
// It is exact because of one rule: the lane is used only while the log is empty, and the first record
// that goes to the log spills the lane into it first, in order. Every lane slot holds a primitive, so
// no lane path lies under another and the lane's ops commute; whatever would fold them into an
// earlier payload (a pending set, a splice's items) is in the log, never behind the lane.
import type { Container } from "./json.js";
import type { NonEmptyPath, Op, Seg } from "./ops.js";
import { editAppend, editDrop, editOps, type PendingLog, stringOps, type TextEdit } from "./pending.js";

/** A written slot and what the window did to it: `s` set a value, `str` assigned a string (diffed at flush), `ed` explicit edits. */
export interface Leaf extends TextEdit {
  readonly parent: Container;
  readonly key: Seg;
  /** Every path of the slot when the window first wrote it (the tracker's epoch says they still hold). */
  readonly paths: Seg[][];
  readonly epoch: number;
  kind: "s" | "str" | "ed";
  value: unknown;
  anchor: string;
  current: string;
}

// Past this many slots in one window the lane spills and the log (with its own bounds) takes over.
const MAX_LEAVES = 64;

export class LeafLane {
  private leaves: Leaf[] = [];

  get size(): number {
    return this.leaves.length;
  }

  get full(): boolean {
    return this.leaves.length >= MAX_LEAVES;
  }

  find(parent: Container, key: Seg): Leaf | undefined {
    const leaves = this.leaves;
    for (let i = 0; i < leaves.length; i++) {
      const leaf = leaves[i]!;
      if (leaf.parent === parent && leaf.key === key) return leaf;
    }
    return undefined;
  }

  /** A new slot (the caller checked `find` and `full`), its kind set by the first write below. */
  open(parent: Container, key: Seg, paths: Seg[][], epoch: number): Leaf {
    const leaf: Leaf = { parent, key, paths, epoch, kind: "s", value: undefined, anchor: "", current: "", baseLength: 0, drop: 0, text: "", textStart: 0 };
    this.leaves.push(leaf);
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
    if (leaves[leaves.length - 1] !== leaf) {
      leaves.splice(leaves.indexOf(leaf), 1);
      leaves.push(leaf);
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

  /** The ops of the window, slot by slot; the lane is empty afterwards. */
  drain(maxOverlapScan: number): Op[] {
    const ops: Op[] = [];
    for (const leaf of this.leaves) {
      for (const p of leaf.paths) {
        const path = p as unknown as NonEmptyPath;
        if (leaf.kind === "s") ops.push(["s", path, leaf.value]);
        else if (leaf.kind === "ed") editOps(leaf, path, ops);
        else stringOps(leaf.anchor, leaf.current, path, maxOverlapScan, ops);
      }
    }
    this.leaves = [];
    return ops;
  }

  /** Move every slot into the (empty) log, in order, as the log would have recorded it. */
  spillInto(log: PendingLog): void {
    const leaves = this.leaves;
    this.leaves = [];
    for (const leaf of leaves) {
      for (let i = 0; i < leaf.paths.length; i++) {
        const path = leaf.paths[i]!;
        if (leaf.kind === "s") log.set(path, leaf.value);
        else if (leaf.kind === "str") log.string(path, leaf.anchor, leaf.current);
        else log.edit(path, leaf);
      }
    }
  }

  clear(): void {
    if (this.leaves.length > 0) this.leaves = [];
  }
}
