// Whether a directory-valued setting can be a directory, in one sentence when it cannot: the path, a
// directory above it, or the directory used under it (DIR/sessions for a spool root) is a file.
// Shared by the CLI's directory options (--root, --workspace, --cwd) and createSpool's `root`, so both
// refuse the same paths with the same words. A path that does not exist yet passes: it is created when
// written, and a reader finds nothing there.
import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** The nearest existing part of `path` (itself, or a directory above it) when that is not a directory. */
function notADirectory(path: string): string | undefined {
  for (let at = resolve(path); ; ) {
    try {
      return statSync(at).isDirectory() ? undefined : at;
    } catch (err) {
      // EACCES and the like: the caller says it, with its own words, where it reads or writes there.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return undefined;
    }
    const up = dirname(at);
    if (up === at) return undefined;
    at = up;
  }
}

/**
 * What is wrong with `value` (the setting `name`) as a directory, or undefined; `uses`: the directory
 * worked in under it (DIR/sessions for a root), which must not be a file either. The sentence starts
 * with the value, for the caller to put after the setting's name.
 */
export function directoryProblem(value: string, name: string, uses = value): string | undefined {
  const blocker = notADirectory(uses);
  if (blocker === undefined) return undefined;
  const shown = JSON.stringify(value);
  const given = resolve(value);
  if (blocker === given) return `${shown} is not a directory; pass a directory`;
  if (blocker.startsWith(given)) return `${JSON.stringify(blocker)} is not a directory, and ${name} needs it to be one; move it aside, or pass another ${name}`;
  return `${shown} is under ${JSON.stringify(blocker)}, which is not a directory; pass a directory`;
}
