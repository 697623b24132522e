#!/usr/bin/env node
// The `spool` command. Argument parsing is node:util `parseArgs` (built in, well kept, no dependency).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { commands, type Command } from "./commands.js";

function version(): string {
  const pkgPath = fileURLToPath(new URL("../../package.json", import.meta.url));
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8")) as { version: string };
  return pkg.version;
}

function help(): string {
  const width = Math.max(0, ...commands.map((c) => c.name.length));
  const rows = commands.map((c: Command) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    `spool ${version()} — own what happens to a tool's output inside an LLM agent`,
    "",
    "Usage: spool <command> [options]",
    "",
    "Commands:",
    ...rows,
    "",
    "Options:",
    "  -h, --help     show this help (or `spool <command> --help`)",
    "  -v, --version  print the version",
  ].join("\n");
}

export async function main(argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    process.stdout.write(help() + "\n");
    return 0;
  }
  if (first === "-v" || first === "--version") {
    process.stdout.write(version() + "\n");
    return 0;
  }
  const command = commands.find((c) => c.name === first);
  if (!command) {
    process.stderr.write(`spool: unknown command "${first}". Run \`spool --help\` to see the commands.\n`);
    return 2;
  }
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as { code?: unknown } | null)?.code;
    // Bad arguments (ours, or node:util parseArgs's) exit 2; a failed operation exits 1.
    const usage = code === "SPOOL_CLI_USAGE" || (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"));
    process.stderr.write(`spool: ${message}${usage ? "\nRun `spool <command> --help` for usage." : ""}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
