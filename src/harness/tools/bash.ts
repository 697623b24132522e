// bash: thin on purpose. The exec env captures with the tool's limits and spill; the tool maps each
// update onto its sink (append → write, anything else → replace of the bounded view) and records the
// spill path and truncation once, as plain mutation. With `background` or `yieldSeconds` the call
// returns when the command ends or the yield time is up, whichever is first; a command still
// running then becomes a background process (its own sink, read with process_output).
import {
  applyUpdate,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  describeTruncation,
  formatBytes,
  start,
  type CaptureUpdate,
  type CaptureView,
  type ExecResult,
} from "../../capture/index.js";
import { countOf, givenValue } from "../../errors/index.js";
import type { ToolOutput } from "../../output/index.js";
import { mirrorUpdate } from "../capture-target.js";
import { MAX_WAIT_SECONDS } from "../processes.js";
import { HarnessError, type ToolDefinition } from "../tool.js";
import { atPrompt } from "./at-prompt.js";
import { formatProcessRead } from "./process.js";

export interface BashArgs {
  readonly command: string;
  /** Seconds. */
  readonly timeout?: number;
  /** Return at once (or after yieldSeconds) and leave the command running as a background process. */
  readonly background?: boolean;
  /** Return after this many seconds if the command is still running; it keeps running in the background. */
  readonly yieldSeconds?: number;
  /** Run under a pseudo-terminal (for prompts, REPLs, programs that only draw progress on a terminal). */
  readonly pty?: boolean;
}

/**
 * What bash records in its output's `details`, the contract every reader shares (`spool run`, the
 * session view, the viewer's status bar): how the command ended and where its full output is.
 */
export interface BashDetails {
  exitCode?: number;
  signal?: string;
  timedOut?: true;
  aborted?: true;
  binary?: true;
  /** Absolute path of the spill file, once the output outgrew the window. */
  spillPath?: string;
  /** Set when the command was handed over to a background process. */
  processId?: string;
}

/** Reads bash's details from any tool output's details, keeping only well-typed fields. */
export function bashDetails(details: Readonly<Record<string, unknown>> | undefined): BashDetails {
  const d = details ?? {};
  const out: BashDetails = {};
  if (typeof d["exitCode"] === "number") out.exitCode = d["exitCode"];
  if (typeof d["signal"] === "string") out.signal = d["signal"];
  if (d["timedOut"] === true) out.timedOut = true;
  if (d["aborted"] === true) out.aborted = true;
  if (d["binary"] === true) out.binary = true;
  if (typeof d["spillPath"] === "string") out.spillPath = d["spillPath"];
  if (typeof d["processId"] === "string") out.processId = d["processId"];
  return out;
}

export interface BashToolOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly maxBytes?: number;
  readonly maxLines?: number;
  readonly retain?: "head" | "tail";
  /** Seconds, for calls that give no timeout of their own (default: none). */
  readonly timeout?: number;
  /** Run every command under a pseudo-terminal (`spool run --pty`). */
  readonly pty?: boolean;
  /** Commands not on a pty read this process's own stdin (`spool run` with its input piped in). Default: closed. */
  readonly inheritStdin?: boolean;
  readonly cols?: number;
  readonly rows?: number;
  /** Raw output a command may print once it spills; past it the command is stopped (spill.maxBytes). */
  readonly maxSpillBytes?: number;
  /** Free space a command's spill must leave on its disk (spill.minFreeBytes; default 256 MiB, 0 = off). */
  readonly minFreeBytes?: number;
  /**
   * What happens when a `pty` command stops at a prompt (quiet, and reading its terminal). Default
   * "hand over": it becomes a background process at once, so the model can answer it with
   * process_write, instead of waiting for its timeout. A function is called once instead, and the
   * call goes on waiting (`spool run`, where nobody answers, says so on stderr).
   */
  readonly atPrompt?: "hand over" | (() => void);
}

// Node's timers hold at most 2^31-1 ms; a longer timeout would fire at once.
const MAX_TIMEOUT_SECONDS = 2_147_483;

function checkArgs(args: BashArgs): void {
  if (typeof args !== "object" || args === null || typeof args.command !== "string" || args.command.trim() === "") {
    throw new HarnessError("SPOOL_HARNESS_BAD_CALL", 'bash needs a non-empty "command" string argument');
  }
  if (args.command.includes("\0")) {
    // The OS cannot take it in an argument; spawning said "check that the shell exists".
    throw new HarnessError(
      "SPOOL_HARNESS_BAD_CALL",
      `bash "command" contains a NUL character (\\u0000), which no command line can hold; write it as printf '\\0'`,
    );
  }
  if (args.timeout !== undefined && !(typeof args.timeout === "number" && args.timeout > 0 && args.timeout <= MAX_TIMEOUT_SECONDS)) {
    throw new HarnessError(
      "SPOOL_HARNESS_BAD_CALL",
      `bash "timeout" must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, got ${givenValue(args.timeout)}`,
    );
  }
  if (args.yieldSeconds !== undefined && !(typeof args.yieldSeconds === "number" && args.yieldSeconds >= 0 && args.yieldSeconds <= MAX_WAIT_SECONDS)) {
    throw new HarnessError(
      "SPOOL_HARNESS_BAD_CALL",
      `bash "yieldSeconds" must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}, got ${givenValue(args.yieldSeconds)}`,
    );
  }
  for (const flag of ["background", "pty"] as const) {
    if (args[flag] !== undefined && typeof args[flag] !== "boolean") {
      throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `bash "${flag}" must be true or false, got ${givenValue(args[flag])}`);
    }
  }
}

/**
 * A command that ends with `server &` has its server ended with it (the exit grace, capture/exec.ts):
 * without this the model learns it only when the next call finds nothing listening. `background`: the surface
 * offers background processes (not `spool run`, where nobody reads them).
 */
function leftoverNote(background: boolean): string {
  const keep = background ? " To keep a server or watcher running, start it with background: true (and read it with process_output)." : "";
  return `[The command left processes running in the background (such as \`… &\`); they were stopped when it exited.${keep}]`;
}

const OUTSIDE_WRITER_NOTE =
  "[A process the command started outside its process group (setsid, a daemon) kept writing to its output; spool stopped reading it a second after the command ended, so that process's next write fails (or, where it wrote into spool's output file, it was ended). Send such a process's output to a file (`… > server.log 2>&1 &`).]";

/** How the command ended, as plain details and a footer; throws for a failed command. */
function finish(out: ToolOutput, result: ExecResult, retain: "head" | "tail", timeout: number | undefined, background: boolean): void {
  if (out.state.content[0].text !== result.text) out.replace(result.text);
  out.capture(result);
  if (result.spillPath !== undefined && out.details.spillPath !== result.spillPath) out.details.spillPath = result.spillPath;
  // How it ended, as plain details: a viewer shows it, and `spool run` exits with it.
  out.details.exitCode = result.exitCode;
  if (result.signal) out.details.signal = result.signal;
  if (result.timedOut) out.details.timedOut = true;
  if (result.aborted) out.details.aborted = true;
  if (result.binary) out.details.binary = true;
  const leftovers = result.endedLeftovers && !result.timedOut && !result.aborted;
  const notes = [
    describeTruncation(result, retain),
    leftovers ? leftoverNote(background) : undefined,
    result.outsideWriter ? OUTSIDE_WRITER_NOTE : undefined,
  ].filter((n): n is string => n !== undefined);
  // One empty line between the output and its notes; with no output, the notes alone (a leading
  // empty line read as output that was blank).
  const gap = result.text === "" ? "" : result.text.endsWith("\n") ? "\n" : "\n\n";
  if (notes.length > 0) out.footer(`${gap}${notes.join("\n")}`);
  // Without a timeout of its own, the signal's (a TimeoutError) ended it: its run time says when.
  if (result.timedOut) throw new Error(`Command timed out after ${timeout ?? Math.round(result.durationMs / 100) / 10}s; its process group was killed`);
  if (result.aborted) throw new Error(`Command aborted (exit ${result.exitCode})`);
  // A signal as the cause, as process_output says it: "exited with code 137" reads like an error code
  // of the program's own (bash -c execs a lone command, so an OOM kill or a segfault ends the shell itself).
  if (result.signal) throw new Error(`Command was killed by ${result.signal} (exit ${result.exitCode})`);
  if (result.exitCode !== 0) throw new Error(`Command exited with code ${result.exitCode}`);
}

export function createBashTool(options: BashToolOptions = {}): ToolDefinition<BashArgs> {
  const output = {
    retain: options.retain ?? "tail",
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    maxLines: options.maxLines ?? DEFAULT_MAX_LINES,
  } as const;
  // The bound in numbers: a model that knows it gets the last 2000 lines can ask for the start (head)
  // or filter (grep) up front instead of learning it from a cut result.
  const kept = `the ${output.retain === "head" ? "first" : "last"} ${countOf(output.maxLines, "line")} or ${formatBytes(output.maxBytes)}`;
  return {
    name: "bash",
    description:
      // "\\r": a template's "\r" put a raw carriage return in the description every client shows its model.
      `Run a shell command. Output (stdout and stderr interleaved) is cleaned (ANSI codes removed, \\r redraws collapsed) and bounded to ${kept}, whichever is less; when it is cut, the result says what was kept and names a file with the full output that the read tool can page through. ` +
      (options.inheritStdin === true
        ? ""
        : "Its stdin is empty, so a prompt gets end of file at once: pipe the answer in (printf 'y\\n' | cmd) or use pty (below). ") +
      "For servers, watchers and long builds pass background: true (or yieldSeconds): the call returns with a processId and the command keeps running; read it with process_output, type into it with process_write (pty: true gives it a terminal, for prompts and REPLs; a pty command that stops at a prompt returns at once with a processId to answer), stop it with process_kill.",
    parameters: {
      type: "object",
      properties: {
        // Said because a model used to a persistent shell runs `cd sub` in one call and the build in the next.
        command: {
          type: "string",
          description: `The command line, run with bash -c in ${options.cwd ?? process.cwd()}: each call is a fresh shell, so cd and variables do not carry over (cd dir && …).`,
        },
        timeout: {
          type: "number",
          description: `Seconds before the command's process group is killed (above 0, at most ${MAX_TIMEOUT_SECONDS}; default ${options.timeout !== undefined ? `${options.timeout}` : "none"}).`,
        },
        background: { type: "boolean", description: "Return at once (or after yieldSeconds) and keep the command running as a background process." },
        yieldSeconds: {
          type: "number",
          minimum: 0,
          maximum: MAX_WAIT_SECONDS,
          description: `Return after this many seconds (0-${MAX_WAIT_SECONDS}) if the command is still running; it keeps running in the background.`,
        },
        pty: { type: "boolean", description: "Run under a pseudo-terminal: the program sees a terminal (prompts, REPLs, progress displays)." },
      },
      required: ["command"],
    },
    output,
    kind: "exec",
    async execute(toolCallId, args, signal, out, ctx) {
      checkArgs(args);
      const timeout = args.timeout ?? options.timeout;
      const pty = args.pty ?? options.pty ?? false;
      const yieldMs = args.yieldSeconds !== undefined ? args.yieldSeconds * 1000 : args.background ? 0 : undefined;
      const retain = yieldMs !== undefined ? "tail" : output.retain;
      // A command that may outlive this call must not die with the call's signal once it is handed over.
      const control = new AbortController();
      // With the signal's reason: a TimeoutError (the AI SDK's per-tool timeout) ends it as timed out.
      const onAbort = (): void => control.abort(signal.reason);
      if (signal.aborted) control.abort(signal.reason);
      else signal.addEventListener("abort", onAbort, { once: true });
      let view: CaptureView | undefined;
      let receiver = (u: CaptureUpdate): void => {
        const previous = view;
        view = applyUpdate(view, u);
        mirrorUpdate(out, previous, view, u);
      };
      const handle = start(args.command, {
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        ...(options.env !== undefined ? { env: options.env } : {}),
        ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
        ...(pty
          ? { pty: true, ...(options.cols !== undefined ? { cols: options.cols } : {}), ...(options.rows !== undefined ? { rows: options.rows } : {}) }
          : {}),
        ...(pty ? {} : yieldMs !== undefined ? { stdin: "pipe" as const } : options.inheritStdin === true ? { stdin: "inherit" as const } : {}),
        signal: control.signal,
        capture: {
          limits: { ...output, retain },
          spill: {
            dir: ctx.workspace.dir,
            id: toolCallId,
            ...(options.maxSpillBytes !== undefined ? { maxBytes: options.maxSpillBytes } : {}),
            ...(options.minFreeBytes !== undefined ? { minFreeBytes: options.minFreeBytes } : {}),
          },
        },
        onUpdate: (u) => receiver(u),
      });
      // On a pty, a prompt hands the command over (or is reported, with atPrompt a function).
      const watch = yieldMs === undefined && pty ? atPrompt(handle) : undefined;
      const onPrompt = options.atPrompt;
      if (watch !== undefined && typeof onPrompt === "function") void watch.promise.then(onPrompt);
      const prompt = typeof onPrompt === "function" ? undefined : watch;
      try {
        // Handed over as a background process after yieldMs, or at a prompt.
        if (yieldMs !== undefined || prompt !== undefined) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const ended = await Promise.race([
            handle.result.then(
              () => true,
              () => true,
            ),
            prompt !== undefined
              ? prompt.promise.then(() => false as const)
              : new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), yieldMs))),
          ]);
          clearTimeout(timer);
          if (!ended) {
            signal.removeEventListener("abort", onAbort);
            const seed = structuredClone(out.state);
            const processId = ctx.processes.adopt({ handle, command: args.command, pty, seed, view, redirect: (r) => (receiver = r) });
            const first = await ctx.processes.read(processId, 0);
            const note =
              prompt !== undefined
                ? `\n[It has gone quiet while reading its terminal, most likely at a prompt: answer with process_write {"processId": "${processId}", "input": "…\\n"}, or stop it with process_kill.]`
                : "";
            out.replace(formatProcessRead(first) + note);
            out.details.processId = processId;
            if (first.spillPath !== undefined) out.details.spillPath = first.spillPath;
            return;
          }
        }
        // spool run reports a prompt (atPrompt a function) and reads no background process.
        finish(out, await handle.result, output.retain, timeout, typeof onPrompt !== "function");
      } finally {
        watch?.cancel();
        signal.removeEventListener("abort", onAbort);
      }
    },
  };
}
