// `spool compact`: run a conversation file through prepareHistory and print it back in its own
// format. The result goes to stdout, the human report to stderr, and the input file is only read.
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import {
  assertFormat,
  continuesServerState,
  createWorkspace,
  describePrepareReport,
  detectFormat,
  FORMATS,
  getAdapter,
  prepareHistory,
  unwrapConversation,
  validateWire,
  type Format,
  type Workspace,
} from "../context/index.js";
import { DEFAULT_ROOT, newSessionId, openSessionRepo, sessionsDir, setValue } from "../store/index.js";
import { defineCommand, intOption } from "./command.js";
import { RUN_INFO } from "./session-view.js";
import { directoryOption, ROOT } from "./shared-options.js";
import { tooDeep } from "./json-depth.js";
import { UsageError } from "./usage-error.js";

/** Real tool inputs nest a few dozen levels; a few thousand overflow every recursive JSON walk. */
const MAX_DEPTH = 1000;

export const compactCommand = defineCommand({
  name: "compact",
  summary: "repair, budget and compact a conversation file (prints it back in the same format)",
  synopsis: `[--format auto|${FORMATS.join("|")}] [--turn N] [--workspace DIR | --root DIR] FILE|-`,
  description:
    'Reads a conversation (a JSON array of messages, or an object with a "messages"/"input" array),\n' +
    "repairs tool call/result pairing, cuts oversized results (full text saved to the workspace),\n" +
    "compacts old results, and prints the result in the same format. A report goes to stderr.\n" +
    "Without --workspace the saved text goes to a new session under DIR/sessions, which\n" +
    "'spool sessions', 'serve' and 'gc' see like any other.",
  options: {
    format: { type: "string", value: "FORMAT", help: "input format (default: auto-detect)" },
    turn: { type: "string", value: "N", help: "age results as of turn N (default: the number of assistant messages)" },
    workspace: directoryOption("session directory for saved results and the archive"),
    root: ROOT,
  },
  positionals: { min: 1, max: 1, name: "one FILE (or - for stdin)" },
  async run(values, positionals) {
    const file = positionals[0]!;
    if (file === "") throw new UsageError("FILE is empty; pass a path to a transcript, or - for stdin");
    const format = values.format ?? "auto";
    if (format !== "auto" && !(FORMATS as readonly string[]).includes(format)) {
      throw new UsageError(`unknown --format ${JSON.stringify(format)}; use auto, ${FORMATS.join(", ")}`);
    }
    const turn = intOption("turn", values.turn, 0, Number.MAX_SAFE_INTEGER);
    const source = file === "-" ? await readStdin() : readInput(file);
    let json: unknown;
    try {
      // A byte order mark is not JSON, but editors on some systems write one: it is read past.
      json = JSON.parse(source.charCodeAt(0) === 0xfeff ? source.slice(1) : source);
    } catch (err) {
      throw new UsageError(`${file === "-" ? "stdin" : file} is not valid JSON (${(err as Error).message}); nothing was written`);
    }
    const conversation = unwrapConversation(json);
    conversation.items.forEach((item, index) => {
      const at = tooDeep(item, MAX_DEPTH);
      if (at !== undefined) {
        throw new UsageError(
          `message ${index} is nested more than ${MAX_DEPTH} levels deep (at message[${index}]${at}); spool compact does not accept such input; nothing was written`,
        );
      }
    });
    const resolved: Format = format === "auto" ? detectFormat(json) : (format as Format);
    assertFormat(json, resolved);
    const adapter = getAdapter(resolved);
    const messages = adapter.fromProvider(conversation.items);
    const workspace =
      values.workspace !== undefined ? createWorkspace({ dir: values.workspace, keep: true }) : await newSessionWorkspace(values.root ?? DEFAULT_ROOT, file);
    // a Responses request that continues stored state answers calls that are not in its input
    const externalCalls = resolved === "openai-responses" && continuesServerState(json);
    const { messages: prepared, report } = prepareHistory(messages, {
      workspace,
      format: resolved,
      externalCalls,
      ...(turn !== undefined ? { turn } : {}),
    });
    const wire = adapter.toProvider(prepared);
    // Consecutive messages of one role that the input already had are the caller's (the Anthropic API
    // combines consecutive user messages); spool leaves them as they are, and says so.
    const inputAlternation = validateWire(conversation.items, resolved, { externalCalls }).filter((p) => p.rule === "roles_alternate").length;
    const found = validateWire(wire, resolved, { externalCalls });
    const kept = found.filter((p) => p.rule === "roles_alternate").length <= inputAlternation;
    const problems = found.map((p) => `${p.rule}: ${p.message}${kept && p.rule === "roles_alternate" ? " (as in the input, left as it is)" : ""}`);
    process.stdout.write(JSON.stringify(conversation.wrap(wire), null, 2) + "\n");
    const workspaceDir = relative(process.cwd(), workspace.dir) || workspace.dir;
    process.stderr.write(
      describePrepareReport(report, { format: resolved, messagesIn: conversation.items.length, messagesOut: wire.length, workspaceDir, problems }),
    );
    return 0;
  },
});

/** A session like `spool run`'s, so the saved text is listed, served and collected like any other. */
async function newSessionWorkspace(root: string, file: string): Promise<Workspace> {
  const session = await openSessionRepo(sessionsDir(root), { backend: "jsonl" }).create({ id: newSessionId() });
  const now = new Date().toISOString();
  const command = `spool compact ${file === "-" ? "(stdin)" : file}`;
  try {
    await session.store.commit([
      setValue(RUN_INFO, { command, cwd: process.cwd(), pid: process.pid, startedAt: now, endedAt: now, status: "succeeded", exitCode: 0 }),
    ]);
  } finally {
    await session.store.close();
  }
  return createWorkspace({ dir: session.dir, keep: true });
}

function readInput(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (err as Error).message;
    throw new UsageError(`cannot read ${file}: ${why}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
