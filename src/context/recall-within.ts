// recallWithin: a recall answer given again within a smaller cap — its share of a turn that other
// recalls of the same step share (budget.ts), or the per-result limit. The new answer is what recall
// would have answered at that cap: a page of the same text from the same line and character, shorter,
// whose header names the exact call for the rest, so paging on from it reaches every character once.
// It is worked out from the answer itself, never from the archive: the answer's body is the text's own
// characters from where the call asked, and its header (or, for a whole text, the answer) says where
// that lies. A context pass runs this for every such answer in the history before every model call, so
// its cost is the page's length, not the text's: a 10 MB text is neither read back nor indexed again
// (a whole answer has its newlines counted once, for the header's line total).
// An answer that is not one page of one text (several keys, grep, a note) is saved as it is under its
// own key and paged from its first line: `Next: recall <<ccr:KEY>> offset=N` reads on in it.
import { countOf } from "../errors/index.js";
import { formatMarker } from "./archive-key.js";
import { countLines } from "./cut.js";
import { isHighSurrogate as isHigh, isLowSurrogate as isLow } from "../capture/index.js";
import { extractRecallKeys } from "./recall-keys.js";
import { pageHeader, type PagePlace } from "./recall-page.js";

/** Below this many characters of text beside its header a page is no use: the answer becomes a one-line note. */
export const MIN_SHARED_PAGE_CHARS = 64;

/** A page ends after its last whole line when the rest of its room is at most this (a grep match's whole line fits in it too). */
export const SNAP_CHARS = 1_000;

/** Where a page of a text starts: in the answer string at `start`, and in the text at line `from` (0-based), character `column`. */
interface Window {
  readonly start: number;
  readonly place: Omit<PagePlace, "shownTo" | "nextColumn" | "budget" | "cut">;
}

/**
 * `answer` (the text of a recall result; `input` the call's arguments) within `share` characters:
 * the answer itself when it fits; a shorter page of the same text; else the answer saved with `save`
 * (which returns its key) and paged. Undefined when `save` throws (the caller keeps the answer).
 */
export function recallWithin(answer: string, input: unknown, share: number, save: (text: string) => string): string | undefined {
  if (answer.length <= share) return answer;
  const call = plainCall(input);
  if (call !== undefined) {
    const marker = formatMarker(call.key);
    const window = pageWindow(answer, marker, call);
    if (window !== undefined) {
      const page = pageWithin(marker, answer, window, share);
      if (page !== undefined) return page;
      if (tooSmall(marker, window, share)) return noRoom(marker, answer.length, window.place);
    }
  }
  let key: string;
  try {
    key = save(answer);
  } catch {
    return undefined;
  }
  const marker = formatMarker(key);
  const whole = { start: 0, place: { from: 0, column: 1, lineLength: lineEnd(answer, 0), total: countLines(answer), chars: answer.length, limit: undefined } };
  return pageWithin(marker, answer, whole, share) ?? noRoom(marker, answer.length, whole.place);
}

/** The answer when its share holds no page: how much there is and the call that reads it (again, from the same place). */
function noRoom(marker: string, chars: number, place: Window["place"]): string {
  const column = place.column > 1 ? ` column=${place.column}` : "";
  const limit = place.limit !== undefined ? ` limit=${place.limit}` : "";
  return `[recall ${marker}: ${countOf(chars, "char")}, none shown: no room in this step's share of the turn. Next: recall ${marker} offset=${place.from + 1}${column}${limit}.]`;
}

interface PlainCall {
  readonly key: string;
  readonly offset: number | undefined;
  readonly column: number | undefined;
  readonly limit: number | undefined;
}

/** The call's arguments when they ask for one key's text by lines (no grep): the answers worked out here. */
function plainCall(input: unknown): PlainCall | undefined {
  if (input === null || typeof input !== "object") return undefined;
  const args = input as Record<string, unknown>;
  if (typeof args["key"] !== "string" || args["grep"] !== undefined) return undefined;
  const keys = extractRecallKeys(args["key"]);
  if (keys.length !== 1) return undefined;
  const whole = (name: string): number | undefined | null => {
    const v = args[name];
    return v === undefined ? undefined : Number.isSafeInteger(v) && (v as number) >= 1 ? (v as number) : null;
  };
  const offset = whole("offset");
  const column = whole("column");
  const limit = whole("limit");
  if (offset === null || column === null || limit === null) return undefined;
  return { key: keys[0]!, offset, column, limit };
}

// What pageHeader writes, read back; the key is checked against the call's separately.
const HEADER =
  /^\[recall <<ccr:[0-9a-f]{16}>>: lines (\d+)-(\d+) of (\d+) \((\d+) chars?\)(?:; line (\d+) is (\d+) chars?, shown here as chars (\d+)-\d+ \(\d+ left out\)|; line (\d+) is shown from char (\d+))?(?:; this answer stops at its cap of \d+ chars)?\.(?: Next: recall <<ccr:[0-9a-f]{16}>> offset=\d+(?: column=\d+)?(?: limit=\d+)?\.| This is the end\.)\]$/;
/** Far longer than any page header (numbers, two markers, the slice note). */
const HEADER_MAX = 1_000;

/** Where the answer's text starts and what part of which text it is; undefined when the answer is no page of the call's key. */
function pageWindow(answer: string, marker: string, call: PlainCall): Window | undefined {
  const from = (call.offset ?? 1) - 1;
  const column = call.column ?? 1;
  if (!answer.startsWith(`[recall ${marker}: lines `)) {
    // Without paging arguments an answer that is no page is the text itself, whole.
    if (call.offset !== undefined || call.column !== undefined || call.limit !== undefined) return undefined;
    return { start: 0, place: { from: 0, column: 1, lineLength: lineEnd(answer, 0), total: countLines(answer), chars: answer.length, limit: undefined } };
  }
  const newline = answer.slice(0, HEADER_MAX).indexOf("\n");
  const m = newline > 0 ? HEADER.exec(answer.slice(0, newline)) : null;
  if (m === null) return undefined;
  const start = newline + 1;
  // recall's own pages describe a part of their first line only (a shared page may slice its last: not read back)
  const notedLine = m[5] ?? m[8];
  if (notedLine !== undefined && Number(notedLine) !== from + 1) return undefined;
  const shownColumn = m[7] !== undefined ? Number(m[7]) : m[9] !== undefined ? Number(m[9]) : 1;
  if (Number(m[1]) !== from + 1 || shownColumn !== column) return undefined;
  const lineLength = m[6] !== undefined ? Number(m[6]) : column - 1 + (lineEnd(answer, start) - start);
  return { start, place: { from, column, lineLength, total: Number(m[3]), chars: Number(m[4]), limit: call.limit } };
}

/** Characters of text a page from `window` can hold beside the longest header it can have (every number at its most digits, the slice note). */
function roomFor(marker: string, window: Window, share: number): number {
  const { place } = window;
  // every number at the most digits it can have, both line notes, and room for their "left out" counts
  const most = { ...place, shownTo: place.total + 1, nextColumn: place.chars + 1, lastLineLength: place.chars, budget: share, cut: true };
  return share - pageHeader(marker, most).length - 2 * String(place.chars).length - 1;
}

function tooSmall(marker: string, window: Window, share: number): boolean {
  return roomFor(marker, window, share) < MIN_SHARED_PAGE_CHARS;
}

/** End of the line that `start` lies in: its newline, or the string's end. */
function lineEnd(text: string, start: number): number {
  const nl = text.indexOf("\n", start);
  return nl < 0 ? text.length : nl;
}

/**
 * A page of what `text` holds from `window.start` on, header included at most `share` chars: whole
 * lines while they fit, else a slice of the first. Undefined when there is no room for
 * MIN_SHARED_PAGE_CHARS, or when all of it fits (then the answer was not cut by its cap and its
 * header cannot be rewritten as a shorter page of it).
 */
function pageWithin(marker: string, text: string, window: Window, share: number): string | undefined {
  const { start, place } = window;
  const room = roomFor(marker, window, share);
  if (room < MIN_SHARED_PAGE_CHARS || text.length - start <= room) return undefined;
  const nl = text.lastIndexOf("\n", start + room - 1);
  let lines = 0;
  for (let i = text.indexOf("\n", start); i >= 0 && i <= nl; i = text.indexOf("\n", i + 1)) lines++;
  // Whole lines when that leaves at most SNAP_CHARS of the room unused; otherwise the page goes on
  // into the next line, a slice of it, so one long line after short ones does not waste the share.
  if (nl >= start && start + room - (nl + 1) <= SNAP_CHARS) {
    return `${pageHeader(marker, { ...place, shownTo: place.from + lines, nextColumn: undefined, budget: share, cut: true })}\n${text.slice(start, nl + 1)}`;
  }
  let end = start + room;
  if (isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) end--;
  const lineStart = nl >= start ? nl + 1 : start;
  const firstColumn = nl >= start ? 1 : place.column;
  const lastLineLength = firstColumn - 1 + (lineEnd(text, lineStart) - lineStart);
  const sliced = { ...place, shownTo: place.from + lines + 1, nextColumn: firstColumn + (end - lineStart), lastLineLength, budget: share, cut: true };
  return `${pageHeader(marker, sliced)}\n${text.slice(start, end)}`;
}
