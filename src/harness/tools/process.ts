// The tools over background processes: process_output (what is new, optionally waiting for it),
// process_write (input, then what is new), process_kill and process_list. Every argument comes from
// a model, so each is checked and refused with one clear sentence.
import { formatBytes, isHighSurrogate } from "../../capture/index.js";
import { countOf, givenValue } from "../../errors/index.js";
import { describeStatus, MAX_WAIT_SECONDS, type ProcessRead, type ProcessStatus } from "../processes.js";
import { HarnessError, type ToolDefinition } from "../tool.js";

export interface ProcessOutputArgs {
  readonly processId: string;
  readonly waitSeconds?: number;
}
export interface ProcessWriteArgs extends ProcessOutputArgs {
  readonly input: string;
  /** Close its input after this one (end of file), for a program that reads its input to the end. */
  readonly end?: boolean;
}
export interface ProcessKillArgs {
  readonly processId: string;
}

/** What a read shows the model: what it missed (exactly), the new text, and the status. */
export function formatProcessRead(r: ProcessRead): string {
  const parts: string[] = [];
  if (r.skippedLines > 0) {
    parts.push(
      `[${countOf(r.skippedLines, "line")} (${formatBytes(r.skippedBytes)}) printed since the last read left the window before this read. ` +
        `${r.spillPath !== undefined ? `Full output: ${r.spillPath}` : "The full output was not kept."}]\n`,
    );
  }
  parts.push(r.text === "" ? "(no new output)\n" : r.text.endsWith("\n") ? r.text : `${r.text}\n`);
  if (r.cutLines > 0) {
    // A cut line ends in "[… N bytes cut from this line]": say where the rest of it is, as bash's footer does.
    const where = r.spillPath !== undefined ? `Full output: ${r.spillPath}` : "The full output was not kept.";
    parts.push(`[${countOf(r.cutLines, "over-long line was", "over-long lines were")} cut. ${where}]\n`);
  }
  const s = r.status;
  parts.push(`[${describeStatus(r.processId, s)}${s.state === "running" ? "; process_output reads what it prints next" : ""}]`);
  return parts.join("");
}

/** One line per process: a stopped one gives the first sentence of why (process_output has it all). */
function listedStatus(processId: string, s: ProcessStatus): string {
  if (s.state === "running") return "running";
  const text = describeStatus(processId, s).replace(/^process \S+ /, "");
  return s.state === "failed" ? text.replace(/\. .*$/s, "") : text;
}

/**
 * What process_list shows at most: 100 processes (every running one first), each command on one line
 * of at most 200 chars. It listed every process with its whole command: 200 background commands of
 * 2 KB made a 408 KB answer, and a heredoc's newlines broke the one line a process gets.
 */
const LISTED_PROCESSES = 100;
const LISTED_COMMAND_CHARS = 200;

/** A command as process_list shows it: its line breaks as ⏎, clipped with its length said. */
function listedCommand(command: string): string {
  const line = command.replace(/[ \t]*(?:\r\n|\r|\n)\s*/g, " ⏎ ");
  if (line.length <= LISTED_COMMAND_CHARS) return line;
  const suffix = `… (${command.length} chars)`;
  let end = LISTED_COMMAND_CHARS - suffix.length;
  if (isHighSurrogate(line.charCodeAt(end - 1))) end--;
  return line.slice(0, end) + suffix;
}

/** The processes shown, in start order: running ones first in choosing (the newest of them), then the newest ended ones. */
function shownProcesses<T extends { status: ProcessStatus }>(all: readonly T[]): { shown: T[]; hidden: number; hiddenRunning: number } {
  if (all.length <= LISTED_PROCESSES) return { shown: [...all], hidden: 0, hiddenRunning: 0 };
  const running = all.map((_, i) => i).filter((i) => all[i]!.status.state === "running");
  const ended = all.map((_, i) => i).filter((i) => all[i]!.status.state !== "running");
  // slice(-0) is the whole list: the room left for ended ones is counted from the end explicitly.
  const room = Math.max(0, LISTED_PROCESSES - running.length);
  const kept = new Set([...running.slice(-LISTED_PROCESSES), ...ended.slice(Math.max(0, ended.length - room))]);
  const shown = all.filter((_, i) => kept.has(i));
  return { shown, hidden: all.length - shown.length, hiddenRunning: Math.max(0, running.length - LISTED_PROCESSES) };
}

function bad(tool: string, message: string): HarnessError {
  return new HarnessError("SPOOL_HARNESS_BAD_CALL", `${tool}: ${message}`);
}

function checkId(tool: string, args: unknown): string {
  const id = (args as { processId?: unknown } | null)?.processId;
  if (typeof id !== "string" || id.length === 0) throw bad(tool, 'needs a "processId" string (bash returns it; process_list lists them)');
  // Said as what it is: "needs a string" for a 10,000-char string read as a type error.
  if (id.length > 200) throw bad(tool, `"processId" is ${id.length} characters; a processId looks like proc-1abcd (bash returns it; process_list lists them)`);
  return id;
}

function checkWait(tool: string, args: unknown, fallback: number): number {
  const w = (args as { waitSeconds?: unknown }).waitSeconds;
  if (w === undefined) return fallback * 1000;
  if (typeof w !== "number" || !Number.isFinite(w) || w < 0 || w > MAX_WAIT_SECONDS) {
    throw bad(tool, `"waitSeconds" must be a number from 0 to ${MAX_WAIT_SECONDS}, got ${givenValue(w)}`);
  }
  return w * 1000;
}

function report(out: { replace(t: string): void; details: Record<string, unknown> }, r: ProcessRead): void {
  out.replace(formatProcessRead(r));
  out.details.processId = r.processId;
  out.details.status = r.status.state;
  if (r.status.state !== "running") out.details.exitCode = r.status.exitCode;
  if (r.status.state === "killed") out.details.signal = r.status.signal;
  if (r.skippedLines > 0) {
    out.details.skippedLines = r.skippedLines;
    out.details.skippedBytes = r.skippedBytes;
  }
  if (r.spillPath !== undefined) out.details.spillPath = r.spillPath;
}

const processIdParam = { type: "string", description: "The processId bash returned." } as const;
const waitParam = (dflt: number) =>
  ({
    type: "number",
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    description: `Seconds to wait for new output (0-${MAX_WAIT_SECONDS}, default ${dflt}); returns as soon as output arrives or the process ends.`,
  }) as const;

export function createProcessTools(): ToolDefinition<never>[] {
  const output: ToolDefinition<ProcessOutputArgs> = {
    name: "process_output",
    description:
      "Read what a background process printed since you last read it (cleaned and bounded; if lines left the window unread it says how many and where the full output is), and its status: running, exited with a code, or killed.",
    parameters: { type: "object", properties: { processId: processIdParam, waitSeconds: waitParam(0) }, required: ["processId"] },
    kind: "read",
    async execute(_id, args, signal, out, ctx) {
      const id = checkId("process_output", args);
      report(out, await ctx.processes.read(id, checkWait("process_output", args, 0), signal));
    },
  };
  const write: ToolDefinition<ProcessWriteArgs> = {
    name: "process_write",
    description:
      'Write to a background process\'s input, then return what it printed since you last read it, like process_output. Under a pty the input is keystrokes: end a line with "\\n"; "\\u0003" is Ctrl-C, "\\u0004" Ctrl-D. end: true closes its input after this text, as at the end of a file (sort, wc, cat > file and scripts that read all their input wait for it), and waits up to waitSeconds for it to finish.',
    parameters: {
      type: "object",
      properties: {
        processId: processIdParam,
        input: { type: "string", description: "The text to write, at most 1 MiB (may be empty with end: true)." },
        end: { type: "boolean", description: "Close the process's input after this text (end of file; on a pty, Ctrl-D). Default false." },
        waitSeconds: waitParam(1),
      },
      required: ["processId", "input"],
    },
    kind: "exec",
    async execute(_id, args, signal, out, ctx) {
      const id = checkId("process_write", args);
      const input = (args as { input?: unknown }).input;
      if (typeof input !== "string" || input.length > 1024 * 1024) throw bad("process_write", 'needs an "input" string of at most 1 MiB');
      const end = (args as { end?: unknown }).end;
      if (end !== undefined && typeof end !== "boolean") throw bad("process_write", `"end" must be true or false, got ${givenValue(end)}`);
      report(out, await ctx.processes.write(id, input, checkWait("process_write", args, 1), signal, end === true));
    },
  };
  const kill: ToolDefinition<ProcessKillArgs> = {
    name: "process_kill",
    description: "Stop a background process (its whole process group: SIGTERM, then SIGKILL) and return its last output and final status.",
    parameters: { type: "object", properties: { processId: processIdParam }, required: ["processId"] },
    kind: "exec",
    async execute(_id, args, _signal, out, ctx) {
      report(out, await ctx.processes.kill(checkId("process_kill", args)));
    },
  };
  const list: ToolDefinition<Record<string, never>> = {
    name: "process_list",
    description: `List the background processes, one line each: processId, status, command (shortened to ${LISTED_COMMAND_CHARS} chars). At most ${LISTED_PROCESSES} are listed: the running ones first, then the newest that have ended.`,
    parameters: { type: "object", properties: {} },
    kind: "read",
    execute(_id, _args, _signal, out, ctx) {
      const all = ctx.processes.list();
      const { shown, hidden, hiddenRunning } = shownProcesses(all);
      const more =
        hidden === 0
          ? ""
          : hiddenRunning === 0
            ? `[${hidden} older processes that have ended are not shown.]\n`
            : `[${hidden} older processes are not shown, ${hiddenRunning} of them still running.]\n`;
      out.replace(
        all.length === 0
          ? "No background processes.\n"
          : shown.map((p) => `${p.processId}  ${listedStatus(p.processId, p.status)}  ${p.pty ? "[pty] " : ""}${listedCommand(p.command)}\n`).join("") + more,
      );
      out.details.processes = shown.map((p) => ({
        processId: p.processId,
        command: listedCommand(p.command),
        status: p.status.state,
        ...(p.status.state !== "running" ? { exitCode: p.status.exitCode } : {}),
      }));
    },
  };
  return [output, write, kill, list] as unknown as ToolDefinition<never>[];
}
