// A short label for what a tool result contains, used in one-line summaries of old results.
// Order matters: structural formats that *contain* source (a diff, a git log, grep output) are
// recognised before any source-code keyword, so a diff of a Go file is "diff", never "Go source"
// (upstream checked "package " first and mislabelled them). Only a head sample is read, so a 10 MB
// result costs the same as a 10 KB one.

const SAMPLE = 4096;

export type ContentKind =
  | "JSON"
  | "diff"
  | "git log"
  | "search results"
  | "log"
  | "HTML"
  | "XML"
  | "Go source"
  | "Python source"
  | "TypeScript source"
  | "JavaScript source"
  | "Rust source"
  | "Java source"
  | "C/C++ source"
  | "shell script"
  | "Markdown"
  | "CSV"
  | "source code"
  | "text";

export function detectContentKind(text: string): ContentKind {
  const sample = text.length > SAMPLE ? text.slice(0, SAMPLE) : text;
  const head = sample.trimStart();
  if (head === "") return "text";

  if (/^diff --git |^diff -[a-zA-Z]|^diff [^\n]+\n|^Index: \S/.test(head)) return "diff";
  if (/^--- \S[^\n]*\n\+\+\+ \S/.test(head)) return "diff";
  if (/^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m.test(head) && /^[-+ ]/m.test(head)) return "diff";
  if (/^commit [0-9a-f]{7,64}\b/.test(head)) return "git log";
  if (/^[0-9a-f]{7,40} \S/.test(head) && linesMatching(head, /^[0-9a-f]{7,40} \S/) >= 0.8) return "git log";

  const first = head.charCodeAt(0);
  if ((first === 123 || first === 91) && looksLikeJson(text.trim())) return "JSON";

  if (/^<\?xml[\s>]/i.test(head)) return "XML";
  if (/^<!doctype html|^<html[\s>]/i.test(head)) return "HTML";

  if (linesMatching(head, /^[^\s:]*[./][^\s:]*:\d+[:-]/) >= 0.6) return "search results";
  if (linesMatching(head, LOG_LINE) >= 0.4) return "log";

  if (/^#!\s*\/(?:usr\/)?bin\/(?:env\s+)?(?:ba|z|k|da)?sh\b/.test(head)) return "shell script";
  if (/^package [a-z_][\w]*\s*$/m.test(head) && /^(func|import|type|var|const) /m.test(head)) return "Go source";
  if (/^package [\w.]+;\s*$/m.test(head) || /^(public |private )?(final )?class \w+/m.test(head)) return "Java source";
  if (/^(pub )?(fn|struct|enum|impl|mod|use) [\w:<{]/m.test(head) && /\bfn \w+|::/.test(head)) return "Rust source";
  if (/^#include [<"]/m.test(head)) return "C/C++ source";
  if (/^\s*(async )?def \w+\(|^from [\w.]+ import |^class \w+(\(.*\))?:\s*$/m.test(head)) return "Python source";
  if (/^(export )?(interface|type) \w+|^\s*(export )?(declare |abstract )?(class|function) \w+[^\n]*\): \w/m.test(head)) {
    return "TypeScript source";
  }
  if (
    /^\s*(export |import |const |let |var |async )?function[\s*]|^(import .* from ['"]|export (default |const |function )|const \w+ = require\()/m.test(head)
  ) {
    return "JavaScript source";
  }
  if (/^package [a-z_]\w*\s*$/m.test(head)) return "Go source";
  if (/^import [\w{*"']/m.test(head)) return "source code";
  if (/^#{1,6} \S/m.test(head) && /^(#{1,6} |[-*] |\d+\. |```)/m.test(head)) return "Markdown";
  if (looksLikeCsv(head)) return "CSV";
  return "text";
}

const LOG_LINE =
  /^(\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}|\[?(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|PASS|FAIL|ok|FAIL|---)\b|\s+at \S+ \(|E\s{2,}|npm (ERR|WARN)!)/;

/** Fraction of non-empty lines in `sample` (whole lines only) that match `re`. */
function linesMatching(sample: string, re: RegExp): number {
  const lines = sample.split("\n");
  if (lines.length > 1 && sample.length >= SAMPLE) lines.pop();
  let total = 0;
  let hits = 0;
  for (const line of lines) {
    if (line.trim() === "") continue;
    total++;
    if (re.test(line)) hits++;
  }
  return total === 0 ? 0 : hits / total;
}

/** Valid JSON for texts we can afford to parse; for huge ones a consistent start and end. */
function looksLikeJson(trimmed: string): boolean {
  const last = trimmed.charCodeAt(trimmed.length - 1);
  const first = trimmed.charCodeAt(0);
  if (!((first === 123 && last === 125) || (first === 91 && last === 93))) return false;
  if (trimmed.length <= 1_000_000) {
    try {
      JSON.parse(trimmed);
      return true;
    } catch {
      return false;
    }
  }
  return /^[{[]\s*["{[\d\-tfn\]}]/.test(trimmed);
}

function looksLikeCsv(head: string): boolean {
  const lines = head.split("\n", 6).filter((l) => l.trim() !== "");
  if (lines.length < 3) return false;
  const commas = lines.map((l) => l.split(",").length - 1);
  return commas[0]! >= 2 && commas.every((c) => c === commas[0]);
}
