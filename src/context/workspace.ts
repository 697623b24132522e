// The session workspace: `<root>/<sessionId>/` with `spill/` (capture overflow), `results/` (budget
// overflow, one `<key>.txt` per saved text) and `archive/` (the content-addressed store). It is the
// only place the model may read saved output from, and every read path (canRead, readText, get,
// readOnlyLookup) follows one rule (contained-read.ts): `..` and symlinks are resolved first and
// anything resolving outside the workspace is refused. Upstream's spill directory sat outside the
// read allowlist, which made every "saved to …" marker a dead end. `archive/` and `results/` are both
// bounded by the archive limits (size cap, TTL, entries used in the last minutes kept), each on its
// own; `results/` grew without bound before, one file per cut result for the whole session.
import { mkdirSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { basename, join, resolve } from "node:path";
import type { ArchiveStore, KeyLookup } from "./archive-store.js";
import { decodeFromDisk, isValidKey } from "./archive-key.js";
import { contextConfigFromEnv } from "./config.js";
import { containedPath, readContained } from "./contained-read.js";
import { DiskArchive, verifyEntry } from "./disk-archive.js";
import { WorkspaceError } from "./errors.js";
import { RESULT_FILE_EXTENSIONS, resultFilePath } from "./save-full-text.js";
import { DEFAULT_ROOT, isSessionId, sessionsDir } from "../store/index.js";

export interface WorkspaceOptions {
  /** Directory holding session directories; default `.spool/sessions` under the current directory. */
  readonly root?: string;
  /** Default: a random UUID (a fresh session). Pass an existing id to resume. */
  readonly sessionId?: string;
  /** The session directory itself (instead of root + sessionId). */
  readonly dir?: string;
  /** Keep the directory on cleanup. Default: SPOOL_KEEP_WORKSPACE=true (any case). */
  readonly keep?: boolean;
  /** Archive limits; default from the environment (SPOOL_ARCHIVE_MAX_MB, SPOOL_ARCHIVE_TTL) or 256 MB / 7 days. */
  readonly archiveMaxBytes?: number;
  readonly archiveTtlMs?: number;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface Workspace extends KeyLookup {
  readonly dir: string;
  readonly sessionId: string;
  readonly spillDir: string;
  readonly resultsDir: string;
  readonly archiveDir: string;
  readonly archive: ArchiveStore;
  /** The budget's result files in `resultsDir`, under the same limits as the archive. */
  readonly results: DiskArchive;
  readonly keep: boolean;
  /** True only for paths inside the workspace after resolving `..` and symlinks. */
  canRead(path: string): boolean;
  /** The resolved path to open for `path`, or undefined when it resolves outside the workspace. */
  resolveReadable(path: string): string | undefined;
  /** Reads a file inside the workspace; throws WorkspaceError for anything outside it. */
  readText(path: string): string;
  /** Archive first, then the budget's result files — every key a stub mentions resolves here. */
  get(key: string): string | undefined;
  /** Removes the directory unless kept. Safe to call more than once. */
  cleanup(): void;
}

export function createWorkspace(options: WorkspaceOptions = {}): Workspace {
  const env = options.env ?? process.env;
  let dir: string;
  let sessionId: string;
  if (options.dir !== undefined) {
    dir = resolve(options.dir);
    sessionId = basename(dir);
  } else {
    sessionId = options.sessionId ?? randomUUID();
    if (!isSessionId(sessionId)) {
      throw new WorkspaceError(
        "SPOOL_WORKSPACE_SESSION_ID",
        `invalid session id ${JSON.stringify(sessionId)}: use letters, digits, ".", "_" and "-" (no path separators, at most 128 chars).`,
      );
    }
    dir = resolve(options.root ?? sessionsDir(DEFAULT_ROOT), sessionId);
  }
  const keep = options.keep ?? (env["SPOOL_KEEP_WORKSPACE"] ?? "").toLowerCase() === "true";
  const spillDir = join(dir, "spill");
  const resultsDir = join(dir, "results");
  const archiveDir = join(dir, "archive");
  try {
    for (const d of [dir, spillDir, resultsDir, archiveDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new WorkspaceError(
      "SPOOL_WORKSPACE_CREATE",
      `cannot create the session workspace ${dir}: ${(err as Error).message}. Choose a writable root (--workspace / root option).`,
    );
  }
  const fromEnv = options.archiveMaxBytes === undefined || options.archiveTtlMs === undefined ? contextConfigFromEnv(env) : undefined;
  const limits = {
    root: dir,
    maxBytes: options.archiveMaxBytes ?? fromEnv!.archiveMaxBytes,
    ttlMs: options.archiveTtlMs ?? fromEnv!.archiveTtlMs,
  };
  const archive = new DiskArchive({ dir: archiveDir, ...limits });
  // A result too big for a quarter of the cap is still saved: refused, it would reach the model uncut.
  const results = new DiskArchive({ dir: resultsDir, extensions: RESULT_FILE_EXTENSIONS, oversized: "keep", ...limits });
  let cleaned = false;

  const canRead = (path: string): boolean => containedPath(dir, path) !== undefined;

  return {
    dir,
    sessionId,
    spillDir,
    resultsDir,
    archiveDir,
    archive,
    results,
    keep,
    canRead,
    resolveReadable: (path) => containedPath(dir, path),
    readText(path: string): string {
      const text = readContained(dir, path);
      if (text === undefined) throw new WorkspaceError("SPOOL_WORKSPACE_NOT_FOUND", `cannot read ${path}: no such file in the session workspace ${dir}.`);
      return text;
    },
    get(key: string): string | undefined {
      if (!isValidKey(key)) return undefined;
      return archive.get(key) ?? results.get(key);
    },
    cleanup(): void {
      if (cleaned) return;
      cleaned = true;
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Reads keys from an existing session directory without creating, sweeping or touching anything —
 * for readers such as `spool recall` that must not change a session they only look at.
 */
export function readOnlyLookup(workspaceDir: string): KeyLookup {
  // Absolute from here on: a relative file path is resolved against the directory it is checked in.
  const dir = resolve(workspaceDir);
  return {
    get(key: string): string | undefined {
      if (!isValidKey(key)) return undefined;
      for (const json of [false, true]) {
        const text = readContained(dir, join(dir, "archive", json ? `${key}.ccrj` : `${key}.ccr`));
        if (text === undefined) continue;
        const content = decodeOrUndefined(text, json);
        if (content !== undefined) verifyEntry(key, content);
        return content;
      }
      return readResult(dir, key);
    },
  };
}

/** A text the budget saved under `results/`, by the same containment rule and the same check as an archive entry. */
function readResult(dir: string, key: string): string | undefined {
  for (const json of [false, true]) {
    const text = readContained(dir, resultFilePath(join(dir, "results"), key, json));
    if (text === undefined) continue;
    const content = decodeOrUndefined(text, json);
    if (content !== undefined) verifyEntry(key, content);
    return content;
  }
  return undefined;
}

function decodeOrUndefined(text: string, json: boolean): string | undefined {
  try {
    return decodeFromDisk(text, json);
  } catch {
    return undefined;
  }
}
