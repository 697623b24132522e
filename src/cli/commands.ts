// The command table. Each command lives in its own file and is loaded only when it runs: an agent may
// wrap every shell command in `spool run`, so startup must not pay for the other commands' imports.
import type { Command } from "./command.js";

export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}

export const commands: readonly CommandEntry[] = [
  {
    name: "run",
    summary: "run a command as a recorded session: bounded, cleaned output, lossless spill, optional live viewer",
    load: async () => (await import("./run.js")).runCommand,
  },
  {
    name: "mcp",
    summary: "serve spool's tools (bash, read, background processes) to an MCP client over stdio, recorded as a session",
    load: async () => (await import("./mcp.js")).mcpCommand,
  },
  { name: "serve", summary: "serve the viewer for every recorded session (live ones streaming)", load: async () => (await import("./serve.js")).serveCommand },
  {
    name: "sessions",
    summary: "list recorded sessions (id, started, command, status, size)",
    load: async () => (await import("./sessions.js")).sessionsCommand,
  },
  {
    name: "inspect",
    summary: "summarise a session: calls, output sizes, truncation, spill files, open scopes, recovered output",
    load: async () => (await import("./inspect.js")).inspectCommand,
  },
  { name: "gc", summary: "remove old sessions and report what was freed", load: async () => (await import("./gc.js")).gcCommand },
  {
    name: "compact",
    summary: "repair, budget and compact a conversation file (prints it back in the same format)",
    load: async () => (await import("./compact.js")).compactCommand,
  },
  {
    name: "recall",
    summary: "print the original text behind an archive key or <<ccr:KEY>> marker",
    load: async () => (await import("./recall.js")).recallCommand,
  },
  { name: "fold", summary: "fold a stream of wire batches (JSON lines) and print the value", load: async () => (await import("./fold.js")).foldCommand },
  {
    name: "repair",
    summary: "cut a damaged JSONL session log back to its last good line (the cut part is kept)",
    load: async () => (await import("./repair.js")).repairCommand,
  },
];
