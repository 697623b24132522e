// `spool run`: run a command as the harness's bash tool, recorded as a session in
// `<root>/sessions/<id>/` (durable log, spill, recovery and wire all exactly as a library user gets
// them), show it live, and print the model-facing result and the session path. With --serve the
// viewer follows it in a browser. The exit status is the command's.
import { parseArgs } from "node:util";
import { join, relative } from "node:path";
import { createWorkspace } from "../context/index.js";
import { applyImmutable } from "../delta/index.js";
import { createBashTool, createHarness, createStateHost, newSessionId, OPEN_OPERATIONS, readTranscript, type MutableState } from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import { openSessionRepo, setValue, type Store } from "../store/index.js";
import type { Command } from "./commands.js";
import { createLiveDisplay } from "./run-live.js";
import { DEFAULT_ROOT, sessionsDir } from "./session-catalog.js";
import { directorySize, newSessionView, reduceSessionView, RUN_INFO, type RunInfo, type SessionSummary, type SessionView } from "./session-view.js";
import { startViewerServer } from "./viewer-server.js";

const USAGE = `Usage: spool run [options] -- COMMAND...

Runs COMMAND in a shell (its own process group) as spool's bash tool, records the run as a session
in <root>/sessions/<id>/, shows its output live on stderr, and prints the bounded result on stdout:
the kept text, a footer saying what was kept and where the full output is, the status, and the
session path. The exit status is the command's.

Options:
  --max-bytes N      keep at most N bytes of cleaned text (default 51200)
  --max-lines N      keep at most N lines (default 2000)
  --head | --tail    keep the start or the end of the output (default --tail)
  --timeout SECONDS  kill the process group after SECONDS
  --json             print {exitCode, signal, timedOut, aborted, binary, text, truncation, spillPath, session}
  --store KIND       session log backend: jsonl (default) or sqlite
  --root DIR         spool directory (default .spool); sessions go to DIR/sessions
  --session ID       add this run to an existing session instead of starting a new one
  --serve[=PORT]     serve the live viewer (prints its URL before the command starts) and keep
                     serving after the command ends until Ctrl-C
  --exit             with --serve: stop serving when the command ends
  -q, --quiet        show nothing while the command runs
  -h, --help         show this help`;

class UsageError extends Error {
  readonly code = "SPOOL_CLI_USAGE";
}

function positiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(v)) throw new UsageError(`--${name} needs a positive whole number, got "${v}"`);
  return Number(v);
}

/** POSIX shell quoting, so `spool run -- sh -c 'a b'` runs exactly those three words. */
const shellQuote = (word: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

interface RunArgs {
  command: string;
  maxBytes?: number;
  maxLines?: number;
  retain: "head" | "tail";
  timeoutMs?: number;
  json: boolean;
  quiet: boolean;
  store: "jsonl" | "sqlite";
  root: string;
  session?: string;
  serve: boolean;
  port?: number;
  exit: boolean;
}

function parse(args: readonly string[]): RunArgs | "help" {
  // --serve takes an optional value (--serve or --serve=PORT), which parseArgs cannot express.
  let serve = false;
  let port: number | undefined;
  const rest: string[] = [];
  let i = 0;
  for (; i < args.length && args[i] !== "--"; i++) {
    const arg = args[i]!;
    if (arg === "--serve") serve = true;
    else if (arg.startsWith("--serve=")) {
      serve = true;
      const v = arg.slice("--serve=".length);
      if (!/^\d+$/.test(v) || Number(v) > 65535) throw new UsageError(`--serve=PORT needs a port number 0-65535, got "${v}"`);
      port = Number(v);
    } else rest.push(arg);
  }
  rest.push(...args.slice(i));
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      "max-bytes": { type: "string" },
      "max-lines": { type: "string" },
      head: { type: "boolean" },
      tail: { type: "boolean" },
      timeout: { type: "string" },
      json: { type: "boolean" },
      store: { type: "string" },
      root: { type: "string" },
      session: { type: "string" },
      exit: { type: "boolean" },
      quiet: { type: "boolean", short: "q" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  if (values.head && values.tail) throw new UsageError("--head and --tail exclude each other");
  if (positionals.length === 0) throw new UsageError("no command given; put it after `--`");
  let timeoutMs: number | undefined;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 2_147_483) {
      throw new UsageError(`--timeout needs a number of seconds between 0 and 2147483, got "${values.timeout}"`);
    }
    timeoutMs = Math.round(seconds * 1000);
  }
  const store = values.store ?? "jsonl";
  if (store !== "jsonl" && store !== "sqlite") throw new UsageError(`--store must be jsonl or sqlite, got "${store}"`);
  if (values.exit && !serve) throw new UsageError("--exit only makes sense with --serve");
  const maxBytes = positiveInt("max-bytes", values["max-bytes"]);
  const maxLines = positiveInt("max-lines", values["max-lines"]);
  return {
    command: positionals.length === 1 ? positionals[0]! : positionals.map(shellQuote).join(" "),
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(maxLines !== undefined ? { maxLines } : {}),
    retain: values.head ? "head" : "tail",
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    json: values.json ?? false,
    quiet: values.quiet ?? false,
    store,
    root: values.root ?? DEFAULT_ROOT,
    ...(values.session !== undefined ? { session: values.session } : {}),
    serve,
    ...(port !== undefined ? { port } : {}),
    exit: values.exit ?? false,
  };
}

/** Runs already in the session (settled or not), so a new run gets fresh operation and call ids. */
function harnessRunNumber(store: Store): number {
  const open = Object.keys(store.get(OPEN_OPERATIONS) ?? {}).length;
  return readTranscript(store).length + open + 1;
}

function statusLine(state: ToolOutputState | undefined, exitCode: number, timeoutMs: number | undefined): string {
  const d = state?.details ?? {};
  if (d.timedOut) return `[Command timed out after ${(timeoutMs ?? 0) / 1000} seconds; exit code ${exitCode}]`;
  if (d.aborted) return `[Command aborted; exit code ${exitCode}]`;
  if (typeof d.signal === "string") return `[Command killed by ${d.signal}; exit code ${exitCode}]`;
  return `[Command exited with code ${exitCode}]`;
}

/** The model-facing text, verbatim, then the CLI's status line. */
function formatResult(text: string, state: ToolOutputState | undefined, exitCode: number, timeoutMs: number | undefined): string {
  const body = text.replace(/^\n+/, "").replace(/\n+$/, "");
  return `${body === "" ? "(no output)" : body}\n\n${statusLine(state, exitCode, timeoutMs)}\n`;
}

async function run(args: readonly string[]): Promise<number> {
  let a: RunArgs | "help";
  try {
    a = parse(args);
  } catch (err) {
    process.stderr.write(`spool run: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (a === "help") {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const root = sessionsDir(a.root);
  const repo = openSessionRepo(root, { backend: a.store });
  // A second writer on one session gets a clear "session is open in process N" from the store.
  const session = a.session !== undefined
    ? { id: a.session, dir: join(root, a.session), store: await repo.open(a.session) }
    : await repo.create({ id: newSessionId() });
  const store: Store = session.store;
  const seq = harnessRunNumber(store);
  const workspace = createWorkspace({ dir: session.dir, keep: true });
  const info: RunInfo = { command: a.command, cwd: process.cwd(), pid: process.pid, startedAt: new Date().toISOString(), endedAt: null, status: "running", exitCode: null };
  await store.commit([setValue(RUN_INFO, info)]);
  const harness = createHarness({
    store,
    workspace,
    tools: [createBashTool({ retain: a.retain, ...(a.maxBytes ? { maxBytes: a.maxBytes } : {}), ...(a.maxLines ? { maxLines: a.maxLines } : {}) })],
  });

  // The viewer's states follow the harness events like any other consumer.
  let viewer: Awaited<ReturnType<typeof startViewerServer>> | undefined;
  let sessionState: MutableState<SessionView> | undefined;
  let listState: MutableState<{ sessions: SessionSummary[] }> | undefined;
  const summary = (): SessionSummary => {
    const v = sessionState!.value;
    return { id: session.id, command: v.command, status: v.status, startedAt: v.startedAt, endedAt: v.endedAt, exitCode: v.exitCode, bytes: directorySize(session.dir) };
  };
  if (a.serve) {
    const host = createStateHost();
    sessionState = host.state(`session:${session.id}`, newSessionView(session.id, info));
    listState = host.state("sessions", { sessions: [] as SessionSummary[] });
    listState.mutate((d) => void d.sessions.push(summary()));
    harness.on((e) => sessionState!.mutate((v) => reduceSessionView(v, e)));
    try {
      viewer = await startViewerServer({ states: host, sessionsDir: root, ...(a.port !== undefined ? { port: a.port } : {}) });
    } catch (err) {
      await store.close();
      process.stderr.write(`spool run: ${(err as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`spool: viewer at ${viewer.pageUrl}\n`);
  }

  // Whatever happens below, a viewer we started must not keep the process alive.
  try {
    const live = a.quiet ? undefined : createLiveDisplay(process.stderr);
    let state: ToolOutputState | undefined;
    harness.on((e) => {
      if (e.type !== "tool_update") return;
      state = applyImmutable(state, e.ops);
      live?.update(e.ops, state);
    });
    // The command has its own process group, so a terminal's Ctrl-C reaches only spool: pass it on.
    const abort = new AbortController();
    const onSignal = (): void => abort.abort();
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    let text: string;
    try {
      const [result] = await harness.runTools(`op-${seq}`, [
        { toolCallId: `call-${seq}`, toolName: "bash", args: { command: a.command, ...(a.timeoutMs !== undefined ? { timeout: a.timeoutMs / 1000 } : {}) } },
      ], { signal: abort.signal });
      const first = result!.content[0];
      text = first && first.type === "text" ? first.text : "";
    } finally {
      live?.stop();
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
    const d = state?.details ?? {};
    const exitCode = typeof d.exitCode === "number" ? d.exitCode : 1;
    const status = d.aborted ? "interrupted" : exitCode === 0 ? "succeeded" : "failed";
    const end: RunInfo = {
      ...info,
      endedAt: new Date().toISOString(),
      status,
      exitCode,
      ...(state ? { truncation: state.truncation, details: state.details } : {}),
    };
    await store.commit([setValue(RUN_INFO, end)]);
    const transcript = viewer ? harness.transcript() : [];
    await store.close();
    const spillPath = typeof d.spillPath === "string" ? relative(process.cwd(), d.spillPath) || d.spillPath : null;
    const sessionPath = relative(process.cwd(), session.dir) || session.dir;
    if (a.json) {
      process.stdout.write(
        JSON.stringify({
          exitCode,
          signal: d.signal ?? null,
          timedOut: d.timedOut === true,
          aborted: d.aborted === true,
          binary: d.binary === true,
          text: state?.content[0].text ?? "",
          truncation: state?.truncation,
          spillPath,
          session: { id: session.id, dir: sessionPath },
        }) + "\n",
      );
    } else {
      process.stdout.write(formatResult(text, state, exitCode, a.timeoutMs) + `Session: ${sessionPath}\n`);
    }

    if (viewer && sessionState && listState) {
      sessionState.mutate((v) => {
        v.status = status;
        v.exitCode = exitCode;
        v.endedAt = end.endedAt;
        v.transcript = transcript;
      });
      listState.mutate((l) => void (l.sessions[0] = summary()));
      if (!a.exit) {
        process.stderr.write(`spool: still serving ${viewer.pageUrl} — press Ctrl-C to stop\n`);
        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
      }
      await viewer.close();
    }
    return exitCode;
  } catch (err) {
    await viewer?.close();
    throw err;
  }
}

export const runCommand: Command = {
  name: "run",
  summary: "run a command as a recorded session: bounded, cleaned output, lossless spill, optional live viewer",
  run,
};
