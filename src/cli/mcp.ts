// `spool mcp`: an MCP server on stdio. One process is one session under `<root>/sessions/<id>/`, so
// `spool sessions`, `spool inspect` and `spool serve` show its calls live and after a crash. stdout
// belongs to the protocol; everything for people goes to stderr. With --serve the viewer follows this
// session (its URL on stderr). The server stops when the client disconnects, ending running commands.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { createStateHost, openAgentSession, SESSION_RECORD, type MutableState } from "../harness/index.js";
import { createMcpServer, serveStdio } from "../mcp/index.js";
import type { Command } from "./commands.js";
import { UsageError, parseCount } from "./cli-errors.js";
import { DEFAULT_ROOT, sessionsDir } from "./session-catalog.js";
import { directorySize, newSessionView, reduceSessionView, type SessionSummary, type SessionView } from "./session-view.js";
import { startViewerServer, type ViewerServer } from "./viewer-server.js";

const USAGE = `Usage: spool mcp [options]

Runs an MCP server on stdio offering spool's tools — bash (bounded, cleaned output with a lossless
spill file), read (pages through any text file, spill files included) and recall (cut text back,
byte-identical). The process records one session in <root>/sessions/<id>/.

Options:
  --root DIR         spool directory (default .spool); the session goes to DIR/sessions
  --cwd DIR          working directory of commands and relative read paths (default: the current one)
  --max-bytes N      bash keeps at most N bytes of cleaned text (default 51200)
  --max-lines N      bash keeps at most N lines (default 2000)
  --timeout SECONDS  default timeout of bash calls that give none
  --serve[=PORT]     also serve the live viewer for this session (its URL goes to stderr)
  -h, --help         show this help

Add it to a client: claude mcp add spool -- npx spool mcp   (see the README for Codex, Cursor, VS Code)`;

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

async function run(args: readonly string[]): Promise<number> {
  // --serve takes an optional value, which parseArgs cannot express.
  let port: number | undefined;
  let serve = false;
  const rest = args.filter((a) => {
    if (a === "--serve") return !(serve = true);
    if (!a.startsWith("--serve=")) return true;
    const v = a.slice("--serve=".length);
    if (!/^\d+$/.test(v) || Number(v) > 65535) throw new UsageError(`--serve=PORT needs a port number 0-65535, got "${v}"`);
    serve = true;
    port = Number(v);
    return false;
  });
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      root: { type: "string" },
      cwd: { type: "string" },
      "max-bytes": { type: "string" },
      "max-lines": { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const maxBytes = parseCount("max-bytes", values["max-bytes"], 1);
  const maxLines = parseCount("max-lines", values["max-lines"], 1);
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && !(timeout > 0 && timeout <= 2_147_483)) throw new UsageError(`--timeout needs a number of seconds between 0 and 2147483, got "${values.timeout}"`);
  const root = values.root ?? DEFAULT_ROOT;

  const session = await openAgentSession({
    root,
    label: "mcp",
    tools: {
      ...(values.cwd !== undefined ? { cwd: resolve(values.cwd) } : {}),
      ...(maxBytes !== undefined ? { maxBytes } : {}),
      ...(maxLines !== undefined ? { maxLines } : {}),
      ...(timeout !== undefined ? { timeout } : {}),
    },
  });
  let viewer: ViewerServer | undefined;
  let sessionState: MutableState<SessionView> | undefined;
  let listState: MutableState<{ sessions: SessionSummary[] }> | undefined;
  const summary = (): SessionSummary => {
    const v = sessionState!.value;
    return { id: session.id, command: v.command, status: v.status, startedAt: v.startedAt, endedAt: v.endedAt, exitCode: v.exitCode, bytes: directorySize(session.dir) };
  };
  const server = createMcpServer(session, { version: packageVersion() });
  const stop = (): void => void server.close();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    if (serve) {
      const host = createStateHost();
      sessionState = host.state(`session:${session.id}`, newSessionView(session.id, session.store.get(SESSION_RECORD)!));
      listState = host.state("sessions", { sessions: [summary()] });
      session.harness.on((e) => {
        sessionState!.mutate((v) => reduceSessionView(v, e));
        if (e.type !== "operation_end") return;
        sessionState!.mutate((v) => void (v.transcript = session.harness.transcript()));
        listState!.mutate((l) => void (l.sessions[0] = summary()));
      });
      viewer = await startViewerServer({ states: host, sessionsDir: sessionsDir(root), ...(port !== undefined ? { port } : {}) });
      process.stderr.write(`spool mcp: viewer at ${viewer.pageUrl}\n`);
    }
    process.stderr.write(`spool mcp: session ${session.id} in ${session.dir}\n`);
    await serveStdio(server);
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await session.close();
    await viewer?.close();
  }
  return 0;
}

export const mcpCommand: Command = {
  name: "mcp",
  summary: "serve spool's tools (bash, read, recall) to an MCP client over stdio, recorded as a session",
  run,
};
