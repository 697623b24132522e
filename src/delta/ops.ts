// The op vocabulary: six verbs, tuples everywhere (memory, wire, disk). A Chord client reads our
// stream and we read theirs.
export type Seg = string | number;
export type Path = readonly Seg[];
export type NonEmptyPath = readonly [Seg, ...Seg[]];

export type ReplaceOp = readonly ["r", unknown];
export type SetOp = readonly ["s", NonEmptyPath, unknown];
export type DeleteOp = readonly ["d", NonEmptyPath];
export type AppendOp = readonly ["a", NonEmptyPath, string];
export type TruncateOp = readonly ["t", NonEmptyPath, number];
export type SpliceOp = readonly ["p", Path, number, number, readonly unknown[]];
export type Op = ReplaceOp | SetOp | DeleteOp | AppendOp | TruncateOp | SpliceOp;

/** A path on the wire: inline, or the numeric id of a path interned earlier in the stream. */
export type PathRef = Path | number;
export type WireOp =
  | readonly ["r", unknown]
  | readonly ["#", number, Path]
  | readonly ["s", PathRef, unknown]
  | readonly ["s", unknown]
  | readonly ["d", PathRef]
  | readonly ["d"]
  | readonly ["a", PathRef, string]
  | readonly ["a", string]
  | readonly ["t", PathRef, number]
  | readonly ["t", number]
  | readonly ["p", PathRef, number, number, readonly unknown[]]
  | readonly ["p", number, number, readonly unknown[]];

/** A batch is a base when its first op replaces the root; a flush puts `r` first or nowhere. */
export function isBase(ops: readonly (Op | WireOp)[]): boolean {
  return ops.length > 0 && ops[0]![0] === "r";
}

export function isReplace(op: Op | WireOp): op is ReplaceOp {
  return op[0] === "r";
}
