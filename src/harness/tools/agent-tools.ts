// The tools an agent surface (the MCP server, the AI SDK tools) offers, in one list: each surface
// iterates over it and binds every entry, so a new harness tool is added here once and appears on
// every surface with its name, description and JSON Schema.
import { createBashTool, type BashToolOptions } from "./bash.js";
import { createProcessTools } from "./process.js";
import { createReadTool } from "./read.js";
import { createRecallTool } from "./recall.js";
import type { ToolDefinition } from "../tool.js";

export interface AgentToolsOptions {
  /** Working directory of commands and of relative `read` paths (default: the process's). */
  readonly cwd?: string;
  readonly env?: BashToolOptions["env"];
  /** bash's bounded view (defaults: tail, 50 KiB, 2000 lines). */
  readonly maxBytes?: number;
  readonly maxLines?: number;
  readonly retain?: "head" | "tail";
  /** Seconds, for bash calls that give none (default: none). */
  readonly timeout?: number;
  /** Raw output a bash command may print once it spills; past it the command is stopped (default: no limit). */
  readonly maxSpillBytes?: number;
  /** Free space a bash command's spill must leave on its disk (default 256 MiB; 0 turns the check off). */
  readonly minFreeBytes?: number;
  /**
   * Offer recall (default true). It gives back text spool cut from the model's history, so only a
   * surface whose history spool prepares (spool/ai-sdk's prepareStep) has anything to recall.
   */
  readonly recall?: boolean;
  /** The longest recall answer in characters (default DEFAULT_RECALL_MAX_CHARS). */
  readonly recallMaxChars?: number;
  /** The surface can carry an image in a tool result: recall gives archived images back (RecallToolOptions.images). */
  readonly recallImages?: boolean;
}

// Tools take heterogeneous argument types; surfaces pass arguments through unchanged.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function createAgentTools(options: AgentToolsOptions = {}): ToolDefinition<any>[] {
  const cwd = options.cwd;
  return [
    createBashTool({
      ...(cwd !== undefined ? { cwd } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
      ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
      ...(options.maxLines !== undefined ? { maxLines: options.maxLines } : {}),
      ...(options.retain !== undefined ? { retain: options.retain } : {}),
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      ...(options.maxSpillBytes !== undefined ? { maxSpillBytes: options.maxSpillBytes } : {}),
      ...(options.minFreeBytes !== undefined ? { minFreeBytes: options.minFreeBytes } : {}),
    }),
    createReadTool({ anyFile: true, ...(cwd !== undefined ? { cwd } : {}) }),
    ...(options.recall === false
      ? []
      : [
          createRecallTool({
            ...(options.recallMaxChars !== undefined ? { maxChars: options.recallMaxChars } : {}),
            ...(options.recallImages === true ? { images: true } : {}),
          }),
        ]),
    // Background processes that bash's background/yieldSeconds hand over: read, write, kill, list.
    ...createProcessTools(),
  ];
}
