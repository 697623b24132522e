// Harness events. tool_start is identity only; the first tool_update of a call is a base batch that
// carries the initial state (caps included, as truncation.maxBytes/maxLines); tool_end resends nothing,
// because the fold of the updates *is* the result.
import type { Op } from "../delta/index.js";

export type HarnessEvent =
  | { readonly type: "operation_start"; readonly operationId: string }
  | { readonly type: "tool_start"; readonly operationId: string; readonly toolCallId: string; readonly toolName: string; readonly args: unknown }
  | { readonly type: "tool_update"; readonly operationId: string; readonly toolCallId: string; readonly ops: readonly Op[] }
  | { readonly type: "tool_end"; readonly operationId: string; readonly toolCallId: string; readonly isError: boolean }
  | { readonly type: "operation_end"; readonly operationId: string };

export type HarnessListener = (event: HarnessEvent) => void;
