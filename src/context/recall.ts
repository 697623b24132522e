// recall: the model's way back to any text that was cut. With no options the answer is the original,
// byte-identical, when it fits the answer's cap; offset/limit page by lines (column by characters
// within a line too long for one answer) and grep filters lines, and each paged answer says what it
// shows and how to ask for the next part. No answer is longer than its cap (maxChars): a text or a
// page that does not fit is cut at a line or, for one long line, inside it, with the exact call for
// the rest, so every character stays reachable. Every argument is model-controlled: keys are found in
// one linear pass (recall-keys.ts), grep runs on a linear-time engine (grep.ts), and a grep scan
// stops at a time budget or an abort with a partial answer that says where to resume.
// An image cut from an old result (image-stub.ts) is answered with what it was — media type,
// dimensions, bytes — whatever the options: its base64 is no text a model can read. A consumer that
// can carry an image in a tool result asks for it (`images`): the first image among the keys comes
// back as itself (RecallResult.image), one per answer, counted against the answer's cap at what the
// budgets count an image (imageCostChars: ~width×height/750 tokens, at most 6,400 chars).
import { countOf, givenValue, isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { formatMarker } from "./archive-key.js";
import type { KeyLookup } from "./archive-store.js";
import { RecallError } from "./errors.js";
import { shareOut } from "./fair-share.js";
import { compileGrep, type LineMatcher } from "./grep.js";
import { imageCostChars } from "./image-cost.js";
import { imageInfo } from "./image-info.js";
import { attachedImageText, describeImageEntry, heldImageText, parseImageEntry, shortImageText } from "./image-stub.js";
import type { ImagePart } from "./messages.js";
import { extractRecallKeys } from "./recall-keys.js";
import { grepLines } from "./recall-grep.js";
import { checkRecallMaxChars, DEFAULT_RECALL_MAX_CHARS, MIN_PAGE_CHARS } from "./recall-limits.js";
import { indexLines } from "./recall-lines.js";
import { pageLines } from "./recall-page.js";
import { normaliseToolName } from "./tool-name.js";

export { extractRecallKeys } from "./recall-keys.js";
export { checkRecallMaxChars, DEFAULT_RECALL_MAX_CHARS, MIN_RECALL_MAX_CHARS } from "./recall-limits.js";

export interface RecallOptions {
  /** First line to show, 1-based. */
  readonly offset?: number;
  /** First character of the line at `offset` to show, 1-based (a line too long for one answer is read in slices; with grep, matches from there on). */
  readonly column?: number;
  /** Number of lines to show (with grep: number of matching lines). */
  readonly limit?: number;
  /** A regular expression (`re` or `/re/flags`); only matching lines are shown, with their numbers. */
  readonly grep?: string;
  /**
   * The longest answer in characters (default DEFAULT_RECALL_MAX_CHARS, at least
   * MIN_RECALL_MAX_CHARS; Infinity = unbounded, for a caller that writes to a file, not to a model).
   */
  readonly maxChars?: number;
  /** Stops a grep scan; the call then throws RecallError SPOOL_RECALL_ABORTED. */
  readonly signal?: AbortSignal;
  /** A grep scan (all keys together) that runs longer stops there and answers with what it found (default 500 ms). */
  readonly grepBudgetMs?: number;
  /**
   * The answer can carry an image (the AI SDK's content output, MCP's image content): the first
   * archived image among the keys comes back as RecallResult.image, its text a line saying so. Others
   * are described. Default false: every image is described.
   */
  readonly images?: boolean;
}

export interface RecallResult {
  readonly text: string;
  readonly keys: readonly string[];
  readonly missing: readonly string[];
  /** With `images`: the image this answer gives back, the archived part exactly as it was, and its key. */
  readonly image?: { readonly key: string; readonly part: ImagePart };
}

const DEFAULT_GREP_LIMIT = 100;
const DEFAULT_GREP_BUDGET_MS = 500;
/** More keys than this in one call is not a sloppy paste; each one is a lookup. */
export const MAX_RECALL_KEYS = 64;
const MISS_TEXT = "[not found — expired or evicted from the local store]";

export function recall(payload: string, store: KeyLookup, options: RecallOptions = {}): RecallResult {
  const keys = extractRecallKeys(payload);
  if (keys.length === 0) {
    const clipped = payload.length > 120 ? `${payload.slice(0, 120)}...` : payload;
    throw new RecallError(
      "SPOOL_RECALL_NO_KEY",
      `no archive key found in ${JSON.stringify(clipped)} — pass the value from a <<ccr:KEY>> marker (16 hex chars), ` +
        "e.g. <<ccr:0123456789abcdef>> or just 0123456789abcdef.",
    );
  }
  if (keys.length > MAX_RECALL_KEYS) {
    throw new RecallError("SPOOL_RECALL_OPTION", `${keys.length} keys in one call; the limit is ${MAX_RECALL_KEYS}. Recall fewer keys at a time.`);
  }
  const paged = options.offset !== undefined || options.limit !== undefined || options.grep !== undefined || options.column !== undefined;
  validatePaging(options);
  const grep = options.grep !== undefined ? compileGrep(options.grep) : undefined;
  const cap = options.maxChars ?? DEFAULT_RECALL_MAX_CHARS;
  const contents = keys.map((key) => store.get(key));
  const missing = keys.filter((_, i) => contents[i] === undefined);
  if (missing.length === keys.length) {
    throw new RecallError(
      "SPOOL_RECALL_NOT_FOUND",
      keys.length === 1
        ? `key "${keys[0]}" not found (it may have expired or been evicted from the local store, or belong to another workspace).`
        : `none of the ${keys.length} keys were found (${keys.join(", ")}); they may have expired or belong to another workspace.`,
    );
  }
  // One time budget for the whole call, however many keys it names.
  const deadline = performance.now() + (options.grepBudgetMs ?? DEFAULT_GREP_BUDGET_MS);
  const images = contents.map((content) => (content === undefined ? undefined : parseImageEntry(content)));
  // The one image given back: the first inline one (a remote URL is not archived: microcompact.ts).
  const shownAt = options.images === true ? images.findIndex((part) => part !== undefined && imageInfo(part) !== undefined) : -1;
  const shown = shownAt >= 0 ? { key: keys[shownAt]!, part: images[shownAt]! } : undefined;
  // What the image costs the model comes out of the answer's cap (at least 16,384 chars; an image ≤ 6,400).
  const imageCost = shown !== undefined ? imageCostChars(shown.part) : 0;
  const render = (key: string, content: string | undefined, budget: number, at: number): string => {
    if (content === undefined) return MISS_TEXT;
    const image = images[at];
    if (image !== undefined) {
      const info = imageInfo(image);
      if (at === shownAt) return attachedImageText(key, info!);
      const text =
        shown !== undefined && info !== undefined
          ? heldImageText(key, info, `One image comes back per recall and this answer carries ${formatMarker(shown.key)}: recall this key alone to see it.`)
          : describeImageEntry(key, info);
      // 64 image keys' descriptions (~230 chars each with their labels) came to 16,896 chars on a 16,384 cap.
      return text.length <= budget ? text : shortImageText(key, info);
    }
    if (!paged && content.length <= budget) return content;
    if (budget < MIN_PAGE_CHARS) {
      return `[recall ${formatMarker(key)}: ${countOf(content.length, "char")} — no room for it beside the other keys in this answer; recall it alone.]`;
    }
    return page(key, content, options, grep, deadline, budget);
  };
  const withImage = (text: string): RecallResult => (shown !== undefined ? { text, keys, missing, image: shown } : { text, keys, missing });
  if (keys.length === 1) return withImage(render(keys[0]!, contents[0], cap - imageCost, 0));
  const labels = keys.map((key) => `--- recall ${formatMarker(key)} ---\n`);
  const sections: string[] = new Array<string>(keys.length);
  // Shortest texts first, each given an equal share of what is left: short ones leave their unused
  // share to the long ones, and the answer never passes the cap.
  const room = cap - imageCost - 2 * (keys.length - 1) - labels.reduce((sum, label) => sum + label.length, 0);
  shareOut(
    contents.map((content) => content?.length ?? 0),
    room,
    (i, share) => (sections[i] = render(keys[i]!, contents[i], share, i)).length,
  );
  const text = sections.map((section, i) => labels[i] + section).join("\n\n");
  // Many keys' notes beside an image can pass the cap (64 one-line notes ≈ 9,000 chars beside 6,400):
  // the answer is then given without the image, every image described, and stays within it.
  if (shown !== undefined && text.length + imageCost > cap) return recall(payload, store, { ...options, images: false });
  return withImage(text);
}

function validatePaging(options: RecallOptions): void {
  if (options.offset !== undefined && !isWholeNumberIn(options.offset, 1)) {
    throw new RecallError("SPOOL_RECALL_OPTION", `offset must be a line number, ${wholeNumberRange(1)}, got ${givenValue(options.offset)}.`);
  }
  if (options.column !== undefined && !isWholeNumberIn(options.column, 1)) {
    throw new RecallError("SPOOL_RECALL_OPTION", `column must be a character position in the line, ${wholeNumberRange(1)}, got ${givenValue(options.column)}.`);
  }
  if (options.limit !== undefined && !isWholeNumberIn(options.limit, 1)) {
    throw new RecallError("SPOOL_RECALL_OPTION", `limit must be ${wholeNumberRange(1)} (lines), got ${givenValue(options.limit)}.`);
  }
  // A model's JSON may carry any type here; RE2's own sentence about a non-string named its internals.
  if (options.grep !== undefined && typeof options.grep !== "string") {
    throw new RecallError("SPOOL_RECALL_OPTION", `grep must be a string (a regular expression or a plain word), got ${givenValue(options.grep)}.`);
  }
  if (options.maxChars !== undefined) checkRecallMaxChars(options.maxChars);
}

function page(key: string, content: string, options: RecallOptions, grep: LineMatcher | undefined, deadline: number, budget: number): string {
  const marker = formatMarker(key);
  const lines = indexLines(content);
  const from = (options.offset ?? 1) - 1;
  const column = options.column ?? 1;
  if (grep === undefined) return pageLines(marker, content, lines, { from, column, limit: options.limit, budget });
  return grepLines(marker, content, lines, {
    from,
    column,
    limit: options.limit ?? DEFAULT_GREP_LIMIT,
    budget,
    pattern: options.grep!,
    matcher: grep,
    signal: options.signal,
    deadline,
    budgetMs: options.grepBudgetMs ?? DEFAULT_GREP_BUDGET_MS,
  });
}

/** Whether a tool name is the recall tool ("recall", "@recall", any case, surrounding spaces ignored). */
export function isRecallTool(name: string): boolean {
  return normaliseToolName(name) === "recall";
}
