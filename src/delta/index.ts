// spool/delta — the op vocabulary, the change tracker, apply/applyImmutable, the wire codec and
// validation. A leaf layer: it imports nothing else from the project.
export type { Seg, Path, NonEmptyPath, Op, WireOp, PathRef, ReplaceOp, SetOp, DeleteOp, AppendOp, TruncateOp, SpliceOp } from "./ops.js";
export { isBase, isReplace } from "./ops.js";
export { PathError, UnsafePathError, NotJsonError } from "./errors.js";
export { RESERVED_SEGMENTS, assertSafePath, assertValidOp, assertValidWireOp } from "./validate.js";
export { apply, applyImmutable } from "./apply.js";
export { encoder, decoder, type Encoder, type Decoder } from "./codec.js";
export { overlap } from "./overlap.js";
export { Rope } from "./rope.js";
export { track, type Tracker, type TrackOptions } from "./tracker.js";
export { toJsonPatch, type JsonPatchOperation } from "./jsonpatch.js";
