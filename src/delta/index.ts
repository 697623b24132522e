// spool/delta — the op vocabulary, the change tracker, apply/applyImmutable, the wire codec and
// validation. A leaf layer: it imports nothing else from the project.
export * from "./ops.js";
export * from "./errors.js";
