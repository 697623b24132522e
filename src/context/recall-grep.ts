// recall's grep: matching lines with their numbers, never more than the answer's budget. A line up to
// GREP_LINE_MAX chars is shown whole; a longer one as a window around its first match, marked with the
// line's length, the characters shown and the exact calls for the rest of the line and for its later
// matches (offset=LINE column=CHAR). The scan stops at its time budget or an abort, checked every
// 64 KiB of text and after every long line, and its header says where to resume.
import { countOf } from "../errors/index.js";
import { isHighSurrogate as isHigh, isLowSurrogate as isLow } from "../capture/index.js";
import { RecallError } from "./errors.js";
import type { LineMatcher } from "./grep.js";
import { GREP_LINE_MAX, GREP_WINDOW, GREP_WINDOW_BEFORE, HEADER_RESERVE } from "./recall-limits.js";
import type { LineIndex } from "./recall-lines.js";

export interface GrepRequest {
  /** First line, 0-based. */
  readonly from: number;
  /** First character of the first line, 1-based: matches there start at or after it. */
  readonly column: number;
  /** Matching lines to show. */
  readonly limit: number;
  /** The longest answer, header included (Infinity = unbounded). */
  readonly budget: number;
  /** The pattern as the caller gave it, for the follow-up calls. */
  readonly pattern: string;
  readonly matcher: LineMatcher;
  readonly signal: AbortSignal | undefined;
  readonly deadline: number;
  readonly budgetMs: number;
}

export function grepLines(marker: string, content: string, lines: LineIndex, request: GrepRequest): string {
  const { from, column, limit, budget, matcher } = request;
  const total = lines.count;
  // (An empty text is "past the end" for a page; grep over it just finds nothing.)
  if (from >= total && total > 0) return `[recall ${marker}: offset ${from + 1} is past the end — the text has ${countOf(total, "line")}.]`;
  if (total > 0 && column > lines.end(from) - lines.start(from) + 1) {
    return `[recall ${marker}: column ${column} is past the end of line ${from + 1} — it has ${lines.end(from) - lines.start(from)} chars.]`;
  }
  const grepArg = grepArgument(request.pattern);
  const room = budget - HEADER_RESERVE;
  const shown: string[] = [];
  let used = 0;
  let n = from;
  let lastShown = -1;
  let outOfTime = false;
  let capped = false;
  let scannedChars = 0;
  for (; n < total && shown.length < limit; n++) {
    // The clock and the signal are checked every 64 KiB of text scanned, not on every line.
    if (scannedChars >= 65536) {
      scannedChars = 0;
      if (request.signal?.aborted) throw new RecallError("SPOOL_RECALL_ABORTED", `grep over ${marker} was aborted at line ${n + 1} of ${total}.`);
      if (performance.now() > request.deadline) {
        outOfTime = true;
        break;
      }
    }
    const line = content.slice(lines.start(n), lines.end(n));
    scannedChars += line.length + 64;
    const entry = matchEntry(marker, grepArg, n, line, n === from ? column - 1 : 0, matcher);
    if (entry === undefined) continue;
    if (used + entry.length + 1 > room) {
      capped = true;
      break;
    }
    shown.push(entry);
    used += entry.length + 1;
    lastShown = n;
  }
  const scannedTo = outOfTime || capped ? n : shown.length < limit ? total : lastShown + 1;
  // Stopped on the first line before showing it: resume there, at the same character.
  const resumeColumn = scannedTo === from && column > 1 ? ` column=${column}` : "";
  const resume = ` Next: recall ${marker} ${grepArg} offset=${scannedTo + 1}${resumeColumn} limit=${limit}.`;
  const next = outOfTime
    ? ` The scan stopped at its time budget (${request.budgetMs} ms).${resume}`
    : capped
      ? ` This answer stops at its cap of ${budget} chars.${resume}`
      : scannedTo < total
        ? resume
        : " No more matches after these.";
  const fromChar = column > 1 ? ` (line ${from + 1} from char ${column})` : "";
  const header = `[recall ${marker}: ${shown.length} line(s) matching /${shownPattern(matcher.source)}/${matcher.flags} in lines ${from + 1}-${scannedTo} of ${total}${fromChar}.${next}]`;
  return shown.length > 0 ? `${header}\n${shown.join("\n")}` : header;
}

/** `N: line` for a matching line; a window with its marker for a long one; undefined for no match. */
function matchEntry(marker: string, grepArg: string, n: number, line: string, from: number, matcher: LineMatcher): string | undefined {
  if (from === 0 && line.length <= GREP_LINE_MAX) return matcher.test(line) ? `${n + 1}: ${line}` : undefined;
  // A long line is tested first (RE2's yes/no scan is several times faster than finding where).
  if (from === 0 && !matcher.test(line)) return undefined;
  const match = matcher.find(line, from);
  if (match === undefined) return undefined;
  if (line.length <= GREP_LINE_MAX) return `${n + 1}: ${line}`;
  let start = Math.max(0, match[0] - GREP_WINDOW_BEFORE);
  let end = Math.min(line.length, start + GREP_WINDOW);
  if (isLow(line.charCodeAt(start)) && isHigh(line.charCodeAt(start - 1))) start++;
  if (isHigh(line.charCodeAt(end - 1)) && isLow(line.charCodeAt(end))) end--;
  const after = match[1] > match[0] ? match[1] : match[0] + 1;
  const later = after < line.length ? `; later matches: recall ${marker} ${grepArg} offset=${n + 1} column=${after + 1}` : "";
  const rest = end < line.length ? `; read on: recall ${marker} offset=${n + 1} column=${end + 1} limit=1` : "";
  return (
    `${n + 1}: [line of ${line.length} chars, showing chars ${start + 1}-${end} (${line.length - (end - start)} left out) around the match at char ${match[0] + 1}; ` +
    `whole line: recall ${marker} offset=${n + 1} limit=1${rest}${later}] ${line.slice(start, end)}`
  );
}

/** The grep argument of a follow-up call: the pattern itself, or a reference to it when it is long. */
function grepArgument(pattern: string): string {
  const json = JSON.stringify(pattern);
  return json.length <= 200 ? `grep=${json}` : "grep=(the same pattern)";
}

/** The pattern as a header shows it: on one line, at most 100 characters. */
function shownPattern(source: string): string {
  const oneLine = source.replace(/\r/g, "\\r").replace(/\n/g, "\\n");
  return oneLine.length > 100 ? `${oneLine.slice(0, 100)}…` : oneLine;
}
