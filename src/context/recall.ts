// recall: the model's way back to any text that was cut. With no options the answer is the original,
// byte-identical; offset/limit page by lines and grep filters lines, and each paged answer says what
// it shows and how to ask for the next part. Every argument is model-controlled: keys are found in
// one linear pass (recall-keys.ts), grep runs on a linear-time engine (grep.ts), and a grep scan
// stops at a time budget or an abort with a partial answer that says where to resume.
import { isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { formatMarker } from "./archive-key.js";
import type { KeyLookup } from "./archive-store.js";
import { RecallError } from "./errors.js";
import { compileGrep, type LineMatcher } from "./grep.js";
import { extractRecallKeys } from "./recall-keys.js";
import { normaliseToolName } from "./tool-name.js";

export { extractRecallKeys } from "./recall-keys.js";

export interface RecallOptions {
  /** First line to show, 1-based. */
  readonly offset?: number;
  /** Number of lines to show (with grep: number of matching lines). */
  readonly limit?: number;
  /** A regular expression (`re` or `/re/flags`); only matching lines are shown, with their numbers. */
  readonly grep?: string;
  /** Stops a grep scan; the call then throws RecallError SPOOL_RECALL_ABORTED. */
  readonly signal?: AbortSignal;
  /** A grep scan (all keys together) that runs longer stops there and answers with what it found (default 500 ms). */
  readonly grepBudgetMs?: number;
}

export interface RecallResult {
  readonly text: string;
  readonly keys: readonly string[];
  readonly missing: readonly string[];
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
  const paged = options.offset !== undefined || options.limit !== undefined || options.grep !== undefined;
  const grep = options.grep !== undefined ? compileGrep(options.grep) : undefined;
  validatePaging(options);
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
  const render = (key: string, content: string): string => (paged ? page(key, content, options, grep, deadline) : content);
  if (keys.length === 1) return { text: render(keys[0]!, contents[0]!), keys, missing };
  const sections = keys.map((key, i) => {
    const content = contents[i];
    return `--- recall ${formatMarker(key)} ---\n${content === undefined ? MISS_TEXT : render(key, content)}`;
  });
  return { text: sections.join("\n\n"), keys, missing };
}

function validatePaging(options: RecallOptions): void {
  if (options.offset !== undefined && !isWholeNumberIn(options.offset, 1)) {
    throw new RecallError("SPOOL_RECALL_OPTION", `offset must be a line number, ${wholeNumberRange(1)}, got ${String(options.offset)}.`);
  }
  if (options.limit !== undefined && !isWholeNumberIn(options.limit, 1)) {
    throw new RecallError("SPOOL_RECALL_OPTION", `limit must be ${wholeNumberRange(1)} (lines), got ${String(options.limit)}.`);
  }
}

/** Line starts, found with indexOf so a 10 MB text is scanned once and never split into an array. */
function lineStarts(content: string): number[] {
  const starts = [0];
  let i = content.indexOf("\n");
  while (i >= 0 && i < content.length - 1) {
    starts.push(i + 1);
    i = content.indexOf("\n", i + 1);
  }
  return starts;
}

function lineAt(content: string, starts: readonly number[], n: number): string {
  const start = starts[n]!;
  const end = n + 1 < starts.length ? starts[n + 1]! - 1 : content.endsWith("\n") ? content.length - 1 : content.length;
  return content.slice(start, end);
}

function page(key: string, content: string, options: RecallOptions, grep: LineMatcher | undefined, deadline: number): string {
  const marker = formatMarker(key);
  const starts = content.length === 0 ? [] : lineStarts(content);
  const total = starts.length;
  const from = (options.offset ?? 1) - 1;
  // (An empty text is "past the end" for a page; grep over it just finds nothing.)
  if (from >= total && (total > 0 || grep === undefined)) return `[recall ${marker}: offset ${from + 1} is past the end — the text has ${total} lines.]`;
  if (grep === undefined) {
    const limit = options.limit ?? total;
    const to = Math.min(total, from + limit);
    const body = content.slice(starts[from]!, to < total ? starts[to]! : content.length);
    const next = to < total ? ` Next: recall ${marker} offset=${to + 1} limit=${limit}.` : " This is the end.";
    return `[recall ${marker}: lines ${from + 1}-${to} of ${total} (${content.length} chars).${next}]\n${body}`;
  }
  const limit = options.limit ?? DEFAULT_GREP_LIMIT;
  const shown: string[] = [];
  let n = from;
  let lastShown = -1;
  let outOfTime = false;
  let scannedChars = 0;
  for (; n < total && shown.length < limit; n++) {
    // The clock and the signal are checked every 64 KiB of text scanned, not on every line.
    if (scannedChars >= 65536) {
      scannedChars = 0;
      if (options.signal?.aborted) throw new RecallError("SPOOL_RECALL_ABORTED", `grep over ${marker} was aborted at line ${n + 1} of ${total}.`);
      if (performance.now() > deadline) {
        outOfTime = true;
        break;
      }
    }
    const line = lineAt(content, starts, n);
    scannedChars += line.length + 64;
    if (grep.test(line)) {
      shown.push(`${n + 1}: ${line}`);
      lastShown = n;
    }
  }
  const scannedTo = outOfTime ? n : shown.length < limit ? total : lastShown + 1;
  const resume = ` Next: recall ${marker} grep=${JSON.stringify(options.grep)} offset=${scannedTo + 1} limit=${limit}.`;
  const next = outOfTime
    ? ` The scan stopped at its time budget (${options.grepBudgetMs ?? DEFAULT_GREP_BUDGET_MS} ms).${resume}`
    : scannedTo < total
      ? resume
      : " No more matches after these.";
  const header = `[recall ${marker}: ${shown.length} line(s) matching /${grep.source}/${grep.flags} in lines ${from + 1}-${scannedTo} of ${total}.${next}]`;
  return shown.length > 0 ? `${header}\n${shown.join("\n")}` : header;
}

/** Whether a tool name is the recall tool ("recall", "@recall", any case, surrounding spaces ignored). */
export function isRecallTool(name: string): boolean {
  return normaliseToolName(name) === "recall";
}
