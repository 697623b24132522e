// `spool recall`: print the text behind an archive key or marker, whole or a page at a time.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readOnlyLookup, recall, type KeyLookup } from "../context/index.js";
import { DEFAULT_ROOT, isSessionId, sessionsDir } from "../store/index.js";
import { defineCommand, intOption } from "./command.js";
import { ROOT } from "./shared-options.js";
import { UsageError } from "./usage-error.js";

export const recallCommand = defineCommand({
  name: "recall",
  summary: "print the original text behind an archive key or <<ccr:KEY>> marker",
  synopsis: "KEY_OR_MARKER [--workspace DIR | --root DIR] [--offset N] [--limit N] [--grep RE]",
  description:
    "Prints the original text behind a <<ccr:KEY>> marker (or a bare 16-hex key), byte for byte.\n" +
    "With --offset/--limit it prints a range of lines, with --grep only matching lines (numbered);\n" +
    "each page says which lines it shows and how to ask for the next.",
  options: {
    workspace: { type: "string", value: "DIR", help: "the session directory to read from (default: every session under the root)" },
    root: ROOT,
    offset: { type: "string", value: "N", help: "first line to print (1-based)" },
    limit: { type: "string", value: "N", help: "how many lines to print" },
    grep: { type: "string", value: "RE", help: "print only lines matching RE, numbered" },
  },
  positionals: { min: 1, max: Number.MAX_SAFE_INTEGER, name: "KEY_OR_MARKER" },
  async run(values, positionals) {
    const offset = intOption("offset", values.offset, 1, Number.MAX_SAFE_INTEGER);
    const limit = intOption("limit", values.limit, 1, Number.MAX_SAFE_INTEGER);
    const result = recall(positionals.join(" "), lookup(values.workspace, values.root ?? DEFAULT_ROOT), {
      ...(offset !== undefined ? { offset } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(values.grep !== undefined ? { grep: values.grep } : {}),
    });
    process.stdout.write(result.text);
    if (result.missing.length > 0) process.stderr.write(`spool recall: not found: ${result.missing.join(", ")}\n`);
    return 0;
  },
});

/**
 * One workspace, or every session under the root (a key is content-addressed, so any hit is the
 * text). Read-only: looking a key up never creates, sweeps or expires anything.
 */
function lookup(dir: string | undefined, root: string): KeyLookup {
  if (dir !== undefined) {
    if (!existsSync(dir)) throw new UsageError(`workspace ${dir} does not exist; pass a session directory (see 'spool sessions')`);
    return readOnlyLookup(dir);
  }
  const base = sessionsDir(root);
  const ids = existsSync(base) ? readdirSync(base).filter(isSessionId) : [];
  if (ids.length === 0) throw new UsageError(`no sessions under ${base}; pass --workspace DIR or --root DIR`);
  const sessions = ids.map((id) => readOnlyLookup(join(base, id)));
  return {
    get(key) {
      // One session's refused entry (a link out of it, a FIFO) must not hide the key in another: it is
      // reported only when no session has the key.
      let refused: unknown;
      for (const session of sessions) {
        try {
          const hit = session.get(key);
          if (hit !== undefined) return hit;
        } catch (err) {
          refused ??= err;
        }
      }
      if (refused !== undefined) throw refused;
      return undefined;
    },
  };
}
