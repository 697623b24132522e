// `spool compact`: run a conversation file through prepareHistory and print it back in its own
// format. The result goes to stdout, the human report to stderr, and the input file is only read.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  assertFormat,
  ContextError,
  createWorkspace,
  describePrepareReport,
  detectFormat,
  FORMATS,
  getAdapter,
  prepareHistory,
  unwrapConversation,
  validateWire,
  type Format,
} from "../context/index.js";
import type { Command } from "./commands.js";
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
  const resolved: Format = format === "auto" ? detectFormat(json) : (format as Format);
  assertFormat(json, resolved);
  const adapter = getAdapter(resolved);
  const messages = adapter.fromProvider(conversation.items);

  const workspace = createWorkspace(values.workspace !== undefined ? { dir: values.workspace, keep: true } : { keep: true });
  const { messages: prepared, report } = prepareHistory(messages, { workspace, format: resolved, ...(turn !== undefined ? { turn } : {}) });
  const wire = adapter.toProvider(prepared);
  const problems = validateWire(wire, resolved).map((p) => `${p.rule}: ${p.message}`);
  process.stdout.write(JSON.stringify(conversation.wrap(wire), null, 2) + "\n");
  process.stderr.write(describePrepareReport(report, { format: resolved, messagesIn: conversation.items.length, messagesOut: wire.length, workspaceDir: workspace.dir, problems }));
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
