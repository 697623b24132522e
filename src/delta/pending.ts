// The pending window of a tracker: an ordered log of recorded changes plus a path trie used to fold new
// changes into old ones. Output is bounded by changed state, not by the number of writes: a rate limit
// in front of the tracker holds writes back, and merging only adjacent ops would emit them all (1000
// held writes to a window and a counter came out as 2001 ops / 264 KB).
//
// Invariants the folding relies on:
// - a set or delete at a path kills every pending entry at or below it, including entries retired by
//   splices (the parent dominates; without this a child write recorded before a parent overwrite is
//   replayed after it);
// - a splice retires the node's children: their entries stay in the log, in order, but later writes can
//   no longer find and fold into them, because indices have shifted;
// - a write below a pending set payload, or into items inserted by the node's last splice, is folded into
//   that payload. Reaching the payload through the trie proves nothing at or above the path was recorded
//   since, because such a record would have killed or retired the way down.
import { spliceInto } from "./apply.js";
import { defineData, isContainer, type Container } from "./json.js";
import type { NonEmptyPath, Op, Seg } from "./ops.js";
import { diffString } from "./overlap.js";

type Entry =
  | { kind: "s"; path: Seg[]; alive: boolean; value: unknown }
  | { kind: "d"; path: Seg[]; alive: boolean }
  | { kind: "str"; path: Seg[]; alive: boolean; anchor: string; current: string }
  | { kind: "p"; path: Seg[]; alive: boolean; index: number; remove: number; items: unknown[] }
  // Explicit edits of a string (see TextEdit). Never diffed.
  | ({ kind: "ed"; path: Seg[]; alive: boolean } & TextEdit);

/**
 * Explicit edits of a string whose value at the start had `baseLength` units: the replica drops `drop`
 * of them from the front (`t`) and appends `text.slice(textStart)` (`a`). A front-drop that reaches
 * into the appended text only moves `textStart`; the dead prefix is cut off once it outweighs the live
 * text, so each unit is copied at most once more however often the window slides between flushes
 * (slicing the appended text per drop copied all of it each time).
 */
export interface TextEdit {
  baseLength: number;
  drop: number;
  text: string;
  textStart: number;
}

export function editAppend(e: TextEdit, text: string): void {
  if (e.textStart === e.text.length) {
    e.text = text;
    e.textStart = 0;
  } else e.text += text;
}

export function editDrop(e: TextEdit, count: number): void {
  const left = e.baseLength - e.drop;
  if (count <= left) {
    e.drop += count;
    return;
  }
  e.drop = e.baseLength;
  e.textStart += count - left;
  const live = e.text.length - e.textStart;
  if (live === 0) {
    e.text = "";
    e.textStart = 0;
  } else if (e.textStart >= live) {
    e.text = e.text.slice(e.textStart);
    e.textStart = 0;
  }
}

/** The ops of an explicit edit at `path`: `t` then `a`, each only when it does something. */
export function editOps(e: TextEdit, path: NonEmptyPath, ops: Op[]): void {
  if (e.drop > 0) ops.push(["t", path, e.drop]);
  if (e.text.length > e.textStart) ops.push(["a", path, e.textStart === 0 ? e.text : e.text.slice(e.textStart)]);
}

interface Node {
  kids: Map<Seg, Node> | null;
  entries: Entry[] | null;
  retired: Node[] | null;
}

const newNode = (): Node => ({ kids: null, entries: null, retired: null });

// Tombstones are compacted once there are this many and they are at least half the log.
const COMPACT_MIN_DEAD = 1024;

export class PendingLog {
  private log: Entry[] = [];
  private trie: Node = newNode();
  /** Live entries (emitted at flush). */
  live = 0;
  /** Trie nodes, the other bound on pending metadata. */
  nodes = 1;

  clear(): void {
    this.log = [];
    this.trie = newNode();
    this.live = 0;
    this.nodes = 1;
  }

  set(path: Seg[], value: unknown): void {
    const node = this.locate(path, false);
    if (!node) {
      setPlain(this.folded!.container, this.folded!.rest, value);
      return;
    }
    this.kill(node);
    this.push(node, { kind: "s", path, alive: true, value });
  }

  delete(path: Seg[]): void {
    const node = this.locate(path, false);
    if (!node) {
      deletePlain(this.folded!.container, this.folded!.rest);
      return;
    }
    this.kill(node);
    this.push(node, { kind: "d", path, alive: true });
  }

  string(path: Seg[], before: string, after: string): void {
    const node = this.locate(path, false);
    if (!node) {
      setPlain(this.folded!.container, this.folded!.rest, after);
      return;
    }
    const last = node.entries?.[node.entries.length - 1];
    if (last?.kind === "str") {
      last.current = after;
      return;
    }
    if (last?.kind === "s" && typeof last.value === "string") {
      last.value = after;
      return;
    }
    // Explicit edits stay as they are; the assignment is diffed against the value they produced.
    if (last?.kind !== "ed") this.kill(node);
    this.push(node, { kind: "str", path, alive: true, anchor: before, current: after });
  }

  /** True when nothing is pending (not even tombstones): what the tracker's leaf lane needs. */
  get empty(): boolean {
    return this.log.length === 0;
  }

  /** An explicit append of `text` to the string at `path` (`before` + `text` = `after`). */
  append(path: Seg[], before: string, after: string, text: string): void {
    const last = this.stringTail(path, after);
    if (last === null) return;
    if (last !== undefined) editAppend(last, text);
    else this.edit(path, { baseLength: before.length, drop: 0, text, textStart: 0 });
  }

  /** An explicit front-drop of `count` units from the string at `path` (`before.slice(count)` = `after`). */
  truncate(path: Seg[], before: string, after: string, count: number): void {
    const last = this.stringTail(path, after);
    if (last === null) return;
    if (last !== undefined) editDrop(last, count);
    else this.edit(path, { baseLength: before.length, drop: count, text: "", textStart: 0 });
  }

  /** Start an explicit-edit entry at `path` (the node's pending entries are dropped: the edit restates them). */
  edit(path: Seg[], e: TextEdit): void {
    const node = this.nodeAt(path);
    this.kill(node);
    this.push(node, { kind: "ed", path, alive: true, baseLength: e.baseLength, drop: e.drop, text: e.text, textStart: e.textStart });
  }

  /**
   * Fold an explicit edit into what is pending at `path` when that is cheap and exact: into a set payload
   * or a pending assignment (their value becomes `after`; returns null), or into the node's explicit
   * edit (returned). Undefined: start a new explicit entry.
   */
  private stringTail(path: Seg[], after: string): Extract<Entry, { kind: "ed" }> | null | undefined {
    const node = this.locate(path, false);
    if (!node) {
      setPlain(this.folded!.container, this.folded!.rest, after);
      return null;
    }
    const last = node.entries?.at(-1);
    if (last?.kind === "ed") return last;
    if (last?.kind === "str") {
      last.current = after;
      return null;
    }
    if (last?.kind === "s" && typeof last.value === "string") {
      last.value = after;
      return null;
    }
    return undefined;
  }

  splice(path: Seg[], index: number, remove: number, items: unknown[]): void {
    const node = this.locate(path, true);
    if (!node) {
      const arr = walkPlain(this.folded!.container, this.folded!.rest);
      spliceInto(arr as unknown[], index, remove, items);
      return;
    }
    const last = node.entries?.[node.entries.length - 1];
    // Merge into the previous splice only when nothing was recorded after it (it is the log's tail), and
    // the new splice lies within the items it inserted: push+push is one push, push+pop cancels.
    if (last?.kind === "p" && this.log[this.log.length - 1] === last) {
      const end = last.index + last.items.length;
      if (index >= last.index && index + remove <= end) {
        spliceInto(last.items, index - last.index, remove, items);
        if (last.items.length === 0 && last.remove === 0) {
          // Cancelled (push then pop): it is the tail of both lists, so it can simply be taken back.
          last.alive = false;
          this.live--;
          this.log.pop();
          node.entries!.pop();
        }
        return;
      }
    }
    if (node.kids) {
      (node.retired ??= []).push(...node.kids.values());
      node.kids = null;
    }
    this.push(node, { kind: "p", path, alive: true, index, remove, items });
  }

  /** Emit the pending window in record order and start a new one. */
  drain(maxOverlapScan: number): Op[] {
    const ops: Op[] = [];
    for (const e of this.log) {
      if (!e.alive) continue;
      const path = e.path as unknown as NonEmptyPath;
      switch (e.kind) {
        case "s":
          ops.push(["s", path, e.value]);
          break;
        case "d":
          ops.push(["d", path]);
          break;
        case "p":
          ops.push(["p", e.path, e.index, e.remove, e.items]);
          break;
        case "ed":
          editOps(e, path, ops);
          break;
        case "str":
          stringOps(e.anchor, e.current, path, maxOverlapScan, ops);
          break;
      }
    }
    this.clear();
    return ops;
  }

  private push(node: Node, e: Entry): void {
    (node.entries ??= []).push(e);
    this.log.push(e);
    this.live++;
    const dead = this.log.length - this.live;
    if (dead >= COMPACT_MIN_DEAD && dead * 2 >= this.log.length) this.log = this.log.filter((x) => x.alive);
  }

  private nodeAt(path: readonly Seg[]): Node {
    let node = this.trie;
    for (const seg of path) {
      let next = node.kids?.get(seg);
      if (!next) {
        next = newNode();
        (node.kids ??= new Map()).set(seg, next);
        this.nodes++;
      }
      node = next;
    }
    return node;
  }

  /** Where `locate` found a pending payload holding the path (valid right after it returned null). */
  private folded: { container: Container; rest: Seg[] } | null = null;

  /**
   * findFold and nodeAt in one walk: the node at `path` (created as needed), or null when a pending
   * payload already holds the path (then `folded` says where). A node created on the way has no
   * entries, so nothing below it can fold: nodes are only created when the answer is a node.
   */
  private locate(path: readonly Seg[], inclusive: boolean): Node | null {
    let node = this.trie;
    let fresh = false;
    const n = path.length;
    for (let d = 0; d < n; d++) {
      if (!fresh && node.entries !== null) {
        const last = node.entries[node.entries.length - 1];
        if (last?.kind === "s" && isContainer(last.value)) {
          this.folded = { container: last.value, rest: path.slice(d) };
          return null;
        }
        if (last?.kind === "p") {
          const i = path[d];
          if (typeof i === "number" && i >= last.index && i < last.index + last.items.length) {
            this.folded = { container: last.items, rest: [i - last.index, ...path.slice(d + 1)] };
            return null;
          }
        }
      }
      const seg = path[d]!;
      let next = fresh ? undefined : node.kids?.get(seg);
      if (!next) {
        next = newNode();
        (node.kids ??= new Map()).set(seg, next);
        this.nodes++;
        fresh = true;
      }
      node = next;
    }
    if (inclusive && !fresh && node.entries !== null) {
      const last = node.entries[node.entries.length - 1];
      if (last?.kind === "s" && isContainer(last.value)) {
        this.folded = { container: last.value, rest: [] };
        return null;
      }
    }
    return node;
  }

  /** Kill every entry at and below `node` (retired generations included); drop its descendants. */
  private kill(node: Node): void {
    if (node.entries) {
      for (const e of node.entries) {
        if (e.alive) {
          e.alive = false;
          this.live--;
        }
      }
      node.entries = null;
    }
    if (node.kids) {
      for (const kid of node.kids.values()) {
        this.kill(kid);
        this.nodes--;
      }
      node.kids = null;
    }
    if (node.retired) {
      for (const kid of node.retired) {
        this.kill(kid);
        this.nodes--;
      }
      node.retired = null;
    }
  }
}

function walkPlain(container: Container, rest: readonly Seg[]): Container {
  let node: Container = container;
  for (const seg of rest) node = (node as Record<Seg, unknown>)[seg] as Container;
  return node;
}

function setPlain(container: Container, rest: readonly Seg[], value: unknown): void {
  const parent = walkPlain(container, rest.slice(0, -1));
  const key = rest[rest.length - 1]!;
  defineData(parent, key, value);
}

function deletePlain(container: Container, rest: readonly Seg[]): void {
  const parent = walkPlain(container, rest.slice(0, -1)) as Record<Seg, unknown>;
  delete parent[rest[rest.length - 1]!];
}

/**
 * The ops that turn `anchor` into `current` at `path` (an append, a slide, or a set), by diff; returns
 * the front-drop of a slide (0 otherwise), which the caller may hand back as the next diff's `hint`.
 */
export function stringOps(anchor: string, current: string, path: NonEmptyPath, maxOverlapScan: number, ops: Op[], hint = 0): number {
  const edit = diffString(anchor, current, maxOverlapScan, hint);
  if (edit.kind === "set") ops.push(["s", path, edit.value]);
  else if (edit.kind === "append") ops.push(["a", path, edit.text]);
  else if (edit.kind === "slide") {
    ops.push(["t", path, edit.drop]);
    if (edit.text.length > 0) ops.push(["a", path, edit.text]);
    return edit.drop;
  }
  return 0;
}
