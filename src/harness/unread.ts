// What a background process printed since the model last read it. Lines are numbered over the whole
// cleaned output (the capture's totals), so "new" is exact even when the bounded view has moved on:
// lines that left the view before they were read are counted, not lost silently. A line on a
// terminal screen can change after it was read (a progress display redrawn in place): the last lines
// read are remembered, and a read starts again from the first of them that changed.
import type { CaptureView } from "../capture/index.js";
import { formatBytes, utf8Length } from "../capture/index.js";

/** Lines remembered to notice redraws: more than any terminal model's screen. */
const REMEMBER = 128;

export interface ReadCursor {
  /** Complete lines read, counted from the start of the output. */
  readonly lines: number;
  /** Cleaned bytes of those lines, newlines included. */
  readonly bytes: number;
  /** The last complete lines read (up to REMEMBER), ending at line `lines - 1`. */
  readonly tail: readonly string[];
  /** The unfinished line as it was last shown: shown again only once it changed or finished. */
  readonly open: string;
  /** Raw bytes received when binary output was last reported (binary output renders no lines). */
  readonly rawBytes: number;
  /** Over-long lines cut (the capture's count) when it was last read. */
  readonly cutLines: number;
}

export const START: ReadCursor = { lines: 0, bytes: 0, tail: [], open: "", rawBytes: 0, cutLines: 0 };

export interface Unread {
  /** New lines, newline-terminated, then the current unfinished line (shown again once it changed or finished). */
  readonly text: string;
  /** Lines printed since the last read that left the bounded view before this read. */
  readonly skippedLines: number;
  readonly skippedBytes: number;
  /** Over-long lines cut since the last read (shown with their cut marker, or among the skipped ones). */
  readonly cutLines: number;
  readonly cursor: ReadCursor;
}

export function takeUnread(view: CaptureView, cursor: ReadCursor, finished: boolean): Unread {
  if (view.binary) {
    // No lines to number: what is new is that more bytes came, said once per read that finds more.
    const where = view.spillPath !== undefined ? `Full output: ${view.spillPath}` : "The full output was not kept.";
    const text = view.rawBytes !== cursor.rawBytes ? `[Binary output (${formatBytes(view.rawBytes)}${finished ? "" : " so far"}) not shown. ${where}]\n` : "";
    return { text, skippedLines: 0, skippedBytes: 0, cutLines: 0, cursor: { ...cursor, rawBytes: view.rawBytes } };
  }
  const t = view.truncation;
  const lines = view.text === "" ? [] : view.text.split("\n");
  // A trailing "" is the newline of a complete last line; otherwise the last line is unfinished.
  const open = lines.length > 0 && lines[lines.length - 1] !== "" ? lines[lines.length - 1]! : undefined;
  if (lines.length > 0) lines.pop();
  const first = t.totalLines - t.outputLines;
  const complete = lines.length;
  // The first line to show: just after the last one read, or the first remembered line that changed.
  let from = cursor.lines;
  const rememberedFrom = cursor.lines - cursor.tail.length;
  for (let i = Math.max(first, rememberedFrom); i < Math.min(cursor.lines, first + complete); i++) {
    if (lines[i - first] !== cursor.tail[i - rememberedFrom]) {
      from = i;
      break;
    }
  }
  // Fewer lines than were read (a cleared screen): whatever now stands there is new.
  const known = first + complete + (finished && open !== undefined ? 1 : 0);
  if (cursor.lines > known) from = Math.min(from, first + complete);
  const skippedLines = Math.max(0, first - from);
  const bytesBefore = t.totalBytes - t.outputBytes;
  const skippedBytes = skippedLines > 0 ? Math.max(0, bytesBefore - cursor.bytes) : 0;
  const shown = lines.slice(Math.max(0, from - first));
  let text = shown.length > 0 ? shown.join("\n") + "\n" : "";
  // A prompt waiting for input is news once; the same prompt again is not.
  if (open !== undefined && (shown.length > 0 || skippedLines > 0 || open !== cursor.open)) text += open;
  // A finished process's last line is final: it is read like any other.
  const readAll = finished && open !== undefined ? [...lines, open] : lines;
  const tail = readAll.slice(-REMEMBER);
  let bytes = bytesBefore;
  for (const l of lines) bytes += utf8Length(l) + 1;
  if (readAll.length > lines.length) bytes += utf8Length(open!);
  return {
    text,
    skippedLines,
    skippedBytes,
    cutLines: Math.max(0, t.cutLines - cursor.cutLines),
    cursor: { lines: first + readAll.length, bytes, tail, open: open ?? "", rawBytes: view.rawBytes, cutLines: t.cutLines },
  };
}
