// Lines in the omitted middle of a cut result that mention errors. A fixed head/tail split hides
// the one failing test in the middle of a long build log; listing those lines, with
// their numbers, where the text was cut tells the model what it missed and where to read.
import { isHighSurrogate, isLowSurrogate } from "../capture/index.js";
const ERROR_RE = /\b(?:error|errors|err!|failed|failure|fail|panic|panicked|exception|fatal|traceback|segmentation fault|assertionerror)\b/gi;

export interface ErrorLine {
  /** 1-based line number in the whole text. */
  readonly line: number;
  readonly text: string;
}

export interface ErrorLineLimits {
  readonly maxLines: number;
  readonly maxLineChars: number;
}

/**
 * Whole lines lying inside [from, to) that match, in order, at most `maxLines`. `firstLine` is the
 * line number at `from`. The scan stops at the last match it keeps, so it is cheap when errors are
 * few and bounded by the middle's length when there are none.
 */
export function errorLines(text: string, from: number, to: number, firstLine: number, limits: ErrorLineLimits): ErrorLine[] {
  const out: ErrorLine[] = [];
  const re = new RegExp(ERROR_RE.source, ERROR_RE.flags);
  re.lastIndex = from;
  let line = firstLine;
  let pos = from;
  while (out.length < limits.maxLines) {
    const m = re.exec(text);
    if (m === null || m.index >= to) break;
    for (let nl = text.indexOf("\n", pos); nl >= 0 && nl < m.index; nl = text.indexOf("\n", nl + 1)) line++;
    pos = m.index;
    const start = text.lastIndexOf("\n", m.index - 1) + 1;
    const nl = text.indexOf("\n", m.index);
    const end = nl < 0 ? text.length : nl;
    if (start >= from && end <= to && end - start <= limits.maxLineChars) out.push({ line, text: text.slice(start, end) });
    else {
      // a long line (minified output, a JSON-encoded log on one line): the part around the match, inside
      // the cut middle; the scan goes on after it, since one such line may hold many errors
      const a = safeStart(text, Math.max(start, from, m.index - Math.floor(limits.maxLineChars / 3)));
      const b = Math.min(end, to, a + limits.maxLineChars);
      if (b > m.index) {
        const piece = text.slice(a, b);
        out.push({ line, text: `${a > start ? "…" : ""}${cutAt(piece, piece.length)}${b < end ? "…" : ""}` });
      }
      re.lastIndex = Math.max(b, m.index + m[0].length);
      continue;
    }
    if (nl < 0) break;
    re.lastIndex = nl + 1;
  }
  return out;
}

/** Never start on the second half of a surrogate pair. */
function safeStart(s: string, i: number): number {
  const code = s.charCodeAt(i);
  return isLowSurrogate(code) ? i + 1 : i;
}

/** Never split a surrogate pair when shortening a line. */
function cutAt(s: string, n: number): string {
  const code = s.charCodeAt(n - 1);
  return s.slice(0, isHighSurrogate(code) ? n - 1 : n);
}
