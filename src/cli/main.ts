// The `spool` command: finds the command, loads it, and ends the process with the exit code exit.ts
// chooses. Nothing here imports a layer but the store's atomic write (for the code cache) and errors' printableText: `spool
// --version` and an unknown command cost only this file.
import { readFileSync } from "node:fs";
import { printableText } from "../errors/index.js";
import { enableCodeCaches, saveCodeCaches } from "./bundle-loader.js";
import { commands } from "./commands.js";
import { EXIT } from "./exit-codes.js";

// Node 22 warns when node:sqlite loads (`--store sqlite`), and node:wasi (`spool run` polls a piped
// stdout with it): notes about Node, not about the command.
const emitWarning = process.emitWarning;
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = String(warning);
  if (text.includes("SQLite is an experimental feature") || text.includes("WASI is an experimental feature")) return;
  (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
}) as typeof process.emitWarning;

// Compiled code is cached across runs: most of a short command's startup is compiling (bundle-loader.ts).
enableCodeCaches();

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

function help(): string {
  const width = Math.max(0, ...commands.map((c) => c.name.length));
  return [
    `spool ${version()} — own what happens to a tool's output inside an LLM agent`,
    "",
    "Usage: spool <command> [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Options:",
    "  -h, --help     show this help (or `spool <command> --help`)",
    "  -v, --version  print the version",
  ].join("\n");
}

/**
 * A reader that closes stdout early (`spool sessions | head -1`) ends the command quietly. stderr is
 * what people watch (the live display, notes): once it cannot be written, nothing more is shown there
 * and the command goes on — a run still finishes its command, its session and its result.
 */
function exitQuietlyOnClosedPipes(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw err;
  });
  process.stderr.on("error", () => {});
}

/** `-h` or `--help` among the command's own arguments (before a `--`). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "-h" || a === "--help");
}

async function main(argv: readonly string[]): Promise<void> {
  exitQuietlyOnClosedPipes();
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    process.stdout.write(help() + "\n");
    return;
  }
  if (first === "-v" || first === "--version") {
    process.stdout.write(version() + "\n");
    return;
  }
  const entry = commands.find((c) => c.name === first);
  if (!entry) {
    process.stderr.write(`spool: unknown command "${printableText(first)}". Run 'spool --help' to see the commands.\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  // Last resort: an error nothing caught (a background task's rejected promise) ends the process with
  // the one line a command's own failure gets, not a stack trace (SPOOL_DEBUG=1 adds it).
  const fatal = (err: unknown): void => {
    void import("./exit.js").then(({ errorLine, exitCodeFor }) => {
      process.stderr.write(errorLine(entry.name, err));
      process.exit(exitCodeFor(err));
    });
  };
  process.on("uncaughtException", fatal);
  process.on("unhandledRejection", fatal);
  // A command reports its own failures (command.ts); what reaches here is a command that did not load.
  let command: Awaited<ReturnType<typeof entry.load>>;
  try {
    command = await entry.load();
  } catch (err) {
    const { errorLine, exitCodeFor } = await import("./exit.js");
    process.stderr.write(errorLine(entry.name, err));
    process.exitCode = exitCodeFor(err);
    return;
  }
  process.exitCode = await command.run(rest);
  if (process.exitCode !== EXIT.usage && !asksForHelp(rest)) saveCodeCaches();
}

await main(process.argv.slice(2));
