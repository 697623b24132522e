// The in-memory archive: a bounded LRU (a Map in recency order). One entry may use at most a quarter
// of the budget, so a fresh put can never evict itself and leave a dangling marker.
import { Buffer } from "node:buffer";
import { archiveKey, isValidKey } from "./archive-key.js";
import { ArchiveError } from "./errors.js";
import type { ArchiveStats, ArchiveStore } from "./archive-store.js";

export class MemoryArchive implements ArchiveStore {
  private readonly entries = new Map<string, { content: string; bytes: number }>();
  private total = 0;
  readonly maxBytes: number;

  /** `maxBytes` ≤ 0 or omitted means unbounded. */
  constructor(options: { maxBytes?: number } = {}) {
    this.maxBytes = options.maxBytes !== undefined && options.maxBytes > 0 ? options.maxBytes : 0;
  }

  put(content: string): string {
    const key = archiveKey(content);
    const existing = this.entries.get(key);
    if (existing) {
      this.entries.delete(key);
      this.entries.set(key, existing);
      return key;
    }
    const bytes = Buffer.byteLength(content, "utf8");
    if (this.maxBytes > 0 && bytes > this.maxBytes / 4) throw tooLarge(bytes, this.maxBytes);
    this.entries.set(key, { content, bytes });
    this.total += bytes;
    this.evict();
    return key;
  }

  get(key: string): string | undefined {
    if (!isValidKey(key)) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.content;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  stats(): ArchiveStats {
    return { entries: this.entries.size, totalBytes: this.total, maxBytes: this.maxBytes };
  }

  private evict(): void {
    if (this.maxBytes <= 0) return;
    for (const [key, entry] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(key);
      this.total -= entry.bytes;
    }
  }
}

export function tooLarge(bytes: number, maxBytes: number): ArchiveError {
  return new ArchiveError(
    "SPOOL_ARCHIVE_ENTRY_TOO_LARGE",
    `cannot archive ${bytes} bytes: one entry may use at most a quarter of the archive (${Math.floor(maxBytes / 4)} of ${maxBytes} bytes). ` +
      "Raise the archive size (SPOOL_ARCHIVE_MAX_MB) or keep this text uncut.",
  );
}
