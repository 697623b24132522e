// What a tool is to the harness. `execute` returns nothing: it writes into its sink, and a throw is
// the error (partial output and the error text both survive).
import { SpoolError } from "../errors/index.js";
import type { Retain } from "../capture/index.js";
import type { Workspace } from "../context/index.js";
import type { ToolOutput } from "../output/index.js";
import type { ProcessHost } from "./processes.js";

export interface ToolContext {
  readonly operationId: string;
  readonly toolCallId: string;
  readonly workspace: Workspace;
  /** The harness's background processes (bash with background/yieldSeconds, the process_* tools). */
  readonly processes: ProcessHost;
  /** A memo this call stored before (e.g. in a run that crashed), or undefined. */
  memoized<T>(name: string): T | undefined;
  /**
   * Store a memo and a base checkpoint of the output in one transaction, so a crash can never keep
   * the memo and lose the output it stands for (or the reverse). Write the work's output first.
   */
  memo(name: string, value: unknown): Promise<void>;
}

export interface ToolDefinition<Args = Record<string, unknown>> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly output?: { readonly retain?: Retain; readonly maxBytes?: number; readonly maxLines?: number };
  /** A per-tool cap on the result the model sees (the context layer's budget honours it). */
  readonly maxResultChars?: number;
  readonly kind?: "read" | "write" | "exec";
  /** May be run again after a crash: it is re-executed with its sink seeded from the recovered output. */
  readonly replaySafe?: boolean;
  execute(toolCallId: string, args: Args, signal: AbortSignal, out: ToolOutput, ctx: ToolContext): Promise<void> | void;
}

export interface ToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
}

export class HarnessError extends SpoolError {
  constructor(
    override readonly code:
      | "SPOOL_HARNESS_BAD_CALL"
      | "SPOOL_HARNESS_UNKNOWN_OPERATION"
      | "SPOOL_HARNESS_DUPLICATE_TOOL"
      | "SPOOL_HARNESS_OPERATION_OPEN"
      | "SPOOL_HARNESS_UNKNOWN_PROCESS"
      | "SPOOL_HARNESS_PROCESS_ENDED"
      | "SPOOL_HARNESS_ABORTED"
      | "SPOOL_HARNESS_INPUT_CLOSED",
    message: string,
  ) {
    super(code, message);
  }
}
