// The session layout, owned here and nowhere else: the default spool root, where sessions live under
// it, which ids are valid, where a main log's sidecars go, and how the directories are created.
//   <root>/sessions/<id>/session.jsonl            main log (or session.sqlite)
//   <root>/sessions/<id>/session.jsonl.scopes/    sidecars, one per open ephemeral scope
//   <root>/sessions/<id>/{spill,results,archive}/ the workspace's files
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { SessionDirError, SessionIdError } from "./errors.js";

export const DEFAULT_ROOT = ".spool";

/** 1–128 characters of letters, digits, ".", "_" and "-", not starting with "." or "-". */
export const SESSION_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

export const isSessionId = (id: unknown): id is string => typeof id === "string" && SESSION_ID.test(id);

export function checkSessionId(id: unknown): string {
  if (!isSessionId(id)) throw new SessionIdError(id);
  return id;
}

export const sessionsDir = (root: string): string => resolve(root, "sessions");

export const sidecarDir = (mainPath: string): string => `${mainPath}.scopes`;

/**
 * Creates `dir` and its missing parents one level at a time (private: 0700). A recursive mkdir under
 * a pseudo filesystem such as /proc never returns on some Node versions; creating level by level
 * fails at once with the real reason instead.
 */
export function ensureDir(dir: string): void {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new SessionDirError(dir, (e as Error).message, { cause: e });
      missing.push(at);
      const up = dirname(at);
      if (up === at) break;
      at = up;
      continue;
    }
    if (!isDir) throw new SessionDirError(dir, `${at} is not a directory`);
    break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST")
        throw new SessionDirError(dir, (e as NodeJS.ErrnoException).code ?? (e as Error).message, { cause: e });
    }
  }
}

/** A new session id, sortable by start time to the millisecond and readable: `20261129-194012-123ab`. */
export function newSessionId(now = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  // Two random characters keep ids started within one millisecond apart.
  return `${stamp}-${p(now.getMilliseconds(), 3)}${Math.random().toString(36).slice(2, 4).padEnd(2, "0")}`;
}
