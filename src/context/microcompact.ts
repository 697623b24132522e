// Progressive microcompaction: as a result ages (counted in assistant turns after it) it steps down
// from full text to a head + tail preview, then to a one-line summary. Every step is lossless: the
// text is archived before the cut and the stub carries its `<<ccr:KEY>>` marker; later levels carry
// the same marker forward and describe the original, never the previous stub.
// Command output ages like any read: in bash-only agents (mini-swe-agent, Codex) every result is a
// shell call, and exempting them saved 0% on real sessions. What stays exact: write/edit
// acknowledgements up to DEFAULT_PRESERVED_MAX_CHARS (a tool echoing a whole file back is a read in
// disguise and ages like one). Failed commands and error results never drop to a one-line summary:
// they go (once, finally) to a "failed" preview — the opening status line, the lines of the cut
// middle that mention errors, and the tail — because the end of a failing log is where the cause is.
// Measured on two real mini-swe-agent sessions (a third of whose commands exit non-zero): keeping
// 1,000 head + 1,500 tail chars of every failure left 47–51% of the tool-result characters; status
// line + error lines + a 500-char tail leaves 27–37%.
// Inline images in tool results (a screenshot is ~400,000 base64 chars, sent again in every request)
// are cleared at the first level, truncateTurns old: an image has no useful preview, and the model
// looked at it when it was fresh. Each becomes a one-line stub in its place (media type, size,
// dimensions) and is archived whole (image-stub.ts), whatever the tool; an image whose stub would not
// be shorter (a remote URL, a tiny icon) stays.
import { archiveKey } from "./archive-key.js";
import type { ArchiveStore } from "./archive-store.js";
import { clearOldInputs, DEFAULT_INPUT_MAX_CHARS } from "./call-inputs.js";
import { countLines } from "./cut.js";
import { detectContentKind } from "./content-kind.js";
import { isFailedCommandOutput } from "./failed-command.js";
import { imageInfo } from "./image-info.js";
import { buildImageStub, imageEntry } from "./image-stub.js";
import type { ContentPart, Message, TextPart, ToolCallPart, ToolResultMessage, UserMessage } from "./messages.js";
import { textOf, withText } from "./messages.js";
import { positiveOr } from "./positive-or.js";
import { buildPreview, buildSummary, parseStub, type Origin, type ParsedStub } from "./stubs.js";
import { normaliseToolName } from "./tool-name.js";

export const DEFAULT_TRUNCATE_TURNS = 2;
export const DEFAULT_SUMMARIZE_TURNS = 4;
export const DEFAULT_MICRO_HEAD_CHARS = 2_000;
export const DEFAULT_MICRO_TAIL_CHARS = 500;
export const DEFAULT_MIN_CONTENT = 3_000;
/**
 * Results at least this long are summarised once they are summarizeTurns old, even below minContent
 * (a preview of a short text saves nothing, a one-line summary does). Bash-only agents run many
 * commands with 1–3 KB of output: on real mini-swe-agent sessions results under 3,000 chars were
 * 60–80% of all result characters, and a minContent-only rule saved 30–44% there.
 */
export const DEFAULT_SUMMARIZE_MIN_CHARS = 1_000;

/** Write and edit tools (names compared case-insensitively, a leading "@" ignored). A call whose input says `command: "view"` is a read. */
export const DEFAULT_PRESERVED_TOOLS: readonly string[] = [
  "write",
  "write_file",
  "create_file",
  "edit",
  "edit_file",
  "multiedit",
  "multi_edit",
  "str_replace",
  "str_replace_editor",
  "str_replace_based_edit_tool",
  "apply_patch",
  "patch",
  "delete_file",
  "notebookedit",
];
/** A write/edit result longer than this is not an acknowledgement but an echo of the file: it ages like a read. */
export const DEFAULT_PRESERVED_MAX_CHARS = 8_000;

export interface MicrocompactOptions {
  readonly truncateTurns?: number;
  readonly summarizeTurns?: number;
  readonly headChars?: number;
  readonly tailChars?: number;
  readonly minContent?: number;
  /** See DEFAULT_SUMMARIZE_MIN_CHARS. */
  readonly summarizeMinChars?: number;
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
  /** Strings longer than this in the input of a call truncateTurns old are replaced by a recall stub (call-inputs.ts); default DEFAULT_INPUT_MAX_CHARS. */
  readonly inputMaxChars?: number;
  /** The consumer's recall gives an archived image back (RecallOptions.images): an image's stub says so. */
  readonly imagesRecallable?: boolean;
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
  /** Images in old tool results replaced by a one-line stub (their payload chars count in charsSaved). */
  imagesCleared: number;
  /** Long strings in old tool-call inputs replaced by a recall stub (counted in charsSaved). */
  inputsCleared: number;
  errors: string[];
  /** Chars this pass could have freed but did not, because they were below `minSavedChars`. */
  deferredChars?: number;
}

export function emptyMicrocompactReport(): MicrocompactReport {
  return { truncated: 0, summarized: 0, charsSaved: 0, keysArchived: [], preserved: 0, failedKept: 0, imagesCleared: 0, inputsCleared: 0, errors: [] };
}

export function applyMicrocompact(
  messages: readonly Message[],
  options: MicrocompactOptions = {},
): { messages: readonly Message[]; report: MicrocompactReport } {
  const truncateTurns = positiveOr(options.truncateTurns, DEFAULT_TRUNCATE_TURNS);
  const summarizeTurns = positiveOr(options.summarizeTurns, DEFAULT_SUMMARIZE_TURNS);
  const headChars = positiveOr(options.headChars, DEFAULT_MICRO_HEAD_CHARS);
  const tailChars = positiveOr(options.tailChars, DEFAULT_MICRO_TAIL_CHARS);
  const minContent = positiveOr(options.minContent, DEFAULT_MIN_CONTENT);
  const summarizeMin = Math.min(minContent, positiveOr(options.summarizeMinChars, DEFAULT_SUMMARIZE_MIN_CHARS));
  const preserved = new Set((options.preserveTools ?? DEFAULT_PRESERVED_TOOLS).map(normaliseToolName));
  const preserveMax = positiveOr(options.preserveMaxChars, DEFAULT_PRESERVED_MAX_CHARS);
  const inputMax = positiveOr(options.inputMaxChars, DEFAULT_INPUT_MAX_CHARS);
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
      // a call ages with its results: this message's results are turn − k old too
      if (turn - k >= truncateTurns) {
        const next = clearOldInputs(message, inputMax, options.archive, report);
        if (next !== message) {
          out ??= messages.slice();
          out[i] = next;
        }
      }
      continue;
    }
    const age = turn - k;
    if (age < truncateTurns) continue;
    if (message.role !== "tool" && !(message.role === "user" && message.agentFeedback === true)) continue;
    let current: ToolResultMessage | UserMessage = message;
    if (message.role === "tool") {
      current = clearImages(message, options.archive, report, options.imagesRecallable === true);
      if (current !== message) {
        out ??= messages.slice();
        out[i] = current;
      }
    }
    // image stubs are not text (textOf), so the text below is the result's own
    const text = textOf(current);
    const stub = parseStub(text);
    const short = stub === undefined && text.length < minContent;
    if (short && (age < summarizeTurns || text.length < summarizeMin)) continue;
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

    const next = compactOne(
      current,
      text,
      stub,
      age,
      failed,
      { truncateTurns, summarizeTurns, headChars, tailChars, minContent, archive: options.archive },
      report,
    );
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
    if (failed || stub.level === "cleared" || stub.level === "failed" || age < levels.summarizeTurns || stub.chars < levels.minContent) return undefined;
    const summary = buildSummary(stub, stub);
    if (summary.length >= text.length) return undefined;
    report.summarized++;
    report.charsSaved += text.length - summary.length;
    return withText(message, summary);
  }
  if (text.length < levels.minContent && age < levels.summarizeTurns) return undefined;
  // Judge the stub before archiving anything: a stub that would not be shorter leaves no entry behind.
  const key = levels.archive !== undefined ? archiveKey(text) : undefined;
  const origin: Origin = { keys: key !== undefined ? [key] : [] };
  const kind = detectContentKind(text);
  let next: string | undefined;
  let level: "failed" | "summary" | "truncated";
  if (failed) {
    // the status line, the error lines of the middle, a long tail: what a failing log's reader needs
    level = "failed";
    next = buildPreview("failed", text, FAILED_HEAD_CHARS, levels.tailChars, origin, kind);
  } else if (age >= levels.summarizeTurns) {
    level = "summary";
    next = buildSummary({ chars: text.length, lines: countLines(text), kind }, origin);
  } else {
    level = "truncated";
    next = buildPreview("truncated", text, levels.headChars, levels.tailChars, origin, kind);
  }
  if (next === undefined || next.length >= text.length) return undefined;
  if (levels.archive !== undefined) {
    try {
      levels.archive.put(text);
      report.keysArchived.push(key!);
    } catch (err) {
      // Never emit a marker that cannot be recalled: keep the text whole instead.
      report.errors.push(`could not archive a ${text.length}-char result (${(err as Error).message}); left uncut`);
      return undefined;
    }
  }
  if (level === "summary") report.summarized++;
  else report.truncated++;
  if (level === "failed") report.failedKept++;
  report.charsSaved += text.length - next.length;
  return withText(message, next);
}

/** Each inline image of an old result replaced by its stub, archived first (an image that cannot be archived stays). */
function clearImages(message: ToolResultMessage, archive: ArchiveStore | undefined, report: MicrocompactReport, shown: boolean): ToolResultMessage {
  let content: ContentPart[] | undefined;
  message.content.forEach((part, j) => {
    if (part.type !== "image") return;
    const info = imageInfo(part);
    if (info === undefined) return;
    const entry = imageEntry(part);
    const key = archive !== undefined ? archiveKey(entry) : undefined;
    const stub = buildImageStub(info, key, shown);
    if (stub.length >= info.payloadChars) return;
    if (archive !== undefined) {
      try {
        archive.put(entry);
      } catch (err) {
        report.errors.push(`could not archive a ${info.payloadChars}-char image (${(err as Error).message}); left whole`);
        return;
      }
      if (!report.keysArchived.includes(key!)) report.keysArchived.push(key!);
    }
    content ??= message.content.slice();
    content[j] = stubPart(stub, part);
    report.imagesCleared++;
    report.charsSaved += info.payloadChars - stub.length;
  });
  return content !== undefined ? { ...message, content } : message;
}

/** The stub as a text part; a cache mark the image carried (Anthropic's cache_control, the AI SDK's providerOptions) stays on it. */
function stubPart(text: string, image: { readonly extra?: Readonly<Record<string, unknown>> }): TextPart {
  const extra: Record<string, unknown> = {};
  for (const key of ["cache_control", "providerOptions"]) if (image.extra?.[key] !== undefined) extra[key] = image.extra[key];
  return Object.keys(extra).length > 0 ? { type: "text", text, extra } : { type: "text", text };
}

/** Enough for the status line a failed command opens with (`<returncode>1</returncode>`, `Exit code 2`, the command echoed). */
const FAILED_HEAD_CHARS = 200;

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
