// The on-disk archive: one file `<key>.ccr` per entry holding the raw UTF-8 text (`<key>.ccrj`, the
// JSON string form, for the rare text with lone surrogates UTF-8 cannot carry). The directory is
// the index (no index file to corrupt or race on); a file's mtime is its last access, refreshed on
// put and get. Writes are atomic (temp file in the same directory, then rename), so a reader in
// another process sees a whole entry or none — and a key this process has never seen is looked up
// on disk and adopted, which is how several processes share one archive. Entries are read by the
// workspace's containment rule (contained-read.ts): a symlink or a FIFO under an entry's name is
// refused, never followed, and put() replaces it with a real entry. The workspace keeps its budget's
// result files (`results/<key>.txt`, `.json`) in a second instance named for them, so one set of
// limits and one eviction bound both directories.
import { Buffer } from "node:buffer";
import { lstatSync, mkdirSync, readdirSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { join, resolve } from "node:path";
import { archiveKey, decodeFromDisk, encodeForDisk, isValidKey } from "./archive-key.js";
import type { ArchiveStats, ArchiveStore } from "./archive-store.js";
import { readContained } from "./contained-read.js";
import { ArchiveError, ContextError } from "./errors.js";
import { tooLarge } from "./memory-archive.js";
import { warnSessionDirRemoved, writeFileAtomic } from "../store/index.js";

/**
 * An entry's key is its text's hash, so a file that no longer hashes to its name was changed or
 * damaged since it was written: refused, rather than handed to a model as the original.
 */
export function verifyEntry(key: string, content: string): void {
  if (archiveKey(content) !== key) {
    throw new ArchiveError(
      "SPOOL_ARCHIVE_DAMAGED",
      `archive entry ${key} no longer holds the text it was saved with (the file was changed or damaged); the original is lost here — a spill file may still have it`,
    );
  }
}

export const DEFAULT_ARCHIVE_MAX_BYTES = 256 * 1024 * 1024;
export const DEFAULT_ARCHIVE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Rescanning a big directory on every put would dominate; upstream sweeps at most hourly too. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** How long a put or read protects an entry from eviction by the size cap. */
const KEEP_RECENT_MS = 10 * 60 * 1000;
const STALE_TEMP_MS = 10 * 60 * 1000;

export interface DiskArchiveOptions {
  readonly dir: string;
  /** Reads are refused when an entry resolves outside this directory (default: `dir`; a workspace passes its own root). */
  readonly root?: string;
  /** ≤ 0 = no size cap. Default 256 MB. */
  readonly maxBytes?: number;
  /** ≤ 0 = entries never expire. Default 7 days. */
  readonly ttlMs?: number;
  /** How entry files are named: `<key><text>`, or `<key><json>` for a JSON string (default `.ccr` / `.ccrj`). */
  readonly extensions?: EntryExtensions;
  /**
   * An entry over a quarter of the cap: refused (the default), or kept like any other — for result
   * files, where a refusal leaves the result uncut and sends the whole text to the model.
   */
  readonly oversized?: "refuse" | "keep";
}

export interface EntryExtensions {
  readonly text: string;
  readonly json: string;
}

const ARCHIVE_EXTENSIONS: EntryExtensions = { text: ".ccr", json: ".ccrj" };

export interface PruneResult {
  readonly removed: number;
  readonly bytesFreed: number;
  readonly remainingEntries: number;
  readonly remainingBytes: number;
}

interface Entry {
  bytes: number;
  atime: number;
}

export class DiskArchive implements ArchiveStore {
  readonly dir: string;
  readonly root: string;
  readonly maxBytes: number;
  readonly ttlMs: number;
  readonly extensions: EntryExtensions;
  private readonly keepOversized: boolean;
  private index = new Map<string, Entry>();
  private total = 0;
  private lastSweep = 0;

  constructor(options: DiskArchiveOptions) {
    // Absolute: reads check a path against the root, and a relative one would be resolved twice.
    this.dir = resolve(options.dir);
    this.root = resolve(options.root ?? options.dir);
    this.maxBytes = options.maxBytes === undefined ? DEFAULT_ARCHIVE_MAX_BYTES : Math.max(0, options.maxBytes);
    this.ttlMs = options.ttlMs === undefined ? DEFAULT_ARCHIVE_TTL_MS : Math.max(0, options.ttlMs);
    this.extensions = options.extensions ?? ARCHIVE_EXTENSIONS;
    this.keepOversized = options.oversized === "keep";
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new ArchiveError(
        "SPOOL_ARCHIVE_DIR",
        `cannot create the archive directory ${this.dir}: ${(err as Error).message}. Point the archive at a writable directory.`,
      );
    }
    this.sweep();
  }

  pathFor(key: string, json = false): string {
    return join(this.dir, key + (json ? this.extensions.json : this.extensions.text));
  }

  put(content: string): string {
    const key = archiveKey(content);
    const { data, json } = encodeForDisk(content);
    const bytes = Buffer.byteLength(data, "utf8");
    if (this.maxBytes > 0 && bytes > this.maxBytes / 4 && !this.keepOversized) throw tooLarge(bytes, this.maxBytes);
    const path = this.pathFor(key, json);
    const now = Date.now();
    if (this.touch(path, now)) {
      if (!this.index.has(key)) this.adopt(key, bytes, now);
      else this.index.get(key)!.atime = now;
      return key;
    }
    try {
      this.write(path, data);
    } catch (err) {
      throw new ArchiveError(
        "SPOOL_ARCHIVE_WRITE",
        `cannot write archive entry ${key} in ${this.dir}: ${(err as Error).message}. Check free space and permissions.`,
      );
    }
    this.adopt(key, bytes, now);
    if (now - this.lastSweep >= SWEEP_INTERVAL_MS) this.sweep();
    this.evict(key);
    return key;
  }

  /**
   * A directory deleted under a running session (`rm -rf .spool`) is created again and the write
   * retried once: without it every later put failed, nothing was cut and the context grew without
   * bound. The index is rebuilt from the new, empty directory (the old entries are gone with it), and
   * the user is told once per session directory.
   */
  private write(path: string, data: string): void {
    try {
      writeFileAtomic(path, data);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      if (mkdirSync(this.dir, { recursive: true, mode: 0o700 }) === undefined) throw err;
    }
    this.rescan();
    warnSessionDirRemoved(this.root);
    writeFileAtomic(path, data);
  }

  get(key: string): string | undefined {
    if (!isValidKey(key)) return undefined;
    for (const json of [false, true]) {
      const path = this.pathFor(key, json);
      let data: string | undefined;
      try {
        data = readContained(this.root, path);
      } catch (err) {
        if (err instanceof ContextError) throw err;
        throw new ArchiveError("SPOOL_ARCHIVE_READ", `cannot read archive entry ${key}: ${(err as Error).message}.`);
      }
      if (data === undefined) continue;
      let content: string;
      try {
        content = decodeFromDisk(data, json);
      } catch {
        return undefined;
      }
      verifyEntry(key, content);
      const now = Date.now();
      this.touch(path, now);
      const entry = this.index.get(key);
      if (entry) entry.atime = now;
      else this.adopt(key, Buffer.byteLength(data, "utf8"), now);
      return content;
    }
    this.forget(key);
    return undefined;
  }

  has(key: string): boolean {
    if (!isValidKey(key)) return false;
    if (this.index.has(key)) return true;
    for (const json of [false, true]) {
      try {
        if (lstatSync(this.pathFor(key, json)).isFile()) return true;
      } catch {
        // try the other encoding
      }
    }
    return false;
  }

  /** `staleEntries`: entries past the TTL that the next sweep or prune will remove. */
  stats(): ArchiveStats & { readonly ttlMs: number; readonly oldestAgeMs: number; readonly staleEntries: number } {
    const now = Date.now();
    let oldest = Infinity;
    let stale = 0;
    for (const entry of this.index.values()) {
      oldest = Math.min(oldest, entry.atime);
      if (this.ttlMs > 0 && now - entry.atime > this.ttlMs) stale++;
    }
    return {
      entries: this.index.size,
      totalBytes: this.total,
      maxBytes: this.maxBytes,
      ttlMs: this.ttlMs,
      oldestAgeMs: oldest === Infinity ? 0 : Math.max(0, now - oldest),
      staleEntries: stale,
    };
  }

  /** Rescan (adopting other processes' entries, forgetting their removals), expire, evict. */
  prune(): PruneResult {
    this.rescan();
    const beforeEntries = this.index.size;
    const beforeBytes = this.total;
    this.expire();
    this.evict(undefined);
    this.lastSweep = Date.now();
    return {
      removed: beforeEntries - this.index.size,
      bytesFreed: beforeBytes - this.total,
      remainingEntries: this.index.size,
      remainingBytes: this.total,
    };
  }

  private sweep(): void {
    this.rescan();
    this.expire();
    this.evict(undefined);
    this.lastSweep = Date.now();
  }

  private rescan(): void {
    this.index = new Map();
    this.total = 0;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    const now = Date.now();
    for (const name of names) {
      if (name.endsWith(".tmp")) {
        this.removeStaleTemp(join(this.dir, name), now);
        continue;
      }
      const key = this.keyOf(name);
      if (key === undefined) continue;
      try {
        const st = lstatSync(join(this.dir, name));
        if (st.isFile()) this.adopt(key, st.size, st.mtimeMs);
      } catch {
        // removed by another process between readdir and stat
      }
    }
  }

  /** The key an entry file is named for, or undefined for any other file. */
  private keyOf(name: string): string | undefined {
    for (const ext of [this.extensions.text, this.extensions.json]) {
      if (!name.endsWith(ext)) continue;
      const key = name.slice(0, -ext.length);
      if (isValidKey(key)) return key;
    }
    return undefined;
  }

  /** A writer killed between write and rename leaves a temp file; another process may still be mid-write, so only old ones go. */
  private removeStaleTemp(path: string, now: number): void {
    try {
      if (now - statSync(path).mtimeMs > STALE_TEMP_MS) unlinkSync(path);
    } catch {
      // renamed or removed meanwhile
    }
  }

  private expire(): void {
    if (this.ttlMs <= 0) return;
    const cutoff = Date.now() - this.ttlMs;
    for (const [key, entry] of this.index) if (entry.atime < cutoff) this.remove(key);
  }

  /** Least recently accessed first, never `keep` (the entry just written). */
  private evict(keep: string | undefined): void {
    if (this.maxBytes <= 0 || this.total <= this.maxBytes) return;
    // Entries put or read in the last few minutes stay even over the cap: they are what the prompt
    // being built names ("recoverable via recall"), and one compact of a long history archives them
    // all in one pass. Every pass puts its keys again, which keeps them recent while they are used.
    const recent = Date.now() - KEEP_RECENT_MS;
    const byAge = [...this.index].sort((a, b) => a[1].atime - b[1].atime);
    for (const [key, entry] of byAge) {
      if (this.total <= this.maxBytes || entry.atime >= recent) break;
      if (key !== keep) this.remove(key);
    }
  }

  private remove(key: string): void {
    for (const json of [false, true]) {
      try {
        unlinkSync(this.pathFor(key, json));
      } catch {
        // already gone, or stored in the other encoding
      }
    }
    this.forget(key);
  }

  private forget(key: string): void {
    const entry = this.index.get(key);
    if (!entry) return;
    this.total -= entry.bytes;
    this.index.delete(key);
  }

  private adopt(key: string, bytes: number, atime: number): void {
    this.forget(key);
    this.index.set(key, { bytes, atime });
    this.total += bytes;
  }

  /** Refreshes a regular file's time; anything else (absent, a symlink, a FIFO) is reported as not there. */
  private touch(path: string, now: number): boolean {
    try {
      if (!lstatSync(path).isFile()) return false;
      const t = new Date(now);
      utimesSync(path, t, t);
      return true;
    } catch {
      return false;
    }
  }
}
