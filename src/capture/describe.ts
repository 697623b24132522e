// The model-facing footer: says loudly that the view is partial, what was kept and where the rest is
// (a marker that does not say which part was kept leads models to "phantom reads": acting on a
// partial view as if it were the whole output).
import { countOf } from "../errors/index.js";
import type { CaptureMetadata, CaptureView, Retain } from "./types.js";

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** undefined when the view shows everything. */
export function describeTruncation(meta: CaptureMetadata, retain: Retain = "tail"): string | undefined {
  const t = meta.truncation;
  if (!t.truncated) return undefined;
  const where = meta.spillPath !== undefined ? `Full output: ${meta.spillPath}` : "The full output was not kept.";
  if (meta.binary) return `[Binary output (${formatBytes(meta.rawBytes)}) not shown. ${where}]`;
  const part = retain === "tail" ? "last" : "first";
  let shown: string;
  if (t.lastLinePartial) {
    // The view's bytes count the line's newline when it kept it; the sentence is about the line's text.
    const text = (meta as Partial<CaptureView>).text;
    const kept = t.outputBytes - (text !== undefined && text.endsWith("\n") ? 1 : 0);
    shown = `Showing the ${part} ${formatBytes(kept)} of line ${retain === "tail" ? t.totalLines : 1} (the line is ${formatBytes(t.lastLineBytes ?? 0)})`;
  } else if (t.truncatedBy === "line-length") {
    shown = `Showing all ${countOf(t.totalLines, "line")}`;
  } else {
    shown = `Showing the ${part} ${t.outputLines} of ${countOf(t.totalLines, "line")} ` + `(${formatBytes(t.outputBytes)} of ${formatBytes(t.totalBytes)})`;
  }
  const cut = t.cutLines > 0 ? `; ${countOf(t.cutLines, "over-long line was", "over-long lines were")} cut` : "";
  return `[${shown}${cut}. ${where}]`;
}
