// recall: the model's way back to any text that was cut. Key extraction is tolerant because models
// paste markers sloppily (`ccr:KEY`, single brackets, upper case, spaces, inside prose or a JSON
// field with any name) — upstream's @recall failed on all of those until it grew two tiers. With no
// options the answer is the original, byte-identical; offset/limit page by lines and grep filters
// lines, and each paged answer says what it shows and how to ask for the next part.
import { formatMarker } from "./archive-key.js";
import type { KeyLookup } from "./archive-store.js";
import { RecallError } from "./errors.js";
import { normaliseToolName } from "./tool-name.js";

export interface RecallOptions {
  /** First line to show, 1-based. */
  readonly offset?: number;
  /** Number of lines to show (with grep: number of matching lines). */
  readonly limit?: number;
  /** A regular expression (`re` or `/re/flags`); only matching lines are shown, with their numbers. */
  readonly grep?: string;
}

export interface RecallResult {
  readonly text: string;
  readonly keys: readonly string[];
  readonly missing: readonly string[];
}

const DEFAULT_GREP_LIMIT = 100;
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
  const render = (key: string, content: string): string => (paged ? page(key, content, options, grep) : content);
  if (keys.length === 1) return { text: render(keys[0]!, contents[0]!), keys, missing };
  const sections = keys.map((key, i) => {
    const content = contents[i];
    return `--- recall ${formatMarker(key)} ---\n${content === undefined ? MISS_TEXT : render(key, content)}`;
  });
  return { text: sections.join("\n\n"), keys, missing };
}

/** Tier 1: tolerant markers anywhere. Tier 2 (only if none): JSON key fields, or the whole payload as a bare key. */
export function extractRecallKeys(payload: string): string[] {
  const keys: string[] = [];
  const add = (k: string): void => {
    const key = k.toLowerCase();
    if (!keys.includes(key)) keys.push(key);
  };
  for (const match of payload.matchAll(/<{0,2}\s*ccr\s*:\s*([0-9a-f]{16})(?![0-9a-z])/gi)) add(match[1]!);
  if (keys.length > 0) return keys;

  const trimmed = payload.trim();
  const candidates: string[] = [];
  if (trimmed.startsWith("{")) {
    try {
      const parsed = JSON.parse(trimmed) as unknown;
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
        for (const field of ["key", "keys", "marker", "markers", "ccr", "id"]) {
          if (!Object.hasOwn(parsed, field)) continue;
          const value = (parsed as Record<string, unknown>)[field];
          if (typeof value === "string") candidates.push(value);
          else if (Array.isArray(value)) for (const v of value) if (typeof v === "string") candidates.push(v);
        }
      }
    } catch {
      candidates.push(trimmed);
    }
  } else candidates.push(trimmed);
  for (const candidate of candidates) {
    const bare = candidate.trim().replace(/^[\s`'"<>]+|[\s`'"<>]+$/g, "");
    if (/^[0-9a-f]{16}$/i.test(bare)) add(bare);
  }
  return keys;
}

function validatePaging(options: RecallOptions): void {
  if (options.offset !== undefined && !(Number.isInteger(options.offset) && options.offset >= 1)) {
    throw new RecallError("SPOOL_RECALL_OPTION", `offset must be a line number ≥ 1, got ${String(options.offset)}.`);
  }
  if (options.limit !== undefined && !(Number.isInteger(options.limit) && options.limit >= 1)) {
    throw new RecallError("SPOOL_RECALL_OPTION", `limit must be a whole number of lines ≥ 1, got ${String(options.limit)}.`);
  }
}

function compileGrep(source: string): RegExp {
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(source);
  try {
    return literal ? new RegExp(literal[1]!, literal[2]!.replace(/[gy]/g, "")) : new RegExp(source);
  } catch (err) {
    throw new RecallError("SPOOL_RECALL_OPTION", `grep is not a valid regular expression (${(err as Error).message}). Escape special characters or pass a plain word.`);
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

function page(key: string, content: string, options: RecallOptions, grep: RegExp | undefined): string {
  const marker = formatMarker(key);
  const starts = content.length === 0 ? [] : lineStarts(content);
  const total = starts.length;
  const from = (options.offset ?? 1) - 1;
  if (grep === undefined) {
    const limit = options.limit ?? total;
    const to = Math.min(total, from + limit);
    if (from >= total) return `[recall ${marker}: offset ${from + 1} is past the end — the text has ${total} lines.]`;
    const body = content.slice(starts[from]!, to < total ? starts[to]! : content.length);
    const next = to < total ? ` Next: recall ${marker} offset=${to + 1} limit=${limit}.` : " This is the end.";
    return `[recall ${marker}: lines ${from + 1}-${to} of ${total} (${content.length} chars).${next}]\n${body}`;
  }
  const limit = options.limit ?? DEFAULT_GREP_LIMIT;
  const shown: string[] = [];
  let n = from;
  let lastShown = -1;
  for (; n < total && shown.length < limit; n++) {
    const line = lineAt(content, starts, n);
    if (grep.test(line)) {
      shown.push(`${n + 1}: ${line}`);
      lastShown = n;
    }
  }
  const scannedTo = shown.length < limit ? total : lastShown + 1;
  const next =
    scannedTo < total ? ` Next: recall ${marker} grep=${JSON.stringify(options.grep)} offset=${scannedTo + 1} limit=${limit}.` : " No more matches after these.";
  const header = `[recall ${marker}: ${shown.length} line(s) matching /${grep.source}/${grep.flags} in lines ${from + 1}-${scannedTo} of ${total}.${next}]`;
  return shown.length > 0 ? `${header}\n${shown.join("\n")}` : header;
}

/** Whether a tool name is the recall tool ("recall", "@recall", any case, surrounding spaces ignored). */
export function isRecallTool(name: string): boolean {
  return normaliseToolName(name) === "recall";
}
