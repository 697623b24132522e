// `spool run`: run a command as the harness's bash tool, recorded as a session in
// `<root>/sessions/<id>/` (durable log, spill, recovery and wire all exactly as a library user gets
// them), show it live, and print the model-facing result and the session path. With --serve the
// viewer follows it in a browser. The exit status is the command's.
import { existsSync, fstatSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { isatty } from "node:tty";
import { join, relative } from "node:path";
import { prepareExec } from "../capture/index.js";
import { createWorkspace } from "../context/index.js";
import { applyImmutable } from "../delta/index.js";
import {
  bashDetails,
  callRecord,
  createBashTool,
  createHarness,
  createStateHost,
  OPEN_OPERATIONS,
  transcriptLength,
  type MutableState,
} from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";
import { currentOwner, DEFAULT_ROOT, ensureDir, newSessionId, openSessionRepo, sessionsDir, setValue, type Store } from "../store/index.js";
import { defineCommand, intOption, type OptionValues, sizeOption } from "./command.js";
import { EXIT } from "./exit.js";
import { createLiveDisplay } from "./run-live.js";
import {
  directorySize,
  newSessionView,
  reduceSessionView,
  RUN_INFO,
  type RunInfo,
  type SessionStatus,
  type SessionSummary,
  type SessionView,
} from "./session-view.js";
import { MAX_SPILL, MAX_SPILL_BYTES, MAX_WINDOW_BYTES, MAX_WINDOW_LINES, MIN_FREE, ROOT } from "./shared-options.js";
import { STORE, storeTarget, type StoreTarget } from "./store-option.js";
import { finishPostgresRun, postgresRepoOptions } from "./run-postgres.js";
import { parseDuration } from "./parse-duration.js";
import { createSpillTail } from "./spill-tail.js";
import { watchStdoutReader } from "./stdout-reader.js";
import { portInUse } from "./port-in-use.js";
import { UsageError } from "./usage-error.js";
import type { ViewerServer } from "./viewer-server.js";

const OPTIONS = {
  "max-bytes": {
    type: "string",
    value: "N",
    help: "keep at most N bytes of cleaned text (default 51200, 50K;\nsizes take K, M, G, T, each 1024 times the last: 64K, 1.5MiB)",
  },
  "max-lines": { type: "string", value: "N", help: "keep at most N lines (default 2000)" },
  head: { type: "boolean", help: "keep the start of the output" },
  tail: { type: "boolean", help: "keep the end of the output (the default)" },
  timeout: { type: "string", value: "SECONDS", help: "kill the process group after SECONDS (or with a unit: 90s, 5m, 2h, 1d;\nexit 124, as GNU timeout)" },
  "max-spill": MAX_SPILL,
  "min-free": MIN_FREE,
  pty: {
    type: "boolean",
    help: "run under a pseudo-terminal (the command sees a terminal: colour, progress\ndisplays); a display that redraws with cursor movement ends as its final screen;\nnothing types into it, so a command that prompts waits (give it --timeout)",
  },
  "no-stdin": {
    type: "boolean",
    help: "close the command's stdin (by default it reads spool's when that is a pipe,\na file, a socket or a device other than a terminal; a program that starts spool\nwith a pipe it never writes to leaves a command that reads stdin waiting)",
  },
  json: { type: "boolean", help: "print {exitCode, signal, timedOut, aborted, binary, text, truncation, spillPath, session}" },
  store: STORE,
  root: ROOT,
  session: { type: "string", value: "ID", help: "add this run to session ID (created when it does not exist yet)" },
  serve: {
    type: "string",
    value: "PORT",
    optionalValue: true,
    help: "serve the live viewer (its URL is printed before the command starts) and\nkeep serving after the command ends until Ctrl-C",
  },
  exit: { type: "boolean", help: "with --serve: stop serving when the command ends" },
  quiet: { type: "boolean", short: "q", help: "show nothing while the command runs" },
} as const;

/** POSIX shell quoting, so `spool run -- sh -c 'a b'` runs exactly those three words. */
const shellQuote = (word: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

interface RunArgs {
  command: string;
  maxBytes?: number;
  maxLines?: number;
  maxSpillBytes?: number;
  minFreeBytes?: number;
  retain: "head" | "tail";
  timeoutMs?: number;
  pty: boolean;
  /** The command reads spool's stdin (a pipe, a file or a socket, and not --no-stdin). */
  stdin: boolean;
  json: boolean;
  quiet: boolean;
  store: StoreTarget;
  root: string;
  session?: string;
  serve: boolean;
  port?: number;
  exit: boolean;
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;

function parse(values: OptionValues<typeof OPTIONS>, positionals: readonly string[]): RunArgs {
  if (values.head && values.tail) throw new UsageError("--head and --tail exclude each other");
  let timeoutMs: number | undefined;
  if (values.timeout !== undefined) {
    const seconds = parseDuration(values.timeout) ?? Number.NaN;
    // Checked in whole milliseconds, what the timer takes: 0.0001 would round to no timeout at all.
    if (!Number.isFinite(seconds) || Math.round(seconds * 1000) < 1 || seconds > 2_147_483) {
      throw new UsageError(`--timeout must be seconds from 0.001 to 2147483, or a number with a unit (s, m, h, d: 90s, 5m), got "${values.timeout}"`);
    }
    timeoutMs = Math.round(seconds * 1000);
  }
  const command = positionals.length === 1 ? positionals[0]! : positionals.map(shellQuote).join(" ");
  if (command.trim() === "") throw new UsageError("the command after -- is empty; give the command line to run");
  const store = storeTarget(values.store);
  const serve = values.serve !== undefined;
  if (values.exit && !serve) throw new UsageError("--exit only makes sense with --serve");
  const port = values.serve ? intOption("serve", values.serve, 0, 65535) : undefined;
  const maxBytes = sizeOption("max-bytes", values["max-bytes"], 1, MAX_WINDOW_BYTES);
  const maxLines = intOption("max-lines", values["max-lines"], 1, MAX_WINDOW_LINES);
  const maxSpillBytes = sizeOption("max-spill", values["max-spill"], 1, MAX_SPILL_BYTES);
  const minFreeBytes = sizeOption("min-free", values["min-free"], 0, MAX_SPILL_BYTES);
  return {
    command,
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(maxLines !== undefined ? { maxLines } : {}),
    ...(maxSpillBytes !== undefined ? { maxSpillBytes } : {}),
    ...(minFreeBytes !== undefined ? { minFreeBytes } : {}),
    retain: values.head ? "head" : "tail",
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    pty: values.pty ?? false,
    stdin: values["no-stdin"] !== true && stdinIsPiped(),
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
  return transcriptLength(store) + open + 1;
}

/** How the run ended: the session's status and spool's exit code (124 timed out, 130 Ctrl-C). */
function outcome(state: ToolOutputState | undefined, signal: NodeJS.Signals | undefined): { status: SessionStatus; exit: number } {
  const d = bashDetails(state?.details);
  const code = d.exitCode ?? EXIT.failure;
  if (d.timedOut) return { status: "timed out", exit: EXIT.timedOut };
  if (d.aborted) return { status: "interrupted", exit: signal === undefined || signal === "SIGINT" ? EXIT.interrupted : 128 + osConstants.signals[signal] };
  return { status: code === 0 ? "succeeded" : "failed", exit: code };
}

/** True when stdout and stderr are one file or pipe (`2>&1 | tee log`): what was streamed is not printed again. */
function sameStream(): boolean {
  try {
    const [o, e] = [fstatSync(1), fstatSync(2)];
    return o.dev === e.dev && o.ino === e.ino;
  } catch {
    return false;
  }
}

async function run(a: RunArgs): Promise<number> {
  // What the command's spawn needs (real pipes: `mkfifo`, a fork and an exec) is made while the session
  // is opened: the spawn waited ~4 ms for it here, 20-40 ms on a loaded machine.
  if (!a.pty) prepareExec();
  if (a.pty && a.stdin && stdinHasInput())
    process.stderr.write(
      `spool run: warning: under --pty the command's stdin is its terminal, so spool's piped stdin is not handed to it; drop --pty to pipe input to the command, or pipe inside the command (spool run --pty -- 'printf "y\\n" | CMD')\n`,
    );
  const root = sessionsDir(a.root);
  // Checked before anything starts: a root that cannot be created fails with its reason, at once.
  ensureDir(root);
  const id = a.session ?? newSessionId();
  const startedAt = new Date().toISOString();
  const info: RunInfo = { command: a.command, cwd: process.cwd(), ...currentOwner(), startedAt, endedAt: null, status: "running", exitCode: null };

  // The viewer starts first, so a port in use records no session for a command that never ran.
  let viewer: ViewerServer | undefined;
  let sessionState: MutableState<SessionView> | undefined;
  let listState: MutableState<{ sessions: SessionSummary[] }> | undefined;
  if (a.serve) {
    const host = createStateHost();
    sessionState = host.state(`session:${id}`, newSessionView(id, info));
    listState = host.state("sessions", { sessions: [] as SessionSummary[] });
    // Loaded only here: the HTTP server and its dependencies cost startup time on every plain run.
    const { startViewerServer } = await import("./viewer-server.js");
    try {
      viewer = await startViewerServer({ states: host, sessionsDir: root, ...(a.port !== undefined ? { port: a.port } : {}) });
    } catch (err) {
      throw portInUse(err, a.port, "pick another with --serve=PORT, or --serve for any free port (the command was not run)");
    }
  }

  try {
    const repo =
      a.store.kind === "postgres"
        ? openSessionRepo(root, { backend: "postgres", url: a.store.url, postgres: postgresRepoOptions() })
        : openSessionRepo(root, { backend: a.store.kind });
    // A second writer on one session gets a clear "session is open in process N" from the store.
    const session = a.session === undefined ? await repo.create({ id }) : await openOrCreate(repo, id, a.store.kind);
    const store: Store = session.store;
    const workspace = createWorkspace({ dir: session.dir, keep: true });
    const harness = createHarness({
      store,
      workspace,
      tools: [
        createBashTool({
          retain: a.retain,
          pty: a.pty,
          inheritStdin: a.stdin,
          // nobody here answers a prompt: the command waits for its input, or its --timeout
          atPrompt: () =>
            process.stderr.write(
              `spool run: the command is waiting for input on its terminal, and nothing types into it here; ${a.timeoutMs !== undefined ? "it ends at its --timeout" : "press Ctrl-C to stop it"}, or give it its input in the command (e.g. \`yes | …\`, a here-string).\n`,
            ),
          ...(a.maxBytes ? { maxBytes: a.maxBytes } : {}),
          ...(a.maxLines ? { maxLines: a.maxLines } : {}),
          ...(a.maxSpillBytes ? { maxSpillBytes: a.maxSpillBytes } : {}),
          ...(a.minFreeBytes !== undefined ? { minFreeBytes: a.minFreeBytes } : {}),
        }),
      ],
    });
    // A run SIGKILLed mid-command left its call open: it settles as interrupted, with the output it had
    // saved, before this run takes the next number (its tool_use would have no result otherwise).
    await harness.resumeLeftOpen();
    const seq = harnessRunNumber(store);
    // This call's own record (info), and the session's: its first start is kept across runs, and it
    // names the latest command, whose status and exit code it shows (the first command beside the
    // latest status read as "sleep 30: succeeded" when that run was killed). Each run keeps its own record.
    const previous = store.get(RUN_INFO);
    const sessionInfo: RunInfo = previous ? { ...info, startedAt: previous.startedAt } : info;
    await store.commit([setValue(RUN_INFO, sessionInfo), setValue(callRecord(`call-${seq}`), info)]);
    if (previous) sessionState?.mutate((v) => void (v.startedAt = sessionInfo.startedAt));
    const summary = (): SessionSummary => {
      const v = sessionState!.value;
      return {
        id,
        command: v.command,
        status: v.status,
        startedAt: v.startedAt,
        endedAt: v.endedAt,
        lastActivityAt: v.lastActivityAt,
        exitCode: v.exitCode,
        bytes: directorySize(session.dir),
      };
    };
    if (viewer) {
      listState!.mutate((d) => void d.sessions.push(summary()));
      harness.on((e) => sessionState!.mutate((v) => reduceSessionView(v, e)));
      process.stderr.write(`spool: viewer at ${viewer.pageUrl}\n`);
    }

    const live = a.quiet ? undefined : await createLiveDisplay(process.stderr, a.retain);
    let state: ToolOutputState | undefined;
    // On a database store the spill streams into the database while the command runs.
    const spillTail = createSpillTail(store);
    harness.on((e) => {
      if (e.type !== "tool_update") return;
      state = applyImmutable(state, e.ops);
      live?.update(state);
      const spill = state?.details.spillPath;
      if (typeof spill === "string") spillTail.see(spill);
    });
    // The command has its own process group, so a terminal's Ctrl-C reaches only spool: pass it on.
    const abort = new AbortController();
    let signal: NodeJS.Signals | undefined;
    const onSignal = (s: NodeJS.Signals): void => {
      signal ??= s;
      abort.abort();
    };
    // A closed terminal (SIGHUP) and SIGQUIT end the run as cleanly as Ctrl-C: result, session, exit code.
    for (const s of STOP_SIGNALS) process.on(s, onSignal);
    // `spool run -- yes 2>&1 | head -1`: the live lines and the result share one pipe, so a reader that
    // left it will read neither. The command ends as it would have in the pipeline without spool (SIGPIPE,
    // exit 141); it ran on into a full disk (2 min 46 s here). A stderr of its own that closes only stops
    // the live display.
    const readerGone = sameStream();
    const onStderrError = (err: NodeJS.ErrnoException): void => {
      if (readerGone && err.code === "EPIPE") onSignal("SIGPIPE");
    };
    process.stderr.on("error", onStderrError);
    // `spool run -- yes 2>/dev/null | true`: nothing is written to stdout before the end, so no EPIPE
    // tells that its reader left; a poll of the pipe does (stdout-reader.ts). The command ends as above,
    // in 0.32-0.43 s (120-220 MB of spill); it ran on to --max-spill 2 GB in 1.9-2.1 s, and without a
    // limit into the disk (`| head -1`, a reader still waiting: 193 s, 62 GB, ENOSPC past the floor).
    const stopReaderWatch = watchStdoutReader(() => onSignal("SIGPIPE"));
    let text: string;
    try {
      const [result] = await harness.runTools(
        `op-${seq}`,
        [{ toolCallId: `call-${seq}`, toolName: "bash", args: { command: a.command, ...(a.timeoutMs !== undefined ? { timeout: a.timeoutMs / 1000 } : {}) } }],
        { signal: abort.signal },
      );
      const first = result!.content[0];
      text = first && first.type === "text" ? first.text : "";
    } finally {
      live?.stop();
      for (const s of STOP_SIGNALS) process.off(s, onSignal);
      process.stderr.off("error", onStderrError);
      stopReaderWatch();
    }
    const d = bashDetails(state?.details);
    const exitCode = d.exitCode ?? EXIT.failure;
    const { status, exit } = outcome(state, signal);
    const end: RunInfo = { ...sessionInfo, endedAt: new Date().toISOString(), status, exitCode };
    const callEnd: RunInfo = { ...info, endedAt: end.endedAt, status, exitCode, ...(state ? { truncation: state.truncation, details: state.details } : {}) };
    await store.commit([setValue(RUN_INFO, end), setValue(callRecord(`call-${seq}`), callEnd)]);
    const transcript = viewer ? harness.transcript() : [];
    // A database session: the spill goes to the database too; a run whose database went away says so.
    const lost = await finishPostgresRun(store, spillTail, a.root, id);
    await store.close();
    const spillPath = d.spillPath !== undefined ? relative(process.cwd(), d.spillPath) || d.spillPath : null;
    const sessionPath = relative(process.cwd(), session.dir) || session.dir;
    if (signal === "SIGPIPE") {
      // Nobody reads stdout any more: the result is in the session.
    } else if (a.json) {
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
          session: { id, dir: sessionPath },
        }) + "\n",
      );
    } else {
      // The model-facing text once: it already ends with the status sentence when the command failed.
      // Lines already streamed into this same file or pipe are not printed again.
      const shown = live?.streamed && sameStream() ? live.rest(text) : text;
      const body = shown.replace(/^\n+/, "").replace(/\n+$/, "");
      process.stdout.write(`${body === "" ? (shown === text ? "(no output)\n" : "") : `${body}\n`}Session: ${sessionPath}\n`);
    }
    if (lost !== undefined) process.stderr.write(`spool run: ${lost}\n`);

    if (viewer && sessionState && listState) {
      sessionState.mutate((v) => {
        v.status = status;
        v.exitCode = exitCode;
        v.endedAt = end.endedAt;
        v.lastActivityAt = end.endedAt;
        v.transcript = transcript;
      });
      listState.mutate((l) => void (l.sessions[0] = summary()));
      if (!a.exit && signal === undefined) {
        process.stderr.write(`spool: still serving ${viewer.pageUrl} — press Ctrl-C to stop\n`);
        await new Promise<void>((resolve) => {
          process.once("SIGINT", () => resolve());
          process.once("SIGTERM", () => resolve());
        });
      }
    }
    // The command's own failure status stands; a run that succeeded but lost its database fails.
    return lost !== undefined && exit === 0 ? EXIT.failure : exit;
  } finally {
    await viewer?.close();
  }
}

/**
 * The command reads spool's stdin when that is a pipe, a file, a socket or a device (`cat f | spool run
 * -- grep x`, `< /dev/urandom`), as it would without spool; never a terminal, where nothing types (it stays closed, so a prompt
 * cannot hold the run). A program that starts spool with a pipe it never writes to or closes (Node's
 * spawn does by default) gives `--no-stdin`, or a command that reads stdin waits, as it would there.
 */
function stdinIsPiped(): boolean {
  try {
    const s = fstatSync(0);
    // A device that is not a terminal is read as the shell would hand it over: `< /dev/urandom` gave
    // `head -c 16` nothing at all. (`< /dev/null` reads as empty either way.)
    return s.isFIFO() || s.isFile() || s.isSocket() || (s.isCharacterDevice() && !isatty(0));
  } catch {
    return false;
  }
}

/**
 * Spool's stdin evidently holds input meant for the command: a pipe (`cat f | spool run`) or a file
 * that is not empty. Not a socket, what Node's spawn hands a child by default and mostly never writes
 * to, nor a device (`< /dev/null`): --pty would warn about input nobody gave.
 */
function stdinHasInput(): boolean {
  try {
    const s = fstatSync(0);
    return s.isFIFO() || (s.isFile() && s.size > 0);
  } catch {
    return false;
  }
}

/**
 * `--session ID`: continue the session, or start it under that id when it does not exist yet — also
 * in a directory that holds none (`mkdir`, a workspace, a crash before the log was written), where
 * `create` said "already exists" and `inspect` "no session". The lock keeps two such runs apart.
 */
async function openOrCreate(
  repo: ReturnType<typeof openSessionRepo>,
  id: string,
  kind: StoreTarget["kind"],
): Promise<{ id: string; dir: string; store: Store }> {
  // The same id on the other local backend: say which --store continues it (create would say "exists").
  const other = kind === "jsonl" ? "sqlite" : kind === "sqlite" ? "jsonl" : undefined;
  if (other !== undefined && !existsSync(join(repo.root, id, `session.${kind}`)) && existsSync(join(repo.root, id, `session.${other}`))) {
    throw new UsageError(`session ${id} is stored in ${other === "sqlite" ? "SQLite" : "JSONL"}; add --store ${other} to continue it`);
  }
  return { id, dir: join(repo.root, id), store: await repo.open(id, { create: true }) };
}

export const runCommand = defineCommand({
  name: "run",
  summary: "run a command as a recorded session: bounded, cleaned output, lossless spill, optional live viewer",
  synopsis: "[options] -- COMMAND...",
  description:
    "Runs COMMAND in a shell (its own process group) as spool's bash tool, records the run as a session\n" +
    "in DIR/sessions/<id>/, shows its output live on stderr (a live region on a terminal, each cleaned\n" +
    "line once otherwise), and prints the bounded result on stdout: the kept text, a footer saying what\n" +
    "was kept and where the full output is, the status when it failed, and the session path.\n" +
    "Exits with the command's status; 124 after --timeout, 130 after Ctrl-C. spool's options end at\n" +
    "COMMAND even without --: `spool run grep -q x f` runs `grep -q x f`.",
  options: OPTIONS,
  positionals: { min: 1, max: Number.MAX_SAFE_INTEGER, name: "a COMMAND (put it after --)" },
  optionsEndAtFirstPositional: true,
  run: (values, positionals) => run(parse(values, positionals)),
});
