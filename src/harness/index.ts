// spool/harness — running tool calls end to end (events, durable output in ephemeral scopes, settlement
// with the transcript, crash recovery and seeded replay), the lane view, the replicated-state host and
// the built-in tools (bash, read, recall). It may import every layer below it; nothing below imports it.
export { createHarness, readDurableOutput, operationScope, outputList, OPEN_OPERATIONS } from "./harness.js";
export { readTranscript, transcriptEntries, transcriptLength, TRANSCRIPT } from "./transcript.js";
export type { Harness, HarnessOptions, OpenOperation, RecoveredCall, RecoveredOperation } from "./harness.js";
export { HarnessError, type ToolCall, type ToolContext, type ToolDefinition } from "./tool.js";
export type { HarnessEvent, HarnessListener } from "./events.js";
export { reduceCalls, reduceLane, emptyLane, type CallView, type LaneView, type LaneTool } from "./lane.js";
export { createStateHost, StateError, type MutableState, type StateHost, type BatchListener } from "./state.js";
export { bashDetails, createBashTool, type BashArgs, type BashDetails, type BashToolOptions } from "./tools/bash.js";
export { createProcessTools, formatProcessRead, type ProcessOutputArgs, type ProcessWriteArgs, type ProcessKillArgs } from "./tools/process.js";
export { describeStatus, MAX_WAIT_SECONDS, type ProcessHost, type ProcessInfo, type ProcessRead, type ProcessStatus } from "./processes.js";
export { createReadTool, type ReadArgs } from "./tools/read.js";
export { createRecallTool, recalledImageKey, type RecallArgs, type RecallToolOptions } from "./tools/recall.js";
export { createAgentTools, type AgentToolsOptions } from "./tools/agent-tools.js";
export type { ReadToolOptions } from "./tools/read.js";
export {
  openAgentSession,
  AgentSessionClosedError,
  type AgentSession,
  type AgentSessionOptions,
  type AgentSessionEnd,
  type AgentCallOutcome,
  type AgentCallOptions,
} from "./agent-session.js";
export { callRecord, SESSION_RECORD, type SessionRecord, type SessionStatus } from "./session-record.js";
export { endReason, MAX_REASON_CHARS } from "./end-reason.js";
export { visibleText } from "./visible-text.js";
