// The transcript: every settled tool result of a session, in order, as one session-scope list. Read
// whole (readTranscript), or page by page without holding it (transcriptEntries).
import type { ToolResultMessage } from "../context/index.js";
import { list, type Store } from "../store/index.js";

export const TRANSCRIPT = list<ToolResultMessage>("transcript");

/**
 * The transcript's entries in order, read a page at a time: only the current page is held (`pageSize`
 * entries, the store's default when unset).
 */
export function* transcriptEntries(store: Pick<Store, "readList">, pageSize?: number): Generator<ToolResultMessage, void, undefined> {
  let cursor: number | undefined;
  for (;;) {
    const page = store.readList(TRANSCRIPT, { ...(cursor !== undefined ? { cursor } : {}), ...(pageSize !== undefined ? { limit: pageSize } : {}) });
    for (const el of page.elements) yield el.value;
    if (page.cursor === undefined) return;
    cursor = page.cursor;
  }
}

/** How many settled tool results the session holds, read a page at a time (memory: one page). */
export function transcriptLength(store: Pick<Store, "readList">): number {
  let n = 0;
  for (const _ of transcriptEntries(store)) n++;
  return n;
}

/** Every settled tool result of a session, in order. */
export function readTranscript(store: Pick<Store, "readList">): ToolResultMessage[] {
  return [...transcriptEntries(store)];
}
