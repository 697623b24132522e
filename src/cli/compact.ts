// `spool compact`: run a conversation file through prepareHistory and print it back in its own
// format. The result goes to stdout, the human report to stderr, and the input file is only read.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  adapters,
  ContextError,
  createWorkspace,
  detectFormat,
  formatMarker,
  FORMATS,
  getAdapter,
  prepareHistory,
  unwrapConversation,
  type Format,
  type PrepareReport,
} from "../context/index.js";
import type { Command } from "./commands.js";
import { tooDeep } from "./json-depth.js";

/** Real tool inputs nest a few dozen levels; a few thousand overflow every recursive JSON walk. */
const MAX_DEPTH = 1000;
import { exitQuietlyOnClosedPipe, parseCount, UsageError } from "./cli-errors.js";

const USAGE = `Usage: spool compact [--format auto|${FORMATS.join("|")}] [--turn N] [--workspace DIR] FILE|-

Reads a conversation (a JSON array of messages, or an object with a "messages"/"input" array),
repairs tool call/result pairing, cuts oversized results (full text saved to the workspace),
compacts old results, and prints the result in the same format. A report goes to stderr.

  --format     input format (default: auto-detect)
  --turn N     age results as of turn N (default: the number of assistant messages)
  --workspace  session directory for saved results and the archive
               (default: a new .spool/sessions/<id> under the current directory; it is kept)`;

export const compactCommand: Command = {
  name: "compact",
  summary: "repair, budget and compact a conversation file (prints it back in the same format)",
  async run(args) {
    exitQuietlyOnClosedPipe();
    try {
      return await compact(args);
    } catch (err) {
      if (err instanceof UsageError || err instanceof ContextError) {
        process.stderr.write(`spool compact: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
  },
};

async function compact(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args);
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected one FILE (or - for stdin).\n\n${USAGE}`);
  const file = positionals[0]!;
  const format = values.format ?? "auto";
  if (format !== "auto" && !(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`unknown --format ${JSON.stringify(format)}; use auto, ${FORMATS.join(", ")}.`);
  }
  const turn = parseCount("turn", values.turn, 0);

  const source = file === "-" ? await readStdin() : readInput(file);
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (err) {
    throw new UsageError(`${file === "-" ? "stdin" : file} is not valid JSON (${(err as Error).message}). Nothing was written.`);
  }
  const conversation = unwrapConversation(json);
  conversation.items.forEach((item, index) => {
    const at = tooDeep(item, MAX_DEPTH);
    if (at !== undefined) {
      throw new UsageError(`message ${index} is nested more than ${MAX_DEPTH} levels deep (at message[${index}]${at}); spool compact does not accept such input. Nothing was written.`);
    }
  });
  const resolved: Format = format === "auto" ? detectFormat(json) : (format as Format);
  const adapter = getAdapter(resolved);
  const messages = adapter.fromProvider(conversation.items);

  const workspace = createWorkspace(values.workspace !== undefined ? { dir: values.workspace, keep: true } : { keep: true });
  const { messages: prepared, report } = prepareHistory(messages, { workspace, ...(turn !== undefined ? { turn } : {}) });
  const wire = adapter.toProvider(prepared);
  const problems = adapters[resolved].check(wire);
  process.stdout.write(JSON.stringify(conversation.wrap(wire), null, 2) + "\n");
  process.stderr.write(describe(resolved, conversation.items.length, wire.length, report, workspace.dir, problems));
  return 0;
}

function parse(args: readonly string[]) {
  try {
    return parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        format: { type: "string" },
        turn: { type: "string" },
        workspace: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${USAGE}`);
  }
}

function readInput(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function describe(format: Format, before: number, after: number, r: PrepareReport, dir: string, problems: string[]): string {
  const p = r.pairing;
  const lines = [`spool compact: ${format}, ${before} messages in, ${after} out`];
  const repairs: string[] = [];
  if (p.syntheticResultsInjected > 0) repairs.push(`${p.syntheticResultsInjected} missing result(s) filled with an error result (${p.missingToolUseIds.join(", ")})`);
  if (p.orphanResultsRemoved > 0) repairs.push(`${p.orphanResultsRemoved} orphan result(s) removed (${p.orphanToolResultIds.join(", ")})`);
  if (p.resultsRelocated > 0) repairs.push(`${p.resultsRelocated} result(s) moved back next to their call`);
  if (p.duplicateToolUsePruned > 0) repairs.push(`${p.duplicateToolUsePruned} duplicate or empty-id call(s) pruned`);
  lines.push(`  repairs: ${repairs.length > 0 ? repairs.join("; ") : "none needed"}`);
  const pct = r.charsBefore > 0 ? ` (${(((r.charsBefore - r.charsAfter) / r.charsBefore) * 100).toFixed(1)}% less)` : "";
  lines.push(`  tool-result chars: ${r.charsBefore} before, ${r.charsAfter} after${pct}`);
  lines.push(`  budget: ${r.budget.resultsTruncated} result(s) cut to a preview${r.budget.resultsReferenced ? `, ${r.budget.resultsReferenced} referencing text saved earlier` : ""}`);
  lines.push(`  microcompact: ${r.microcompact.truncated} truncated, ${r.microcompact.summarized} summarized, ${r.microcompact.preserved} old error/write/exec result(s) kept whole`);
  lines.push(`  files saved: ${r.filesSaved.length > 0 ? r.filesSaved.join(", ") : "none"}`);
  lines.push(`  keys archived: ${r.keysArchived.length > 0 ? r.keysArchived.map(formatMarker).join(" ") : "none"}`);
  if (r.orphanKeys.length > 0) lines.push(`  removed orphans are recallable: ${r.orphanKeys.map(formatMarker).join(" ")}`);
  for (const e of [...r.budget.errors, ...r.microcompact.errors]) lines.push(`  warning: ${e}`);
  for (const problem of problems) lines.push(`  provider check: ${problem}`);
  lines.push(`  workspace: ${dir} (read any key back with: spool recall KEY --workspace ${dir})`);
  return lines.join("\n") + "\n";
}
