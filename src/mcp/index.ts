// spool/mcp — the Model Context Protocol server: the tools an agent session offers (bash, read, the
// background-process tools, whatever the harness adds to that list) for MCP clients, with paced progress notifications,
// cancellation that ends the command's process group, and disconnect handling over stdio.
// Must not know about CLI argument parsing; it is handed an open agent session.
export { createMcpServer, type McpServerOptions } from "./server.js";
export { serveStdio, type DisconnectReason } from "./stdio.js";
export { createProgressPacer, DEFAULT_HEARTBEAT_MS, latestLine, type ProgressPacer, type ProgressUpdate } from "./progress.js";
export { toCallToolResult, bashStructured, BASH_OUTPUT_SCHEMA, type BashStructured } from "./result.js";
export {
  DEFAULT_IDLE_TIMEOUT_S,
  DEFAULT_MAX_MCP_SESSIONS,
  MAX_IDLE_TIMEOUT_S,
  serveHttp,
  type HttpEndReason,
  type HttpOptions,
  type HttpServing,
} from "./http.js";
