// Progressive microcompaction: as a result ages (counted in assistant turns after it) it steps down
// from full text to a head + tail preview, then to a one-line summary. Every step is lossless: the
// text is archived before the cut and the stub carries its `<<ccr:KEY>>` marker; later levels carry
// the same marker forward and describe the original, never the previous stub.
// Command output ages like any read: in bash-only agents (mini-swe-agent, Codex) every result is a
// shell call, and exempting them saved 0% on real sessions. What stays exact: write/edit
// acknowledgements up to DEFAULT_PRESERVED_MAX_CHARS (a tool echoing a whole file back is a read in
// disguise and ages like one). Failed commands and error results never drop to a one-line summary:
// they keep a preview with the lines in the cut middle that mention errors and a longer tail, because
// the end of a failing log is where the cause is.
import type { ArchiveStore } from "./archive-store.js";
import { countLines } from "./cut.js";
import { detectContentKind } from "./content-kind.js";
import { isFailedCommandOutput } from "./failed-command.js";
import type { Message, ToolCallPart, ToolResultMessage, UserMessage } from "./messages.js";
import { textOf, withText } from "./messages.js";
import { buildPreview, buildSummary, parseStub, type Origin, type ParsedStub } from "./stubs.js";
import { normaliseToolName } from "./tool-name.js";

export const DEFAULT_TRUNCATE_TURNS = 2;
export const DEFAULT_SUMMARIZE_TURNS = 4;
export const DEFAULT_MICRO_HEAD_CHARS = 2_000;
export const DEFAULT_MICRO_TAIL_CHARS = 500;
export const DEFAULT_MIN_CONTENT = 3_000;

/** Write and edit tools (names compared case-insensitively, a leading "@" ignored). A call whose input says `command: "view"` is a read. */
export const DEFAULT_PRESERVED_TOOLS: readonly string[] = [
  "write", "write_file", "create_file", "edit", "edit_file", "multiedit", "multi_edit", "str_replace",
  "str_replace_editor", "str_replace_based_edit_tool", "apply_patch", "patch", "delete_file", "notebookedit",
];
/** A write/edit result longer than this is not an acknowledgement but an echo of the file: it ages like a read. */
export const DEFAULT_PRESERVED_MAX_CHARS = 8_000;

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
  /** Tool names whose results are never compacted while at most `preserveMaxChars` long; default DEFAULT_PRESERVED_TOOLS. */
  readonly preserveTools?: readonly string[];
  readonly preserveMaxChars?: number;
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
  /** Old, large results left whole because they are write/edit acknowledgements. */
  preserved: number;
  /** Old results of failed commands (or error results) cut to an error-keeping preview, which never drops to a summary. */
  failedKept: number;
  errors: string[];
  /** Chars this pass could have freed but did not, because they were below `minSavedChars`. */
  deferredChars?: number;
}

export function emptyMicrocompactReport(): MicrocompactReport {
  return { truncated: 0, summarized: 0, charsSaved: 0, keysArchived: [], preserved: 0, failedKept: 0, errors: [] };
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
  const preserveMax = positive(options.preserveMaxChars, DEFAULT_PRESERVED_MAX_CHARS);
  const report = emptyMicrocompactReport();

  let assistants = 0;
  for (const m of messages) if (m.role === "assistant") assistants++;
  const turn = options.turn ?? assistants;
  if (messages.length === 0 || turn < truncateTurns) return { messages, report };

  let out: Message[] | undefined;
  let k = 0;
  let calls = new Map<string, ToolCallPart>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "assistant") {
      k++;
      calls = new Map();
      for (const part of message.content) if (part.type === "toolCall") calls.set(part.id, part);
      continue;
    }
    const age = turn - k;
    if (age < truncateTurns) continue;
    if (message.role !== "tool" && !(message.role === "user" && message.agentFeedback === true)) continue;
    const text = textOf(message);
    const stub = parseStub(text);
    if (stub === undefined && text.length < minContent) continue;
    let failed = false;
    if (message.role === "tool") {
      const call = calls.get(message.toolCallId);
      const name = call?.name ?? message.toolName;
      if (stub === undefined && text.length <= preserveMax && name !== undefined && preserved.has(normaliseToolName(name)) && !isView(call)) {
        report.preserved++;
        continue;
      }
      // a stub keeps the opening lines, where the exit status is written
      failed = message.isError || isFailedCommandOutput(stub === undefined ? text : stubBody(text));
    }

    const next = compactOne(message, text, stub, age, failed, { truncateTurns, summarizeTurns, headChars, tailChars, minContent, archive: options.archive }, report);
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
  failed: boolean,
  levels: Levels,
  report: MicrocompactReport,
): M | undefined {
  if (stub !== undefined) {
    if (failed || stub.level === "cleared" || age < levels.summarizeTurns || stub.chars < levels.minContent) return undefined;
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
  if (failed) {
    // less head, more tail, and the error lines of the middle: what a failing log's reader needs
    const preview = buildPreview("truncated", text, Math.ceil(levels.headChars / 2), levels.tailChars * 3, origin, detectContentKind(text), true);
    if (preview === undefined) return undefined;
    report.truncated++;
    report.failedKept++;
    report.charsSaved += text.length - preview.length;
    return withText(message, preview);
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

/** An editor tool asked to show a file (SWE-agent's str_replace_editor `view`): its output is a read. */
function isView(call: ToolCallPart | undefined): boolean {
  const input = call?.input;
  return input !== null && typeof input === "object" && (input as Record<string, unknown>)["command"] === "view";
}

/** The text after a stub's header line. */
function stubBody(text: string): string {
  const nl = text.indexOf("\n");
  return nl < 0 ? "" : text.slice(nl + 1);
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}
