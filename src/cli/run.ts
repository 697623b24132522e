// `spool run`: run a command through spool/capture and print the model-facing result — the retained
// text, a footer that says what was kept and where the rest is, and the status. Exit status is the
// command's.
import { parseArgs } from "node:util";
import { describeTruncation, exec, type CaptureUpdate, type ExecResult, type Retain } from "../capture/index.js";
import type { Command } from "./commands.js";
import { createLiveDisplay } from "./run-live.js";

const USAGE = `Usage: spool run [options] -- COMMAND...

Runs COMMAND in a shell (its own process group), shows its output live on stderr, and prints the
bounded result on stdout: the kept text, a footer saying what was kept and where the full output is,
and the status. The exit status is the command's.

Options:
  --max-bytes N      keep at most N bytes of cleaned text (default 51200)
  --max-lines N      keep at most N lines (default 2000)
  --head | --tail    keep the start or the end of the output (default --tail)
  --timeout SECONDS  kill the process group after SECONDS
  --spill-dir DIR    where the full raw output is written once the limits are crossed
                     (default .spool/spill under the current directory)
  --json             print {exitCode, signal, timedOut, aborted, binary, text, truncation, spillPath}
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
  retain: Retain;
  timeoutMs?: number;
  spillDir: string;
  json: boolean;
  quiet: boolean;
}

function parse(args: readonly string[]): RunArgs | "help" {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      "max-bytes": { type: "string" },
      "max-lines": { type: "string" },
      head: { type: "boolean" },
      tail: { type: "boolean" },
      timeout: { type: "string" },
      "spill-dir": { type: "string" },
      json: { type: "boolean" },
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
  const maxBytes = positiveInt("max-bytes", values["max-bytes"]);
  const maxLines = positiveInt("max-lines", values["max-lines"]);
  return {
    command: positionals.length === 1 ? positionals[0]! : positionals.map(shellQuote).join(" "),
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(maxLines !== undefined ? { maxLines } : {}),
    retain: values.head ? "head" : "tail",
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    spillDir: values["spill-dir"] ?? ".spool/spill",
    json: values.json ?? false,
    quiet: values.quiet ?? false,
  };
}

function statusLine(r: ExecResult, timeoutMs: number | undefined): string {
  if (r.timedOut) return `[Command timed out after ${(timeoutMs ?? 0) / 1000} seconds; exit code ${r.exitCode}]`;
  if (r.aborted) return `[Command aborted; exit code ${r.exitCode}]`;
  if (r.signal) return `[Command killed by ${r.signal}; exit code ${r.exitCode}]`;
  return `[Command exited with code ${r.exitCode}]`;
}

export function formatResult(r: ExecResult, retain: Retain, timeoutMs?: number): string {
  const parts: string[] = [];
  if (r.binary) parts.push("");
  else if (r.text === "") parts.push("(no output)");
  else parts.push(r.text.endsWith("\n") ? r.text.slice(0, -1) : r.text);
  const footer = describeTruncation(r, retain);
  if (footer) parts.push("", footer);
  parts.push("", statusLine(r, timeoutMs));
  return parts.join("\n").replace(/^\n+/, "") + "\n";
}

async function run(args: readonly string[]): Promise<number> {
  let parsed: RunArgs | "help";
  try {
    parsed = parse(args);
  } catch (err) {
    process.stderr.write(`spool run: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed === "help") {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const a = parsed;
  const live = a.quiet ? undefined : createLiveDisplay(process.stderr);
  // The command has its own process group, so a terminal's Ctrl-C reaches only spool: pass it on.
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let result: ExecResult;
  try {
    result = await exec(a.command, {
      ...(a.timeoutMs !== undefined ? { timeoutMs: a.timeoutMs } : {}),
      signal: abort.signal,
      capture: {
        limits: { retain: a.retain, ...(a.maxBytes ? { maxBytes: a.maxBytes } : {}), ...(a.maxLines ? { maxLines: a.maxLines } : {}) },
        spill: { dir: a.spillDir, subdir: "" },
      },
      ...(live ? { onUpdate: (u: CaptureUpdate) => live.update(u) } : {}),
    });
  } finally {
    live?.stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  if (a.json) {
    const { exitCode, signal, timedOut, aborted, binary, text, truncation, spillPath } = result;
    process.stdout.write(
      JSON.stringify({ exitCode, signal, timedOut, aborted, binary, text, truncation, spillPath: spillPath ?? null }) + "\n",
    );
  } else {
    process.stdout.write(formatResult(result, a.retain, a.timeoutMs));
  }
  return result.exitCode;
}

export const runCommand: Command = {
  name: "run",
  summary: "run a command with bounded, cleaned output and a lossless spill",
  run,
};
