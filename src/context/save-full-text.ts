// Saving a result's full text before it is cut: a content-addressed file `results/<key>.txt` in the
// workspace (so the same text is saved once however many passes or turns see it), or the archive
// when no results directory is given. The caller learns the key and, for files, the path.
// The workspace's results are a store bounded like the archive: every pass saves each text it cuts
// again, which marks the file used, so a file the prompt names is never one eviction may take.
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { archiveKey, encodeForDisk } from "./archive-key.js";
import type { ArchiveStore } from "./archive-store.js";
import type { EntryExtensions } from "./disk-archive.js";
import { writeFileAtomic } from "../store/index.js";

/** How result files are named: `<key>.txt`, or `<key>.json` for a text saved as a JSON string. */
export const RESULT_FILE_EXTENSIONS: EntryExtensions = { text: ".txt", json: ".json" };

/** Result files in a store with the archive's limits (the workspace's `results/`, a DiskArchive named for them). */
export interface ResultStore extends ArchiveStore {
  pathFor(key: string, json?: boolean): string;
}

export interface SaveTarget {
  /** Bounded result files; used before `resultsDir`. */
  readonly results?: ResultStore;
  /** A directory for result files that nothing bounds (for callers without a workspace). */
  readonly resultsDir?: string;
  readonly archive?: ArchiveStore;
}

export interface Saved {
  readonly key: string;
  readonly path?: string;
  /** True when this call wrote something new. */
  readonly wrote: boolean;
}

/** `<key>.txt`, or `<key>.json` (a JSON string) for text with lone surrogates that UTF-8 cannot carry. */
export function resultFilePath(resultsDir: string, key: string, json = false): string {
  return resolve(join(resultsDir, key + (json ? RESULT_FILE_EXTENSIONS.json : RESULT_FILE_EXTENSIONS.text)));
}

/** Where `text` would be saved, without writing anything (so a preview can be built and judged first). */
export function plannedSave(text: string, target: SaveTarget): { key: string; path?: string } {
  const key = archiveKey(text);
  if (target.results !== undefined) return { key, path: target.results.pathFor(key, encodeForDisk(text).json) };
  if (target.resultsDir === undefined) return { key };
  return { key, path: resultFilePath(target.resultsDir, key, encodeForDisk(text).json) };
}

/** Throws on failure; callers keep the text uncut rather than lose it. `key` saves hashing twice when the caller has it. */
export function saveFullText(text: string, target: SaveTarget, key = archiveKey(text)): Saved {
  if (target.results !== undefined) {
    const had = target.results.has(key);
    // also when it is there: a put marks the file used, so eviction leaves it while a prompt names it
    target.results.put(text);
    return { key, path: target.results.pathFor(key, encodeForDisk(text).json), wrote: !had };
  }
  if (target.resultsDir !== undefined) {
    const { data, json } = encodeForDisk(text);
    const path = resultFilePath(target.resultsDir, key, json);
    if (existsSync(path)) return { key, path, wrote: false };
    mkdirSync(target.resultsDir, { recursive: true, mode: 0o700 });
    writeFileAtomic(path, data);
    return { key, path, wrote: true };
  }
  if (target.archive !== undefined) {
    const had = target.archive.has(key);
    target.archive.put(text);
    return { key, wrote: !had };
  }
  throw new Error("no results directory and no archive to save the full text in");
}
