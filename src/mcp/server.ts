// The MCP server of one agent session: every harness tool the session offers, listed with its name,
// description and JSON Schema as they are (the low-level `Server` serves JSON Schema directly, so the
// tool table stays the harness's one list), each call run as its own operation. A request's abort
// signal — fired by `notifications/cancelled` — aborts the call, which ends the command's process
// group; the harness records the call as aborted with its output so far. A call with a progress token
// gets paced progress as its output changes, and a heartbeat while it prints nothing.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { givenValue } from "../errors/index.js";
import type { AgentSession } from "../harness/index.js";
import { createProgressPacer } from "./progress.js";
import { BASH_OUTPUT_SCHEMA, errorResult, toCallToolResult } from "./result.js";

export interface McpServerOptions {
  readonly name?: string;
  readonly version: string;
  /** Progress pacing per call (default 100 ms: ≤ 10 notifications per second). */
  readonly progressIntervalMs?: number;
  /**
   * A call with a progress token that sent nothing for this long (a command printing nothing) gets a
   * heartbeat progress saying how long it has run (default DEFAULT_HEARTBEAT_MS, 10 s; 0: none), so a
   * client that resets its request timeout on progress does not time it out.
   */
  readonly progressHeartbeatMs?: number;
}

const INSTRUCTIONS =
  "spool runs shell commands with bounded, cleaned output. A long output is cut to a window (the end by default) and the result's footer names a spill file holding the full raw output: page through it with `read` (offset/limit; column inside a line too long for one answer). Servers and watchers: bash with background: true returns a processId; process_output reads what is new, process_write types into it (pty: true gives it a terminal; a pty command that stops at a prompt returns at once with a processId to answer: a question, a password, a REPL such as node or python3), process_kill stops it.";

export function createMcpServer(session: AgentSession, options: McpServerOptions): Server {
  // The low-level Server (marked "for advanced use") because it serves JSON Schema tools as they are.
  const server = new Server({ name: options.name ?? "spool", version: options.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tools: Tool[] = session.tools.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.parameters as Tool["inputSchema"],
    ...(t.name === "bash" ? { outputSchema: BASH_OUTPUT_SCHEMA as unknown as Tool["outputSchema"] } : {}),
    annotations: { readOnlyHint: t.kind === "read", openWorldHint: t.kind === "exec" },
  }));
  const known = new Set(tools.map((t) => t.name));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    if (!known.has(name)) return errorResult(`Unknown tool ${givenValue(name)}. This server offers: ${[...known].join(", ")}.`);
    const token = request.params._meta?.progressToken;
    const pacer =
      token === undefined
        ? undefined
        : createProgressPacer(
            ({ progress, message }) => {
              extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message } }).catch(() => {
                // the client went away; the disconnect handling ends the call
              });
            },
            options.progressIntervalMs,
            options.progressHeartbeatMs,
          );
    try {
      const outcome = await session.call(name, args, { signal: extra.signal, ...(pacer ? { onUpdate: (s) => pacer.update(s) } : {}) });
      return toCallToolResult(name, outcome, session.workspace);
    } catch (err) {
      return errorResult(`spool could not run ${name}: ${(err as Error).message}`);
    } finally {
      pacer?.stop();
    }
  });
  return server;
}
