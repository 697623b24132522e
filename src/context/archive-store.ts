// The interface every archive implements. Synchronous on purpose: entries are small files written
// once, and prepareHistory runs between model calls where a sync pass is simpler to reason about.

export interface ArchiveStats {
  readonly entries: number;
  readonly totalBytes: number;
  /** 0 = unbounded. */
  readonly maxBytes: number;
}

export interface ArchiveStore {
  /** Stores `content` (idempotent; refreshes recency) and returns its key. Throws ArchiveError if refused. */
  put(content: string): string;
  /** The content under `key`, or undefined for an unknown, invalid, expired or evicted key. */
  get(key: string): string | undefined;
  has(key: string): boolean;
  stats(): ArchiveStats;
}

/** Anything recall can read from: an archive, or a workspace that also knows its saved result files. */
export interface KeyLookup {
  get(key: string): string | undefined;
}
