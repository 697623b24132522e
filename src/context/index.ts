// spool/context — keeps the model's context valid and small: the provider-neutral message model and
// lossless adapters (Anthropic, OpenAI Chat, OpenAI Responses, AI SDK), pairing repair, result
// budgets with spill, progressive microcompaction, content detection, the content-addressed archive,
// recall, the session workspace, prepareHistory and environment configuration.
// Must not import capture internals, the wire layer, or anything above it (harness, cli).
export * from "./messages.js";
export * from "./errors.js";
export * from "./pairing.js";
export { LATE_RESULT_CODE, lateResultText } from "./late-result.js";
export { rewriteCollidingIds, type IdRewrite } from "./id-collisions.js";
export { validateForProvider, validateWire, type ProviderProblem, type ProviderRule } from "./provider-rules.js";
export { isFailedCommandOutput } from "./failed-command.js";
export { describePrepareReport, type ReportContext } from "./report.js";
export * from "./budget.js";
export * from "./microcompact.js";
export * from "./content-kind.js";
export * from "./cut.js";
export { archiveKey, formatMarker, extractKeys, isValidKey, isWellFormed } from "./archive-key.js";
export type { ArchiveStore, ArchiveStats, KeyLookup } from "./archive-store.js";
export { MemoryArchive } from "./memory-archive.js";
export * from "./disk-archive.js";
export * from "./recall.js";
export * from "./workspace.js";
export * from "./prepare.js";
export * from "./config.js";
export { parseStub, type ParsedStub, type StubLevel } from "./stubs.js";
export * from "./adapters/index.js";
export { normaliseToolName } from "./tool-name.js";
