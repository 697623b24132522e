// A file written whole or not at all, the one way spool does it (session and scope headers, archive
// entries, saved results, the CLI's code cache): a temp file beside the target, created exclusively
// with mode 0600, renamed into place, so a crash or a concurrent reader never sees half a file. With
// `durable` the file and then its directory are synced, so the rename itself survives a power loss:
// a session header needs that; an archive entry or a cache that can be written again does not.
// replaceFileForAppend is the same publication for a file that goes on being appended to (a sidecar
// rewritten compactly): the caller keeps the temp file's descriptor.
// The temp name is this process's id and a counter, not random bytes: node:crypto takes 5 ms to load,
// and the exclusive create turns a clash (a process with the same id on another host sharing the
// disk) into another name, never into two writers on one file.
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fullDiskAs } from "./errors.js";

let written = 0;
const MAX_NAME_CLASHES = 100;

export interface AtomicWriteOptions {
  /** Sync the file and its directory before returning (default false). */
  readonly durable?: boolean;
}

/** Syncs a directory, so the names created or renamed in it survive a power cut. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Creates the temp file, retrying on a name another process holds. */
function openTemp(path: string, flags = "wx"): { fd: number; tmp: string } {
  for (let clash = 0; ; clash++) {
    const tmp = `${path}.${process.pid.toString(36)}-${(written++).toString(36)}.tmp`;
    try {
      return { fd: openSync(tmp, flags, 0o600), tmp };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || clash >= MAX_NAME_CLASHES) throw err;
    }
  }
}

/** Writes `data` to `path` atomically; on failure the temp file is removed and the error rethrown (a full disk as StoreFullError). */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  try {
    writeAtomic(path, data, options);
  } catch (err) {
    throw fullDiskAs(err, path);
  }
}

function writeAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions): void {
  const { fd, tmp } = openTemp(path);
  try {
    try {
      writeFileSync(fd, data);
      if (options.durable === true) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already gone.
    }
    throw err;
  }
  if (options.durable === true) fsyncDir(dirname(path));
}

/**
 * Replaces `path` with `data` atomically and returns a descriptor that appends to the new file (a
 * sidecar rewritten compactly goes on being appended to). The descriptor is the temp file's, opened
 * before the rename: an open after it could fail and leave the caller appending to the file it
 * replaced, which nothing reads any more. The data is synced before the rename whatever the
 * durability, so the name never points at blocks a power cut could leave as zeros (a file that held
 * hours of records would open as corrupt). The directory is not synced: a caller that needs the
 * rename itself to survive a power cut calls fsyncDir once it holds the descriptor. On failure the
 * temp file is removed, `path` is untouched and the error is rethrown (a full disk as StoreFullError).
 */
export function replaceFileForAppend(path: string, data: string | Uint8Array): number {
  let fd = -1;
  try {
    const temp = openTemp(path, "ax");
    fd = temp.fd;
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
      renameSync(temp.tmp, path);
    } catch (err) {
      try {
        unlinkSync(temp.tmp);
      } catch {
        // Already gone.
      }
      throw err;
    }
    return fd;
  } catch (err) {
    if (fd >= 0) closeSync(fd);
    throw fullDiskAs(err, path);
  }
}
