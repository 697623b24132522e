// The texts that replace a cut tool result, and how to recognise them again. Every stub opens with a
// header that says plainly that the text is partial (the "phantom read" complaint: models act on a
// preview as if it were the whole file), how big the original is, and exactly how to get the rest.
// Stubs describe the ORIGINAL — a later level reads these numbers back instead of measuring the
// previous stub (upstream summarised its own preview). Recognising a stub is what makes every pass
// idempotent: a stub is never cut again, never re-saved, never re-archived.
import { countOf } from "../errors/index.js";
import { formatMarker } from "./archive-key.js";
import { countLines, headTail } from "./cut.js";
import { errorLines } from "./error-lines.js";

export interface Origin {
  /** Archive keys under which the original text can be recalled. */
  readonly keys: readonly string[];
  /** A file holding the original (a budget result file or a tool's spill file). */
  readonly path?: string;
}

export interface OriginalStats {
  readonly chars: number;
  readonly lines: number;
  readonly kind: string;
}

export type StubLevel = "partial" | "truncated" | "failed" | "cleared";

export interface ParsedStub extends OriginalStats, Origin {
  readonly level: StubLevel;
}

const LEADS: Record<Exclude<StubLevel, "cleared">, string> = {
  partial: "[Partial tool result — ",
  truncated: "[Old tool result truncated — ",
  failed: "[Old failed tool result — ",
};
const CLEARED_LEAD = "[Old tool result cleared — ";
const ERROR_LINE_LIMITS = { maxLines: 8, maxLineChars: 160 };
/** Stubs are small; a "stub" longer than this is a tool output that merely starts like one. */
const MAX_STUB_CHARS = 64 * 1024;

function howToRead(origin: Origin): string {
  const ways: string[] = [];
  for (const key of origin.keys) ways.push(`recall ${formatMarker(key)} (offset/limit/grep page through it)`);
  if (origin.path !== undefined) ways.push(`read the file ${origin.path} by line range`);
  return ways.length > 0 ? ways.join(", or ") : "it was not saved";
}

/** A head + tail preview of `text` with a header; `undefined` when it would not be shorter than `text`. */
export function buildPreview(
  level: Exclude<StubLevel, "cleared">,
  text: string,
  headChars: number,
  tailChars: number,
  origin: Origin,
  kind: string,
  listErrors = level !== "truncated",
): string | undefined {
  const { head, tail, omitted } = headTail(text, headChars, tailChars);
  if (omitted <= 0) return undefined;
  const lines = countLines(text);
  const headLines = countLines(head);
  const tailLines = countLines(tail);
  const firstTailLine = lines - tailLines + 1;
  // One line cut in two (minified JSON, a long log line) read "lines 1-1 and 1-1 of 1".
  const shown =
    lines === 1 && tailLines > 0
      ? "the start and the end of line 1"
      : tailLines > 0
        ? `lines 1-${headLines} and ${firstTailLine}-${lines}`
        : `lines 1-${headLines}`;
  // The budget's previews list error lines (they cut fresh results the model is acting on now), and so do old failed results.
  const found = listErrors
    ? errorLines(text, head.length, text.length - tail.length, headLines + (head.endsWith("\n") || head === "" ? 1 : 0), ERROR_LINE_LIMITS)
    : [];
  const header =
    `${LEADS[level]}showing ${shown} of ${lines} (${text.length} chars, ${kind}). ` +
    `The middle ${omitted} chars are omitted${found.length > 0 ? " (lines in it that mention errors are listed where it is cut)" : ""}. ` +
    `To read the rest: ${howToRead(origin)}.]`;
  const sep = head.endsWith("\n") || head === "" ? "" : "\n";
  const cut =
    found.length === 0
      ? `[... ${omitted} chars omitted ...]`
      : `[... ${omitted} chars omitted; lines in it that mention errors:\n${found.map((e) => `${e.line}: ${e.text}`).join("\n")}\n...]`;
  const preview = `${header}\n${head}${sep}${cut}\n${tail}`;
  return preview.length < text.length ? preview : undefined;
}

/** The one-line summary of an old result, plus how to get it back. */
export function buildSummary(stats: OriginalStats, origin: Origin): string {
  const line = `${CLEARED_LEAD}${countOf(stats.lines, "line")}, ${countOf(stats.chars, "char")}, ${stats.kind}]`;
  const ways: string[] = [];
  if (origin.keys.length > 0) ways.push(`recall ${origin.keys.map(formatMarker).join(" ")}`);
  if (origin.path !== undefined) ways.push(`read ${origin.path}`);
  return ways.length > 0 ? `${line}\n[full content recoverable via ${ways.join(", or ")}]` : line;
}

const PREVIEW_RE =
  /^\[(?:Partial tool result|Old tool result truncated|Old failed tool result) — showing [^\n]*? of (\d+) \((\d+) chars, ([^)\n]+)\)\. The middle \d+ chars are omitted(?: \([^)\n]*\))?\. To read the rest: ([^\n]*)\.\]\n/;
const SUMMARY_RE = /^\[Old tool result cleared — (\d+) lines?, (\d+) chars?, ([^\]\n]+)\](?:\n\[full content recoverable via ([^\n]*)\])?$/;

/** Recognises a stub this module built; anything else (including look-alikes that are too big) is undefined. */
export function parseStub(text: string): ParsedStub | undefined {
  if (text.length > MAX_STUB_CHARS || text.charCodeAt(0) !== 91) return undefined;
  if (text.startsWith(CLEARED_LEAD)) {
    const m = SUMMARY_RE.exec(text);
    if (!m) return undefined;
    return { level: "cleared", lines: Number(m[1]), chars: Number(m[2]), kind: m[3]!, ...parseWays(m[4] ?? "") };
  }
  const level: StubLevel | undefined = text.startsWith(LEADS.partial)
    ? "partial"
    : text.startsWith(LEADS.truncated)
      ? "truncated"
      : text.startsWith(LEADS.failed)
        ? "failed"
        : undefined;
  if (level === undefined) return undefined;
  const m = PREVIEW_RE.exec(text);
  if (!m) return undefined;
  const chars = Number(m[2]);
  if (!(text.length < chars)) return undefined;
  return { level, lines: Number(m[1]), chars, kind: m[3]!, ...parseWays(m[4]!) };
}

function parseWays(ways: string): Origin {
  const keys: string[] = [];
  for (const match of ways.matchAll(/<<ccr:([0-9a-f]{16})>>/g)) if (!keys.includes(match[1]!)) keys.push(match[1]!);
  const path = /(?:read the file (.+?) by line range|read (.+?))(?:, or |$)/.exec(ways);
  const p = path?.[1] ?? path?.[2];
  return p !== undefined ? { keys, path: p } : { keys };
}
