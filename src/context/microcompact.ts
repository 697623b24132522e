// Progressive microcompaction: as a result ages (counted in assistant turns after it) it steps down
// from full text to a head + tail preview, then to a one-line summary. Every step is lossless: the
// text is archived before the cut and the stub carries its `<<ccr:KEY>>` marker; later levels carry
// the same marker forward and describe the original, never the previous stub.
// Exempt (chatcli did not exempt them): error results (the model needs the exact
// error) and results of write/exec tools (their output is the evidence of what changed).
import type { ArchiveStore } from "./archive-store.js";
import { countLines } from "./cut.js";
import { detectContentKind } from "./content-kind.js";
import type { Message, ToolResultMessage, UserMessage } from "./messages.js";
import { textOf, withText } from "./messages.js";
import { buildPreview, buildSummary, parseStub, type Origin, type ParsedStub } from "./stubs.js";
import { normaliseToolName } from "./tool-name.js";

export const DEFAULT_TRUNCATE_TURNS = 2;
export const DEFAULT_SUMMARIZE_TURNS = 4;
export const DEFAULT_MICRO_HEAD_CHARS = 2_000;
export const DEFAULT_MICRO_TAIL_CHARS = 500;
export const DEFAULT_MIN_CONTENT = 3_000;

/** Write and exec tools (names compared case-insensitively, a leading "@" ignored). */
export const DEFAULT_PRESERVED_TOOLS: readonly string[] = [
  "bash", "shell", "sh", "exec", "exec_command", "execute", "execute_command", "run", "run_command",
  "run_terminal_cmd", "terminal", "local_shell", "write", "write_file", "create_file", "edit", "edit_file",
  "multiedit", "multi_edit", "str_replace", "str_replace_editor", "str_replace_based_edit_tool",
  "apply_patch", "patch", "delete_file", "notebookedit",
];

export interface MicrocompactOptions {
  readonly truncateTurns?: number;
  readonly summarizeTurns?: number;
  readonly headChars?: number;
  readonly tailChars?: number;
  readonly minContent?: number;
  /** Where cut text is archived. Without one, cuts are lossy (no marker) — only for callers that accept that. */
  readonly archive?: ArchiveStore;
  /** The current turn; default the number of assistant messages. Ages are `turn − (assistant messages before the result)`. */
  readonly turn?: number;
  /** Tool names whose results are never compacted; default DEFAULT_PRESERVED_TOOLS. */
  readonly preserveTools?: readonly string[];
  /**
   * Act only when this pass frees at least this many chars (default 0). Every change rewrites the
   * prompt from that message on, so batching small savings keeps provider prompt caches warm
   * (Anthropic's clear_at_least, OpenCode's 20K prune minimum).
   */
  readonly minSavedChars?: number;
}

export interface MicrocompactReport {
  truncated: number;
  summarized: number;
  charsSaved: number;
  /** Keys of the texts this pass archived before cutting them. */
  keysArchived: string[];
  /** Old, large results left alone because they are errors or from write/exec tools. */
  preserved: number;
  errors: string[];
  /** Chars this pass could have freed but did not, because they were below `minSavedChars`. */
  deferredChars?: number;
}

export function emptyMicrocompactReport(): MicrocompactReport {
  return { truncated: 0, summarized: 0, charsSaved: 0, keysArchived: [], preserved: 0, errors: [] };
}

export function applyMicrocompact(
  messages: readonly Message[],
  options: MicrocompactOptions = {},
): { messages: readonly Message[]; report: MicrocompactReport } {
  const truncateTurns = positive(options.truncateTurns, DEFAULT_TRUNCATE_TURNS);
  const summarizeTurns = positive(options.summarizeTurns, DEFAULT_SUMMARIZE_TURNS);
  const headChars = positive(options.headChars, DEFAULT_MICRO_HEAD_CHARS);
  const tailChars = positive(options.tailChars, DEFAULT_MICRO_TAIL_CHARS);
  const minContent = positive(options.minContent, DEFAULT_MIN_CONTENT);
  const preserved = new Set((options.preserveTools ?? DEFAULT_PRESERVED_TOOLS).map(normaliseToolName));
  const report = emptyMicrocompactReport();

  let assistants = 0;
  for (const m of messages) if (m.role === "assistant") assistants++;
  const turn = options.turn ?? assistants;
  if (messages.length === 0 || turn < truncateTurns) return { messages, report };

  let out: Message[] | undefined;
  let k = 0;
  let names = new Map<string, string>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "assistant") {
      k++;
      names = new Map();
      for (const part of message.content) if (part.type === "toolCall") names.set(part.id, part.name);
      continue;
    }
    const age = turn - k;
    if (age < truncateTurns) continue;
    if (message.role !== "tool" && !(message.role === "user" && message.agentFeedback === true)) continue;
    const text = textOf(message);
    const stub = parseStub(text);
    if (stub === undefined && text.length < minContent) continue;
    if (message.role === "tool") {
      const name = names.get(message.toolCallId) ?? message.toolName;
      if (message.isError || (name !== undefined && preserved.has(normaliseToolName(name)))) {
        if (stub === undefined) report.preserved++;
        continue;
      }
    }

    const next = compactOne(message, text, stub, age, { truncateTurns, summarizeTurns, headChars, tailChars, minContent, archive: options.archive }, report);
    if (next !== undefined) {
      out ??= messages.slice();
      out[i] = next;
    }
  }
  if (out !== undefined && report.charsSaved < (options.minSavedChars ?? 0)) {
    // Archived keys stay archived (harmless, content-addressed); the history is left as it was.
    return { messages, report: { ...emptyMicrocompactReport(), preserved: report.preserved, deferredChars: report.charsSaved } };
  }
  return { messages: out ?? messages, report };
}

interface Levels {
  truncateTurns: number;
  summarizeTurns: number;
  headChars: number;
  tailChars: number;
  minContent: number;
  archive: ArchiveStore | undefined;
}

function compactOne<M extends ToolResultMessage | UserMessage>(
  message: M,
  text: string,
  stub: ParsedStub | undefined,
  age: number,
  levels: Levels,
  report: MicrocompactReport,
): M | undefined {
  if (stub !== undefined) {
    if (stub.level === "cleared" || age < levels.summarizeTurns || stub.chars < levels.minContent) return undefined;
    const summary = buildSummary(stub, stub);
    if (summary.length >= text.length) return undefined;
    report.summarized++;
    report.charsSaved += text.length - summary.length;
    return withText(message, summary);
  }
  if (text.length < levels.minContent) return undefined;
  let origin: Origin = { keys: [] };
  if (levels.archive !== undefined) {
    try {
      const key = levels.archive.put(text);
      report.keysArchived.push(key);
      origin = { keys: [key] };
    } catch (err) {
      // Never emit a marker that cannot be recalled: keep the text whole instead.
      report.errors.push(`could not archive a ${text.length}-char result (${(err as Error).message}); left uncut`);
      return undefined;
    }
  }
  if (age >= levels.summarizeTurns) {
    const summary = buildSummary({ chars: text.length, lines: countLines(text), kind: detectContentKind(text) }, origin);
    if (summary.length >= text.length) return undefined;
    report.summarized++;
    report.charsSaved += text.length - summary.length;
    return withText(message, summary);
  }
  const preview = buildPreview("truncated", text, levels.headChars, levels.tailChars, origin, detectContentKind(text));
  if (preview === undefined) return undefined;
  report.truncated++;
  report.charsSaved += text.length - preview.length;
  return withText(message, preview);
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}
