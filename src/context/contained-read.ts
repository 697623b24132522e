// The one rule every workspace read path follows (recall, Workspace.get/readText/canRead,
// readOnlyLookup, the archive): a path is resolved — `..` and every symlink — and read only when the
// result lies inside the workspace and is a regular file. The file is then opened by its resolved
// path with O_NOFOLLOW | O_NONBLOCK and checked with fstat, so a link swapped in after the check or a
// FIFO planted under an archive name is refused instead of followed or blocked on.
import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { WorkspaceError } from "./errors.js";

/** The resolved path when `path` (relative to `root`, or absolute) resolves inside `root`; else undefined. */
export function containedPath(root: string, path: string): string | undefined {
  const realRoot = resolveReal(resolve(root));
  const real = resolveReal(resolve(root, path));
  const rel = relative(realRoot, real);
  const inside = rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  return inside ? real : undefined;
}

/**
 * The UTF-8 text of `path` when it resolves to a regular file inside `root`; undefined when nothing
 * is there. Throws WorkspaceError (SPOOL_WORKSPACE_OUTSIDE) for anything resolving outside `root`
 * and (SPOOL_WORKSPACE_NOT_FILE) for what is not a regular file.
 */
export function readContained(root: string, path: string): string | undefined {
  const real = containedPath(root, path);
  if (real === undefined) throw outside(root, path);
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    // A symlink put in place between resolving and opening.
    if (code === "ELOOP") throw outside(root, path);
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) {
      throw new WorkspaceError(
        "SPOOL_WORKSPACE_NOT_FILE",
        `refusing to read ${path}: it is not a regular file. Only saved output files in the session workspace can be read.`,
      );
    }
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

function outside(root: string, path: string): WorkspaceError {
  return new WorkspaceError(
    "SPOOL_WORKSPACE_OUTSIDE",
    `refusing to read ${path}: it resolves outside the session workspace ${root} (through .. or a symlink). Only saved output inside the workspace can be read.`,
  );
}

/** realpath of the longest existing prefix, with the rest appended — a path need not exist to be judged. */
export function resolveReal(path: string): string {
  let head = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...rest.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      rest.push(basename(head));
      head = parent;
    }
  }
}
