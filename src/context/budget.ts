// Result budgets: a per-result limit (a tool may declare its own `maxResultChars`), then a per-turn
// aggregate that trims the largest results first down to a floor. A cut result's full text is saved
// first (or referenced, if a spill file or archive marker already holds it) and replaced by a head +
// tail preview whose header says how to read the rest. Decisions are a pure function of the result
// text: the same history processed twice writes no second file and changes nothing, so prompt caches
// stay valid across turns and resumes (upstream re-spilled every turn to a new file).
// Inline images in results count toward the per-turn budget at an estimate of what they cost the
// model, not their base64 length: Anthropic bills an image at width×height/750 tokens and scales it
// down to about 1,600 tokens at most, so a 400,000-char screenshot weighs ~6,400 chars (4 chars a
// token), like the text it displaces. Counting its base64 would cut every text beside a screenshot
// to a preview. A fresh image is never cut here (the model has not seen it yet); microcompaction
// clears it once it is old.
import { isAbsolute, relative, resolve, sep } from "node:path";
import { extractKeys } from "./archive-key.js";
import type { ArchiveStore } from "./archive-store.js";
import { detectContentKind } from "./content-kind.js";
import { imageInfo } from "./image-info.js";
import type { ImagePart, Message, ToolResultMessage } from "./messages.js";
import { textOf, withText } from "./messages.js";
import { positiveOr } from "./positive-or.js";
import { plannedSave, saveFullText, type ResultStore } from "./save-full-text.js";
import { buildPreview, parseStub, type Origin } from "./stubs.js";
import { normaliseToolName } from "./tool-name.js";

export const DEFAULT_MAX_RESULT_CHARS = 20_000;
export const DEFAULT_TURN_BUDGET_CHARS = 200_000;
export const PREVIEW_HEAD_CHARS = 4_000;
export const PREVIEW_TAIL_CHARS = 1_000;
/** The most an image counts toward a turn: ~1,600 tokens (Anthropic's cap after scaling) at 4 chars a token. */
export const IMAGE_BUDGET_CHARS = 6_400;

export interface BudgetOptions {
  readonly maxResultChars?: number;
  readonly turnBudgetChars?: number;
  readonly headChars?: number;
  readonly tailChars?: number;
  /** Per-tool limits (`maxResultChars` a tool declares), by tool name (any case, a leading "@" ignored); they replace the per-result default. */
  readonly toolCaps?: Readonly<Record<string, number>>;
  /** Where full texts are saved as `<key>.txt`, bounded by the archive's limits (a workspace's `results`). */
  readonly results?: ResultStore;
  /** Without `results`: a directory for them that nothing bounds; without either they go to `archive`. */
  readonly resultsDir?: string;
  readonly archive?: ArchiveStore;
  /**
   * The session workspace. Files inside it are named relative to it in previews (`results/KEY.txt`),
   * so the same history gives the same prompt in any checkout or machine; a `read` limited to the
   * workspace resolves them. Without it, paths are shown as saved (absolute).
   */
  readonly workspaceDir?: string;
  /**
   * Results outside a tool block answer calls the provider keeps (PairingOptions.externalCalls): they
   * are budgeted too, each run of them as a turn. Otherwise such results are not the budget's business.
   */
  readonly externalCalls?: boolean;
}

export interface BudgetReport {
  totalToolResults: number;
  totalOriginalChars: number;
  totalFinalChars: number;
  resultsTruncated: number;
  /** Results cut whose full text was already held elsewhere (spill file or archive marker). */
  resultsReferenced: number;
  charsSaved: number;
  filesSaved: string[];
  keysSaved: string[];
  errors: string[];
  /** What the inline images in results counted toward their turns (imageBudgetChars each). */
  imageChars: number;
}

export function emptyBudgetReport(): BudgetReport {
  return {
    totalToolResults: 0,
    totalOriginalChars: 0,
    totalFinalChars: 0,
    resultsTruncated: 0,
    resultsReferenced: 0,
    charsSaved: 0,
    filesSaved: [],
    keysSaved: [],
    errors: [],
    imageChars: 0,
  };
}

interface Slot {
  readonly index: number;
  readonly toolName: string | undefined;
  text: string;
  stub: boolean;
  /** The result's images, as imageBudgetChars counts them. */
  images: number;
}

export function enforceToolResultBudget(messages: readonly Message[], options: BudgetOptions = {}): { messages: readonly Message[]; report: BudgetReport } {
  const maxResult = positiveOr(options.maxResultChars, DEFAULT_MAX_RESULT_CHARS);
  const turnBudget = positiveOr(options.turnBudgetChars, DEFAULT_TURN_BUDGET_CHARS);
  const head = positiveOr(options.headChars, PREVIEW_HEAD_CHARS);
  const tail = positiveOr(options.tailChars, PREVIEW_TAIL_CHARS);
  const floor = head + tail + 200;
  const caps = new Map<string, number>();
  for (const [name, cap] of Object.entries(options.toolCaps ?? {})) caps.set(normaliseToolName(name), cap);
  const report = emptyBudgetReport();
  let out: Message[] | undefined;

  const cut = (slot: Slot): boolean => {
    const message = (out ?? messages)[slot.index] as ToolResultMessage;
    const text = slot.text;
    const markers = extractKeys(text);
    let origin: Origin;
    let referenced = true;
    let key: string | undefined;
    if (message.spillPath !== undefined) origin = { keys: markers, path: shownPath(message.spillPath, options.workspaceDir) };
    else if (markers.length > 0) origin = { keys: markers };
    else {
      referenced = false;
      const planned = plannedSave(text, options);
      key = planned.key;
      origin = planned.path !== undefined ? { keys: [planned.key], path: shownPath(planned.path, options.workspaceDir) } : { keys: [planned.key] };
    }
    // Judge the preview before writing anything: a preview that is not shorter leaves no file behind.
    const preview = buildPreview("partial", text, head, tail, origin, detectContentKind(text));
    if (preview === undefined) return false;
    if (!referenced) {
      try {
        const saved = saveFullText(text, options, key);
        if (saved.wrote) {
          if (saved.path !== undefined) report.filesSaved.push(saved.path);
          report.keysSaved.push(saved.key);
        }
      } catch (err) {
        report.errors.push(`result ${message.toolCallId}: full text could not be saved (${(err as Error).message}); left uncut`);
        return false;
      }
    }
    out ??= messages.slice();
    out[slot.index] = withText(message, preview);
    report.resultsTruncated++;
    if (referenced) report.resultsReferenced++;
    report.charsSaved += text.length - preview.length;
    slot.text = preview;
    slot.stub = true;
    return true;
  };

  const flush = (group: Slot[]): void => {
    if (group.length === 0) return;
    for (const slot of group) {
      report.totalToolResults++;
      report.totalOriginalChars += slot.text.length;
      if (slot.stub) continue;
      const cap = slot.toolName !== undefined ? caps.get(normaliseToolName(slot.toolName)) : undefined;
      const limit = cap !== undefined && cap > 0 ? cap : maxResult;
      if (slot.text.length > limit) cut(slot);
    }
    let turnSize = 0;
    for (const slot of group) {
      turnSize += slot.text.length + slot.images;
      report.imageChars += slot.images;
    }
    if (turnSize > turnBudget) {
      // Largest first; ties by position so the choice is deterministic.
      const order = [...group].sort((a, b) => b.text.length - a.text.length || a.index - b.index);
      for (const slot of order) {
        if (turnSize <= turnBudget) break;
        if (slot.stub || slot.text.length <= floor) continue;
        const before = slot.text.length;
        if (cut(slot)) turnSize -= before - slot.text.length;
      }
    }
    for (const slot of group) report.totalFinalChars += slot.text.length;
  };

  let group: Slot[] = [];
  let names = new Map<string, string>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool") {
      if (names.size === 0 && group.length === 0 && options.externalCalls !== true) continue;
      const text = textOf(message);
      group.push({
        index: i,
        toolName: names.get(message.toolCallId) ?? message.toolName,
        text,
        stub: parseStub(text) !== undefined,
        images: imagesChars(message),
      });
      continue;
    }
    flush(group);
    group = [];
    names = new Map();
    if (message.role === "assistant") {
      for (const part of message.content) if (part.type === "toolCall") names.set(part.id, part.name);
    }
  }
  flush(group);
  return { messages: out ?? messages, report };
}

/** What an image costs the model in chars: width×height/750 tokens up to IMAGE_BUDGET_CHARS / 4, at 4 chars a token. */
export function imageBudgetChars(width: number | undefined, height: number | undefined): number {
  if (width === undefined || height === undefined) return IMAGE_BUDGET_CHARS;
  return Math.min(IMAGE_BUDGET_CHARS, 4 * Math.ceil((width * height) / 750));
}

/** What one image in a result counts toward a turn (and toward a recall answer that carries it). */
export function imageCostChars(part: ImagePart): number {
  const info = imageInfo(part);
  // a remote URL costs the model the same once fetched, but its size is not known here
  return info !== undefined ? Math.min(info.payloadChars, imageBudgetChars(info.width, info.height)) : IMAGE_BUDGET_CHARS;
}

function imagesChars(message: ToolResultMessage): number {
  let total = 0;
  for (const part of message.content) if (part.type === "image") total += imageCostChars(part);
  return total;
}

/** `path` relative to the workspace when it lies inside it (with "/" separators), else as given. */
function shownPath(path: string, workspaceDir: string | undefined): string {
  if (workspaceDir === undefined) return path;
  const rel = relative(resolve(workspaceDir), resolve(workspaceDir, path));
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return path;
  return rel.split(sep).join("/");
}
