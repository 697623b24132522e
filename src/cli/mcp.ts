// `spool mcp`: an MCP server on stdio. One process is one session under `<root>/sessions/<id>/`, so
// `spool sessions`, `spool inspect` and `spool serve` show its calls live and after a crash. stdout
// belongs to the protocol; everything for people goes to stderr. With --serve the viewer follows this
// session (its URL on stderr). The server stops when the client disconnects, ending running commands;
// over --http (where each client gets an MCP session of its own, all recorded in the one spool
// session), when the last connected client ends its session or no request has been open for --idle-timeout.
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { createStateHost, openAgentSession, SESSION_RECORD, type MutableState } from "../harness/index.js";
import { createMcpServer, DEFAULT_IDLE_TIMEOUT_S, MAX_IDLE_TIMEOUT_S, serveHttp, serveStdio } from "../mcp/index.js";
import { DEFAULT_ROOT, sessionsDir } from "../store/index.js";
import { parseDuration } from "./parse-duration.js";
import { postgresRepoOptions } from "./run-postgres.js";
import { STORE, storeTarget } from "./store-option.js";
import { defineCommand, intOption, sizeOption } from "./command.js";
import { directorySize, newSessionView, reduceSessionView, type CallRun, type SessionSummary, type SessionView } from "./session-view.js";
import { directoryOption, MAX_SPILL, MAX_SPILL_BYTES, MAX_WINDOW_BYTES, MAX_WINDOW_LINES, MIN_FREE, ROOT } from "./shared-options.js";
import { checkPortFree, portInUse } from "./port-in-use.js";
import { UsageError } from "./usage-error.js";
import { startViewerServer, type ViewerServer } from "./viewer-server.js";

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

const HTTP_IN_USE = "pick another with --http PORT, or --http 0 for any free port";
const SERVE_IN_USE = "pick another with --serve=PORT, or --serve for any free port";

export const mcpCommand = defineCommand({
  name: "mcp",
  summary: "serve spool's tools (bash, read, background processes) to an MCP client over stdio, recorded as a session",
  synopsis:
    "[--root DIR] [--store STORE] [--cwd DIR] [--max-bytes N] [--max-lines N] [--max-spill N] [--min-free N] [--timeout SECONDS] [--serve[=PORT]] [--http PORT [--idle-timeout SECONDS]]",
  description:
    "Runs an MCP server on stdio offering spool's tools: bash (bounded, cleaned output with a lossless\n" +
    "spill file; background: true keeps a server or watcher running), read (pages through any text\n" +
    "file, spill files included) and process_output/write/kill/list for background processes. The\n" +
    "process records one session in DIR/sessions/<id>/ and stops when the client disconnects. Add it to a client: claude mcp add spool -- npx spool mcp (the README shows Codex,\n" +
    "Cursor and VS Code).",
  options: {
    root: ROOT,
    store: STORE,
    cwd: directoryOption("working directory of commands and relative read paths (default: the current one)"),
    "max-bytes": {
      type: "string",
      value: "N",
      help: "bash keeps at most N bytes of cleaned text (default 51200, 50K;\nsizes take K, M, G, T, each 1024 times the last: 64K, 1.5MiB)",
    },
    "max-lines": { type: "string", value: "N", help: "bash keeps at most N lines (default 2000)" },
    "max-spill": MAX_SPILL,
    "min-free": MIN_FREE,
    timeout: { type: "string", value: "SECONDS", help: "default timeout of bash calls that give none (or with a unit: 5m)" },
    serve: { type: "string", value: "PORT", optionalValue: true, help: "also serve the live viewer for this session (its URL goes to stderr)" },
    http: {
      type: "string",
      value: "PORT",
      help: "serve MCP over Streamable HTTP on 127.0.0.1:PORT (0: any free port) instead of\nstdio; the URL and bearer token go to stderr; each client gets an MCP session of its\nown, all recorded in this one session",
    },
    "idle-timeout": {
      type: "string",
      value: "SECONDS",
      help: `with --http: end the session and its commands, as the last client's DELETE does, once\nno request has been open for SECONDS (default ${DEFAULT_IDLE_TIMEOUT_S}; 0: never; or with a\nunit: 30m)`,
    },
  },
  async run(values) {
    const maxBytes = sizeOption("max-bytes", values["max-bytes"], 1, MAX_WINDOW_BYTES);
    const maxLines = intOption("max-lines", values["max-lines"], 1, MAX_WINDOW_LINES);
    const maxSpillBytes = sizeOption("max-spill", values["max-spill"], 1, MAX_SPILL_BYTES);
    const minFreeBytes = sizeOption("min-free", values["min-free"], 0, MAX_SPILL_BYTES);
    const timeout = values.timeout === undefined ? undefined : (parseDuration(values.timeout) ?? Number.NaN);
    if (timeout !== undefined && !(Math.round(timeout * 1000) >= 1 && timeout <= 2_147_483))
      throw new UsageError(`--timeout must be seconds from 0.001 to 2147483, or a number with a unit (s, m, h, d: 90s, 5m), got "${values.timeout}"`);
    const port = values.serve ? intOption("serve", values.serve, 0, 65535) : undefined;
    const httpPort = intOption("http", values.http, 0, 65535);
    const idleTimeoutS = idleSeconds(values["idle-timeout"]);
    // Over stdio the end of input ends the session: an idle time there would only mislead.
    if (idleTimeoutS !== undefined && httpPort === undefined) throw new UsageError("--idle-timeout applies to --http only; add --http PORT or drop it");
    const root = values.root ?? DEFAULT_ROOT;
    const cwd = values.cwd === undefined ? undefined : resolve(values.cwd);
    // Refused now: every bash call would otherwise fail, with a sentence the model cannot act on.
    if (cwd !== undefined && !statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UsageError(`--cwd: ${JSON.stringify(values.cwd)} is not a directory; pass an existing one`);
    }

    // Looked at before the session is made: a port in use records no empty session.
    await checkPortFree(httpPort, HTTP_IN_USE);
    await checkPortFree(port, SERVE_IN_USE);
    const target = storeTarget(values.store);
    const session = await openAgentSession({
      root,
      ...(target.kind === "postgres"
        ? { backend: "postgres" as const, url: target.url, postgres: postgresRepoOptions({ announceEnd: true }) }
        : { backend: target.kind }),
      label: "mcp",
      // The client keeps its own history, so spool cuts nothing from it: there is nothing to recall.
      tools: {
        recall: false,
        ...(cwd !== undefined ? { cwd } : {}),
        ...(maxBytes !== undefined ? { maxBytes } : {}),
        ...(maxLines !== undefined ? { maxLines } : {}),
        ...(maxSpillBytes !== undefined ? { maxSpillBytes } : {}),
        ...(minFreeBytes !== undefined ? { minFreeBytes } : {}),
        ...(timeout !== undefined ? { timeout } : {}),
      },
    });
    const version = packageVersion();
    // Over stdio one; over HTTP one per client's MCP session, all on this one spool session.
    const newServer = () => createMcpServer(session, { version });
    let serving: { close(): Promise<unknown> } | undefined;
    // SIGINT and SIGTERM end it as the end of input does: every command and background process ended,
    // the session settled, exit 0. SIGTERM is a normal close, not an interruption to report as 128+n
    // (`spool run`'s 143 for a command it cut short): the MCP spec's stdio shutdown is "close the
    // server's input, then SIGTERM, then SIGKILL", and the SDK client (StdioClientTransport.close,
    // 1.32.2) does exactly that, 2 s apart, and never reads the exit code. `spool serve` also exits 0.
    const stop = (): void => void serving?.close().catch(() => undefined);
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    let viewer: ViewerServer | undefined;
    try {
      if (values.serve !== undefined) {
        const host = createStateHost();
        const view: MutableState<SessionView> = host.state(`session:${session.id}`, newSessionView(session.id, session.store.get(SESSION_RECORD)!));
        const summary = (): SessionSummary => {
          const v = view.value;
          return {
            id: session.id,
            command: v.command,
            status: v.status,
            startedAt: v.startedAt,
            endedAt: v.endedAt,
            exitCode: v.exitCode,
            bytes: directorySize(session.dir),
          };
        };
        const list = host.state("sessions", { sessions: [summary()] });
        // Each call's record (command, times, how it ended) joins its call in the view, as a stored
        // session's does: the status bar times calls from it. The start record is stored before the
        // call's first event, so it waits here until tool_start adds the call.
        const runs = new Map<string, CallRun>();
        const attachRun = (v: SessionView, id: string): void => {
          const call = v.calls.find((c) => c.id === id);
          const run = runs.get(id);
          if (call === undefined || run === undefined) return;
          call.run = run;
          if (run.endedAt !== null) runs.delete(id);
        };
        session.onCallRecord((id, r) => {
          runs.set(id, { command: r.command, startedAt: r.startedAt, endedAt: r.endedAt, exitCode: r.exitCode, status: r.status });
          view.mutate((v) => attachRun(v, id));
        });
        session.harness.on((e) => {
          view.mutate((v) => {
            reduceSessionView(v, e);
            if (e.type === "tool_start") attachRun(v, e.toolCallId);
          });
          if (e.type !== "operation_end") return;
          view.mutate((v) => void (v.transcript = session.harness.transcript()));
          list.mutate((l) => void (l.sessions[0] = summary()));
        });
        viewer = await startViewerServer({ states: host, sessionsDir: sessionsDir(root), ...(port !== undefined ? { port } : {}) }).catch((err: unknown) => {
          throw portInUse(err, port, SERVE_IN_USE);
        });
        process.stderr.write(`spool mcp: viewer at ${viewer.pageUrl}\n`);
      }
      process.stderr.write(`spool mcp: session ${session.id} in ${session.dir}\n`);
      if (httpPort === undefined) {
        const server = newServer();
        serving = server;
        await serveStdio(server);
      } else {
        const http = await serveHttp(newServer, { port: httpPort, ...(idleTimeoutS !== undefined ? { idleTimeoutS } : {}) }).catch((err: unknown) => {
          throw portInUse(err, httpPort, HTTP_IN_USE);
        });
        serving = http;
        process.stderr.write(`spool mcp: MCP over HTTP at ${http.url} (header "Authorization: Bearer ${http.token}")\n`);
        const idle = (await http.ended) === "idle";
        const idleFor = `no request from the client for ${idleTimeoutS ?? DEFAULT_IDLE_TIMEOUT_S} s (--idle-timeout)`;
        if (idle) process.stderr.write(`spool mcp: ${idleFor}: ending the session and its commands\n`);
        // Closed first, as after stdio's end: waiting for the lingering connections (up to 1 s) let a
        // call the client's DELETE cut off settle first, and the session read "succeeded". A session
        // the client never ended was interrupted, even where nothing ran in the foreground: what it left
        // in the background is ended here.
        await session.close(idle ? { status: "interrupted", reason: idleFor } : undefined);
        await http.close();
      }
    } finally {
      // The handlers stay until the session is closed: a client ends a server by closing stdin and,
      // if it has not exited soon after, SIGTERM — which would otherwise kill it mid-close and leave
      // its calls unsettled.
      try {
        await session.close();
        await viewer?.close();
      } finally {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
      }
    }
    return 0;
  },
});

/** --idle-timeout: whole seconds, with or without a unit (30m is 1800); 0 is never. */
function idleSeconds(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = parseDuration(raw);
  if (s === undefined || !Number.isInteger(s) || s > MAX_IDLE_TIMEOUT_S) {
    throw new UsageError(
      `--idle-timeout must be whole seconds from 0 (never) to 2147483, or a number with a unit (s, m, h, d: 30m), got ${JSON.stringify(raw)}`,
    );
  }
  return s;
}
