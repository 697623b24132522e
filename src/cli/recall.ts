// `spool recall`: print the text behind an archive key or marker, whole or a page at a time. Whole
// is whole, whatever its size (the way to export a text to a file); every page is bounded by
// --max-chars, with a long line shown in slices and a grep match on one as a window around it.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_RECALL_MAX_CHARS, MIN_RECALL_MAX_CHARS, readOnlyLookup, recall, type KeyLookup } from "../context/index.js";
import { DEFAULT_ROOT, isSessionId, sessionsDir } from "../store/index.js";
import { defineCommand, intOption } from "./command.js";
import { directoryOption, ROOT } from "./shared-options.js";
import { UsageError } from "./usage-error.js";

export const recallCommand = defineCommand({
  name: "recall",
  summary: "print the original text behind an archive key or <<ccr:KEY>> marker",
  synopsis: "KEY_OR_MARKER [--workspace DIR | --root DIR] [--offset N] [--column N] [--limit N] [--grep RE] [--max-chars N]",
  description:
    "Prints the original text behind a <<ccr:KEY>> marker (or a bare 16-hex key), byte for byte, whatever its size.\n" +
    "With --offset/--limit it prints a range of lines, with --grep only matching lines (numbered);\n" +
    `each page says which lines it shows and how to ask for the next. A page is at most --max-chars\n` +
    `(default ${DEFAULT_RECALL_MAX_CHARS}): a line longer than that is printed in slices (--column N goes on\n` +
    "inside it), and a grep match on a long line as a window around the match.",
  options: {
    workspace: directoryOption("the session directory to read from (default: every session under the root)"),
    root: ROOT,
    offset: { type: "string", value: "N", help: "first line to print (1-based)" },
    column: { type: "string", value: "N", help: "first character of that line to print (1-based; with --grep, matches from there on)" },
    limit: { type: "string", value: "N", help: "how many lines to print" },
    grep: { type: "string", value: "RE", help: "print only lines matching RE, numbered" },
    "max-chars": { type: "string", value: "N", help: `the longest page (default ${DEFAULT_RECALL_MAX_CHARS}; also bounds the whole text when given)` },
  },
  positionals: { min: 1, max: Number.MAX_SAFE_INTEGER, name: "KEY_OR_MARKER" },
  async run(values, positionals) {
    const offset = intOption("offset", values.offset, 1, Number.MAX_SAFE_INTEGER);
    const column = intOption("column", values.column, 1, Number.MAX_SAFE_INTEGER);
    const limit = intOption("limit", values.limit, 1, Number.MAX_SAFE_INTEGER);
    const maxChars = intOption("max-chars", values["max-chars"], MIN_RECALL_MAX_CHARS, Number.MAX_SAFE_INTEGER);
    const paged = offset !== undefined || column !== undefined || limit !== undefined || values.grep !== undefined;
    const result = recall(positionals.join(" "), lookup(values.workspace, values.root ?? DEFAULT_ROOT), {
      ...(offset !== undefined ? { offset } : {}),
      ...(column !== undefined ? { column } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(values.grep !== undefined ? { grep: values.grep } : {}),
      maxChars: maxChars ?? (paged ? DEFAULT_RECALL_MAX_CHARS : Number.POSITIVE_INFINITY),
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
