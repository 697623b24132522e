// Result budgets: a per-result limit (a tool may declare its own `maxResultChars`), then a per-turn
// aggregate that trims the largest results first down to a floor. A cut result's full text is saved
// first (or referenced, if a spill file or archive marker already holds it) and replaced by a head +
// tail preview whose header says how to read the rest. Decisions are a pure function of the result
// text: the same history processed twice writes no second file and changes nothing, so prompt caches
// stay valid across turns and resumes (upstream re-spilled every turn to a new file).
// Inline images in results count toward the per-turn budget at an estimate of what they cost the
// model (image-cost.ts), not their base64 length: counting a screenshot's base64 would cut every text
// beside it to a preview. A fresh image is never cut here (the model has not seen it yet); microcompaction
// clears it once it is old.
import { isAbsolute, relative, resolve, sep } from "node:path";
import { extractKeys } from "./archive-key.js";
import type { ArchiveStore } from "./archive-store.js";
import { detectContentKind } from "./content-kind.js";
import { fairLevel, shareOut } from "./fair-share.js";
import { imageCostChars } from "./image-cost.js";
import type { Message, ToolResultMessage } from "./messages.js";
import { textOf, withText } from "./messages.js";
import { positiveOr } from "./positive-or.js";
import { isRecallTool } from "./recall.js";
import { recallWithin } from "./recall-within.js";
import { plannedSave, saveFullText, type ResultStore } from "./save-full-text.js";
import { buildPreview, parseStub, type Origin } from "./stubs.js";
import { normaliseToolName } from "./tool-name.js";

export const DEFAULT_MAX_RESULT_CHARS = 20_000;
export const DEFAULT_TURN_BUDGET_CHARS = 200_000;
export const PREVIEW_HEAD_CHARS = 4_000;
export const PREVIEW_TAIL_CHARS = 1_000;

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
  /** What the inline images in results counted toward their turns (imageCostChars each). */
  imageChars: number;
  /**
   * Recall answers given again within a smaller cap (recallWithin): their share of a turn whose
   * recalls did not all fit, or their per-result limit. Not counted in resultsTruncated.
   */
  recallsRefit: number;
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
    recallsRefit: 0,
  };
}

interface Slot {
  readonly index: number;
  readonly toolName: string | undefined;
  text: string;
  stub: boolean;
  /** The result's images, as imageCostChars counts them. */
  images: number;
  /** A recall answer (not an error) and its call's arguments: it is given again within a cap rather than cut to a preview. */
  readonly recall: { readonly input: unknown } | undefined;
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

  // A recall answer is what the model asked for: cut to a preview, it would name the same text to
  // recall again. It is answered again within `share` instead, still the next call away from the rest.
  const refit = (slot: Slot, share: number): void => {
    const message = (out ?? messages)[slot.index] as ToolResultMessage;
    const text = recallWithin(slot.text, slot.recall!.input, share, (answer) => {
      try {
        const saved = saveFullText(answer, options);
        if (saved.wrote) {
          if (saved.path !== undefined) report.filesSaved.push(saved.path);
          report.keysSaved.push(saved.key);
        }
        return saved.key;
      } catch (err) {
        report.errors.push(`result ${message.toolCallId}: recall answer could not be saved to page it (${(err as Error).message}); left whole`);
        throw err;
      }
    });
    if (text === undefined || text === slot.text) return;
    out ??= messages.slice();
    out[slot.index] = withText(message, text);
    report.recallsRefit++;
    report.charsSaved += slot.text.length - text.length;
    slot.text = text;
  };

  const flush = (group: Slot[]): void => {
    if (group.length === 0) return;
    for (const slot of group) {
      report.totalToolResults++;
      report.totalOriginalChars += slot.text.length;
      if (slot.stub) continue;
      const cap = slot.toolName !== undefined ? caps.get(normaliseToolName(slot.toolName)) : undefined;
      const limit = cap !== undefined && cap > 0 ? cap : maxResult;
      if (slot.text.length <= limit) continue;
      if (slot.recall !== undefined) refit(slot, limit);
      else cut(slot);
    }
    let turnSize = 0;
    for (const slot of group) {
      turnSize += slot.text.length + slot.images;
      report.imageChars += slot.images;
    }
    if (turnSize > turnBudget) {
      const shared = group.filter((slot) => slot.recall !== undefined && !slot.stub);
      // Other results are cut to previews, largest first (ties by position, so the choice is
      // deterministic) — beside recalls, only those above the turn's fair level (fairLevel: what each
      // of them and the recalls could have if they shared it): the recalls then share what is left.
      const tried = new Set<Slot>();
      const cuttable = (slot: Slot): boolean => slot.recall === undefined && !slot.stub && slot.text.length > floor && !tried.has(slot);
      while (turnSize > turnBudget) {
        let level = Number.POSITIVE_INFINITY;
        if (shared.length > 0) {
          const flexible = group.filter((slot) => cuttable(slot) || shared.includes(slot));
          const fixed = turnSize - flexible.reduce((sum, slot) => sum + slot.text.length, 0);
          level = fairLevel(
            flexible.map((slot) => slot.text.length),
            turnBudget - fixed,
          );
        }
        let largest: Slot | undefined;
        for (const slot of group) {
          if (!cuttable(slot) || (shared.length > 0 && slot.text.length <= level)) continue;
          if (largest === undefined || slot.text.length > largest.text.length) largest = slot;
        }
        if (largest === undefined) break;
        tried.add(largest);
        const before = largest.text.length;
        if (cut(largest)) turnSize -= before - largest.text.length;
      }
      if (turnSize > turnBudget && shared.length > 0) {
        const sharedSize = shared.reduce((sum, slot) => sum + slot.text.length, 0);
        turnSize -= sharedSize;
        shareOut(
          shared.map((slot) => slot.text.length),
          turnBudget - turnSize,
          (k, share) => {
            refit(shared[k]!, share);
            return shared[k]!.text.length;
          },
        );
        for (const slot of shared) turnSize += slot.text.length;
      }
    }
    for (const slot of group) report.totalFinalChars += slot.text.length;
  };

  let group: Slot[] = [];
  let calls = new Map<string, { readonly name: string; readonly input: unknown }>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool") {
      if (calls.size === 0 && group.length === 0 && options.externalCalls !== true) continue;
      const text = textOf(message);
      const call = calls.get(message.toolCallId);
      const toolName = call?.name ?? message.toolName;
      group.push({
        index: i,
        toolName,
        text,
        stub: parseStub(text) !== undefined,
        images: imagesChars(message),
        recall: call !== undefined && toolName !== undefined && isRecallTool(toolName) && !message.isError ? { input: call.input } : undefined,
      });
      continue;
    }
    flush(group);
    group = [];
    calls = new Map();
    if (message.role === "assistant") {
      for (const part of message.content) if (part.type === "toolCall") calls.set(part.id, { name: part.name, input: part.input });
    }
  }
  flush(group);
  return { messages: out ?? messages, report };
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
