// Reading the main log in bounded chunks (4 MiB, or one longer line), with the torn-tail rules of
// log-file.ts, and starting from a checkpoint when one still matches the file. Memory stays at a chunk
// whatever the log's length; nothing is kept of a line once it has been handed over.
import { Buffer } from "node:buffer";
import { CorruptSessionError } from "../errors.js";
import { hasNul } from "./log-file.js";
import { DAMAGED_LAST_LINE, openLineAt, verifiedChecksum } from "./line.js";
import type { LogSource } from "./log-source.js";
import { MainState } from "./main-state.js";
import type { LineLoc } from "./list-segments.js";
import { readCheckpoint, type CheckpointMeta, type LineMark } from "./checkpoint.js";
import { checkMainHeader, type SessionHeader } from "./records.js";

const CHUNK = 4 * 1024 * 1024;

/**
 * A checkpoint covering at most this much of the log is checked line by line on open anyway (the
 * checksums only: about 3 ms per MiB on the benchmark machine), so a small session is verified whole
 * every time it opens; past it, the covered lines are verified when a read reaches them.
 */
export const VERIFY_WHOLE_BYTES = 1024 * 1024;

/** Where the last complete line of the file ends (0 when there is none); bytes after it are a torn tail. */
export function completeEnd(src: LogSource, fileLength: number): number {
  let end = fileLength;
  while (end > 0) {
    const from = Math.max(0, end - 65536);
    const buf = src.readUpTo(from, end - from);
    const nl = buf.lastIndexOf(10);
    if (nl >= 0) return from + nl + 1;
    end = from;
  }
  return 0;
}

export interface ScanEnd {
  /** Bytes of complete, valid lines; a torn last line (NULs) is left out. */
  readonly goodLength: number;
  /** Lines up to goodLength. */
  readonly lines: number;
}

/**
 * Verifies each complete line in [from, end) — `end` from completeEnd — and hands it over, parsed
 * when `parse`. A last line holding NULs is torn and stops the scan; any other line that does not
 * verify is corruption, reported with file and line. `lineBefore` is the number of the line before `from`.
 */
export function scanLines(
  src: LogSource,
  from: number,
  lineBefore: number,
  end: number,
  parse: boolean,
  onLine: (record: Record<string, unknown> | undefined, at: LineLoc, h: string) => void,
): ScanEnd {
  let pos = from;
  let line = lineBefore;
  // One chunk buffer for the whole scan: a fresh 4 MiB per chunk waited for a collection to be freed.
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK, end - from));
  while (pos < end) {
    let want = Math.min(CHUNK, end - pos);
    let buf = src.readInto(chunk.subarray(0, want), pos);
    let last = buf.lastIndexOf(10);
    while (last < 0) {
      // One line longer than the chunk: read it whole (`end` is a newline, so this stops).
      want = Math.min(want * 2, end - pos);
      buf = src.read(pos, want);
      last = buf.lastIndexOf(10);
    }
    for (let s = 0; s <= last; ) {
      const nl = buf.indexOf(10, s);
      line++;
      const nul = nl > s && hasNul(buf, s, nl);
      const h = nul ? undefined : verifiedChecksum(buf, s, nl);
      const record = h === undefined ? undefined : parse ? openLineAt(buf, s, nl) : undefined;
      if (h === undefined || (parse && record === undefined)) {
        const isLast = pos + nl + 1 === end;
        if (isLast && nul) return { goodLength: pos + s, lines: line - 1 };
        throw new CorruptSessionError(src.path, line, nl === s ? "empty line" : isLast ? DAMAGED_LAST_LINE : "the line is damaged (bad checksum or not JSON)", {
          repairable: true,
        });
      }
      onLine(record, { offset: pos + s, length: nl + 1 - s, line }, h);
      s = nl + 1;
    }
    pos += last + 1;
  }
  return { goodLength: end, lines: line };
}

/** The header line, if the file starts with a complete, verified one. */
export function readHeader(src: LogSource, end: number): { header: SessionHeader; h: string; length: number } | undefined {
  let want = Math.min(65536, end);
  for (;;) {
    if (want === 0) return undefined;
    const buf = src.read(0, want);
    const nl = buf.indexOf(10);
    if (nl < 0) {
      if (want === end) return undefined;
      want = Math.min(want * 2, end);
      continue;
    }
    const record = hasNul(buf, 0, nl) ? undefined : openLineAt(buf, 0, nl);
    if (record === undefined) return undefined;
    return { header: checkMainHeader(src.path, record), h: record.h as string, length: nl + 1 };
  }
}

export interface CheckpointStart {
  readonly header: SessionHeader;
  readonly headerH: string;
  readonly main: MainState;
  readonly meta: CheckpointMeta;
}

/**
 * The checkpoint beside the log, if it still describes this file's first `meta.length` bytes: same
 * session and header, the last covered line where it says and verified, and (for a small prefix) every
 * covered line verified and counted. Undefined means replay the whole log.
 */
export function checkpointStart(src: LogSource, end: number): CheckpointStart | undefined {
  const ckpt = readCheckpoint(src.path);
  if (ckpt === undefined) return undefined;
  const { meta } = ckpt;
  if (meta.length > end) return undefined;
  const head = readHeader(src, end);
  if (head === undefined || head.header.sessionId !== meta.sessionId || head.h !== meta.headerH) return undefined;
  if (!lineStillThere(src, meta.last)) return undefined;
  if (meta.lines === 1 ? meta.length !== head.length : meta.last.offset < head.length) return undefined;
  const main = MainState.fromIndex(src, ckpt.index, meta.length);
  if (main === undefined) return undefined;
  if (meta.length <= VERIFY_WHOLE_BYTES) {
    const scanned = scanLines(src, 0, 0, meta.length, false, () => undefined);
    if (scanned.lines !== meta.lines || scanned.goodLength !== meta.length) return undefined;
  }
  return { header: head.header, headerH: head.h, main, meta };
}

function lineStillThere(src: LogSource, mark: LineMark): boolean {
  const buf = src.read(mark.offset, mark.length);
  return buf[mark.length - 1] === 10 && verifiedChecksum(buf, 0, mark.length - 1) === mark.h;
}
