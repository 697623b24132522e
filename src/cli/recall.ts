// `spool recall`: print the text behind an archive key or marker, whole or a page at a time.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ContextError, DEFAULT_SESSIONS_ROOT, readOnlyLookup, recall, RecallError, type KeyLookup } from "../context/index.js";
import type { Command } from "./commands.js";
import { exitQuietlyOnClosedPipe, parseCount, UsageError } from "./cli-errors.js";

const USAGE = `Usage: spool recall KEY_OR_MARKER [--workspace DIR] [--offset N] [--limit N] [--grep RE]

Prints the original text behind a <<ccr:KEY>> marker (or a bare 16-hex key), byte for byte.
With --offset/--limit it prints a range of lines, with --grep only matching lines (numbered);
each page says which lines it shows and how to ask for the next.

  --workspace  the session directory (default: search every session under ${DEFAULT_SESSIONS_ROOT})`;

export const recallCommand: Command = {
  name: "recall",
  summary: "print the original text behind an archive key or <<ccr:KEY>> marker",
  async run(args) {
    exitQuietlyOnClosedPipe();
    try {
      return run(args);
    } catch (err) {
      if (err instanceof RecallError && (err.code === "SPOOL_RECALL_NOT_FOUND")) {
        process.stderr.write(`spool recall: ${err.message}\n`);
        return 1;
      }
      if (err instanceof UsageError || err instanceof ContextError) {
        process.stderr.write(`spool recall: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
  },
};

function run(args: readonly string[]): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        workspace: { type: "string" },
        offset: { type: "string" },
        limit: { type: "string" },
        grep: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  if (positionals.length === 0) throw new UsageError(`expected a key or marker.\n\n${USAGE}`);
  const offset = parseCount("offset", values.offset, 1);
  const limit = parseCount("limit", values.limit, 1);
  const store = lookup(values.workspace);
  const result = recall(positionals.join(" "), store, {
    ...(offset !== undefined ? { offset } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(values.grep !== undefined ? { grep: values.grep } : {}),
  });
  process.stdout.write(result.text);
  if (result.missing.length > 0) process.stderr.write(`spool recall: not found: ${result.missing.join(", ")}\n`);
  return 0;
}

/**
 * One workspace, or every session under the default root (a key is content-addressed, so any hit is
 * the text). Read-only: looking a key up never creates, sweeps or expires anything.
 */
function lookup(dir: string | undefined): KeyLookup {
  if (dir !== undefined) {
    if (!existsSync(dir)) throw new UsageError(`workspace ${dir} does not exist.`);
    return readOnlyLookup(dir);
  }
  const sessions = existsSync(DEFAULT_SESSIONS_ROOT) ? readdirSync(DEFAULT_SESSIONS_ROOT).map((id) => readOnlyLookup(join(DEFAULT_SESSIONS_ROOT, id))) : [];
  if (sessions.length === 0) throw new UsageError(`no sessions under ${DEFAULT_SESSIONS_ROOT}; pass --workspace DIR.`);
  return {
    get(key) {
      for (const session of sessions) {
        const hit = session.get(key);
        if (hit !== undefined) return hit;
      }
      return undefined;
    },
  };
}
