// spool/context — keeps the model's context valid and small: the provider-neutral message model and
// lossless adapters (Anthropic, OpenAI Chat, OpenAI Responses, AI SDK), pairing repair, result
// budgets with spill, progressive microcompaction, content detection, the content-addressed archive,
// recall, the session workspace, prepareHistory and environment configuration.
// Must not import capture internals, the wire layer, or anything above it (harness, cli).
export { LATE_RESULT_CODE, lateResultText } from "./late-result.js";
export { type IdRewrite } from "./id-collisions.js";
export { validateForProvider, validateWire, type ProviderProblem, type ProviderRule, type ProviderRuleOptions } from "./provider-rules.js";
export { describePrepareReport, type ReportContext } from "./report.js";
export { archiveKey, extractKeys, formatMarker, isValidKey, isWellFormed } from "./archive-key.js";
export { type ArchiveStats, type ArchiveStore, type KeyLookup } from "./archive-store.js";
export { MemoryArchive } from "./memory-archive.js";
export { parseStub, type ParsedStub, type StubLevel } from "./stubs.js";
export { imageInfo, type ImageInfo } from "./image-info.js";
export { DEFAULT_INPUT_MAX_CHARS } from "./call-inputs.js";
export { isImageStub, parseImageEntry } from "./image-stub.js";
export {
  assistant,
  systemText,
  textOf,
  toolCallsOf,
  toolResult,
  userText,
  type AssistantMessage,
  type AssistantPart,
  type ContentPart,
  type Extra,
  type Hints,
  type ImagePart,
  type Message,
  type RawPart,
  type SystemMessage,
  type TextPart,
  type ToolCallPart,
  type ToolResultMessage,
  type UserMessage,
} from "./messages.js";
export {
  ArchiveError,
  ConfigError,
  ContextError,
  FormatError,
  FormatMismatchError,
  PairingInvariantError,
  ProviderRuleError,
  RecallError,
  WorkspaceError,
} from "./errors.js";
export {
  SYNTHETIC_ERROR_CODE,
  SYNTHETIC_RESULT_TEXT,
  countPendingToolCalls,
  ensureToolResultPairing,
  hasRepairs,
  validatePairing,
  type PairingProblem,
  type PairingOptions,
  type PairingProblemKind,
  type PairingReport,
} from "./pairing.js";
export {
  DEFAULT_MAX_RESULT_CHARS,
  DEFAULT_TURN_BUDGET_CHARS,
  PREVIEW_HEAD_CHARS,
  PREVIEW_TAIL_CHARS,
  enforceToolResultBudget,
  type BudgetOptions,
  type BudgetReport,
} from "./budget.js";
export {
  DEFAULT_MICRO_HEAD_CHARS,
  DEFAULT_MICRO_TAIL_CHARS,
  DEFAULT_MIN_CONTENT,
  DEFAULT_PRESERVED_MAX_CHARS,
  DEFAULT_PRESERVED_TOOLS,
  DEFAULT_SUMMARIZE_MIN_CHARS,
  DEFAULT_SUMMARIZE_TURNS,
  DEFAULT_TRUNCATE_TURNS,
  applyMicrocompact,
  type MicrocompactOptions,
  type MicrocompactReport,
} from "./microcompact.js";
export { detectContentKind, type ContentKind } from "./content-kind.js";
export { describeLinePart } from "./line-part.js";
export { countLines, headTail, type HeadTail } from "./cut.js";
export { DEFAULT_ARCHIVE_MAX_BYTES, DEFAULT_ARCHIVE_TTL_MS, DiskArchive, type DiskArchiveOptions, type PruneResult } from "./disk-archive.js";
export {
  checkRecallMaxChars,
  DEFAULT_RECALL_MAX_CHARS,
  extractRecallKeys,
  isRecallTool,
  MIN_RECALL_MAX_CHARS,
  recall,
  type RecallOptions,
  type RecallResult,
} from "./recall.js";
export { createWorkspace, readOnlyLookup, type Workspace, type WorkspaceOptions } from "./workspace.js";
export { prepareHistory, type PrepareOptions, type PrepareReport } from "./prepare.js";
export { DEFAULT_CONTEXT_CONFIG, contextConfigFromEnv, contextConfigFromOptions, type ContextConfig } from "./config.js";
export {
  FORMATS,
  adapters,
  assertFormat,
  checkAISDK,
  checkAnthropic,
  checkOpenAIChat,
  checkOpenAIResponses,
  continuesServerState,
  detectFormat,
  fromAISDK,
  fromAnthropic,
  fromOpenAIChat,
  fromOpenAIResponses,
  getAdapter,
  toAISDK,
  toAnthropic,
  toOpenAIChat,
  toOpenAIResponses,
  unwrapConversation,
  type Adapter,
  type Conversation,
  type Format,
} from "./adapters/index.js";
