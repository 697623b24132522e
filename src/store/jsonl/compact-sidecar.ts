// Rewriting a long-lived sidecar as its live records. A sidecar gains a line per durable flush until
// its operation settles, and a clear is one more line, not a removal: the harness clears a tool's
// list at every base, so memory holds only the batches since the last one, but the file kept every
// batch ever flushed (a dev server or a long `spool run` grew it for hours: 37.3 MB after 20,000
// flushes of a 50 KB window, of which recovery reads ~100 KB). Once a sidecar has grown
// to `floor` bytes and SIDECAR_GROWTH × its size after its last rewrite, it is written again whole —
// its header, then each live value and list element as a one-write transaction at the seq it was
// written with — to a temp file beside it, synced and renamed over it (atomic-write.ts). A SIGKILL
// before the rename leaves the old file and a `*.tmp` that open removes; after it, the new file;
// either replays to the same state. The growth factor keeps it amortised: a rewrite writes at most the
// file's live bytes, and at least (1 − 1/SIDECAR_GROWTH) of the file was appended since the last one.
// Measured (`npm run bench:store`, section long): at the 1 MiB default the sidecar never passed
// 1.03 MB, one flush in ~550 rewrote it, in about 2 ms: 3–4 µs a flush amortised.
import type { PreparedWrite } from "../write.js";
import { replaceFileForAppend } from "../atomic-write.js";
import { AppendFile } from "./log-file.js";
import { encodeTransaction } from "./records.js";

/** A sidecar is rewritten once it is this many times its size after its last rewrite (and at least `floor`). */
export const SIDECAR_GROWTH = 4;

/** The size at which a sidecar of `size` bytes (just written or rewritten) is next rewritten. */
export function nextCompaction(size: number, floor: number): number {
  return Math.max(floor, SIDECAR_GROWTH * size);
}

export interface SeqWrite {
  readonly seq: number;
  readonly write: PreparedWrite;
}

/**
 * The compact text: the header line, the live records in seq order, and `last` — the last write of
 * the newest transaction — when it is a delete or a clear. Such a write hides nothing any more (what it
 * removed was never written again), but its seq is the highest the file used, and the file must keep it:
 * open takes the next seq from the highest record of every file, and an acknowledged seq is never
 * reused. (A set or an append at that seq is live, so it is among the records already.)
 */
export function compactSidecarText(headerLine: string, scope: string, records: Iterable<SeqWrite>, last?: SeqWrite): string {
  let text = headerLine;
  for (const r of records) text += encodeTransaction(r.seq, scope, [r.write]);
  if (last !== undefined && (last.write.op === "delete" || last.write.op === "clear")) text += encodeTransaction(last.seq, scope, [last.write]);
  return text;
}

/** Publishes `text` over the sidecar at `path` and returns the file to go on appending to. */
export function rewriteSidecar(path: string, text: string): AppendFile {
  return new AppendFile(path, undefined, replaceFileForAppend(path, text));
}
