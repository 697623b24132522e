// One page of a recalled text by lines, never longer than its budget: whole lines while they fit,
// and a line too long for the page shown as a slice whose header says which characters it holds and
// the exact call for the rest (offset=LINE column=CHAR). The body is the text's own characters, so
// the bodies of pages followed by their advertised next calls put end to end give back the original.
import { countOf } from "../errors/index.js";
import { isHighSurrogate as isHigh, isLowSurrogate as isLow } from "../capture/index.js";
import { describeLinePart } from "./line-part.js";
import { HEADER_RESERVE } from "./recall-limits.js";
import type { LineIndex } from "./recall-lines.js";

export interface PageRequest {
  /** First line, 0-based. */
  readonly from: number;
  /** First character of the first line, 1-based. */
  readonly column: number;
  /** Lines asked for; undefined = to the end. */
  readonly limit: number | undefined;
  /** The longest answer, header included (Infinity = unbounded). */
  readonly budget: number;
}

export function pageLines(marker: string, content: string, lines: LineIndex, request: PageRequest): string {
  const { from, column, limit, budget } = request;
  const total = lines.count;
  if (from >= total) return `[recall ${marker}: offset ${from + 1} is past the end — the text has ${countOf(total, "line")}.]`;
  const lineLength = lines.end(from) - lines.start(from);
  if (column > lineLength + 1) return `[recall ${marker}: column ${column} is past the end of line ${from + 1} — it has ${countOf(lineLength, "char")}.]`;
  const start = lines.start(from) + column - 1;
  const to = Math.min(total, from + (limit ?? total));
  const room = budget - HEADER_RESERVE;
  let end = lines.boundary(to);
  let shownTo = to;
  let nextColumn: number | undefined;
  if (end - start > room) {
    const k = lines.lastBoundaryAtOrBefore(start + room, from + 1, to);
    if (k !== undefined) {
      end = lines.boundary(k);
      shownTo = k;
    } else {
      // Not even the rest of the first line fits: a slice of it, never splitting a surrogate pair.
      end = start + room;
      if (isHigh(content.charCodeAt(end - 1)) && isLow(content.charCodeAt(end))) end--;
      shownTo = from + 1;
      nextColumn = column + (end - start);
    }
  }
  return `${pageHeader(marker, { from, shownTo, total, chars: content.length, lineLength, column, nextColumn, limit, budget, cut: end < lines.boundary(to) })}\n${content.slice(start, end)}`;
}

/** Where a page lies in its text: what its header says. */
export interface PagePlace {
  /** First line shown, 0-based. */
  readonly from: number;
  /** Last line shown (whole or in part), 1-based. */
  readonly shownTo: number;
  /** Lines and chars of the whole text. */
  readonly total: number;
  readonly chars: number;
  /** Length of line `from` (0-based), its newline excluded. */
  readonly lineLength: number;
  /** First character shown of line `from`, 1-based. */
  readonly column: number;
  /** The last line shown (`shownTo`) is shown up to just before this character (1-based). */
  readonly nextColumn: number | undefined;
  /** Length of line `shownTo` when it is shown in part and is not line `from` (default `lineLength`). */
  readonly lastLineLength?: number;
  /** Lines the call asked for, repeated in the next call. */
  readonly limit: number | undefined;
  readonly budget: number;
  /** The page stops before what was asked for because of its budget. */
  readonly cut: boolean;
}

/** The header line of a page: the lines it holds, and the exact call for the next part or that this is the end. */
export function pageHeader(marker: string, place: PagePlace): string {
  const { from, shownTo, total, chars, lineLength, column, nextColumn, limit, budget } = place;
  const limitArg = limit !== undefined ? ` limit=${limit}` : "";
  // A slice of a later line starts at its first character; of the first line, at `column`.
  const sliceOfFirst = nextColumn !== undefined && shownTo === from + 1;
  let where = column > 1 && !sliceOfFirst ? `; ${describeLinePart(from + 1, lineLength, column)}` : "";
  if (nextColumn !== undefined) {
    where += `; ${describeLinePart(shownTo, sliceOfFirst ? lineLength : (place.lastLineLength ?? lineLength), sliceOfFirst ? column : 1, nextColumn)}`;
  }
  const cut = place.cut ? `; this answer stops at its cap of ${budget} chars` : "";
  const next =
    nextColumn !== undefined
      ? ` Next: recall ${marker} offset=${shownTo} column=${nextColumn}${limitArg}.`
      : shownTo < total
        ? // Without a cut and without a limit the page always reaches the end, so `limitArg` is never empty here unless cut.
          ` Next: recall ${marker} offset=${shownTo + 1}${limitArg}.`
        : " This is the end.";
  return `[recall ${marker}: lines ${from + 1}-${shownTo} of ${total} (${countOf(chars, "char")})${where}${cut}.${next}]`;
}
