// The one check of a directory-valued option (--root, --workspace, --cwd), run by command.ts for every
// command before it starts: an empty value is refused (`run --root ''` recorded into ./sessions), and
// so is a path that is not a directory or lies under a file — the same line from every command
// (`sessions --root /etc/passwd` said "No sessions" where `run` refused). A path that does not exist
// yet passes: `run` creates it, a reader finds nothing there.
import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "./usage-error.js";

/** The nearest existing part of `path` (itself, or a directory above it) when that is not a directory. */
function notADirectory(path: string): string | undefined {
  for (let at = resolve(path); ; ) {
    try {
      return statSync(at).isDirectory() ? undefined : at;
    } catch (err) {
      // EACCES and the like: the command says it, with its own words, where it reads or writes there.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return undefined;
    }
    const up = dirname(at);
    if (up === at) return undefined;
    at = up;
  }
}

/**
 * `value` of `flag` as a directory; `uses`: the directory the command works in under it (DIR/sessions
 * for --root), which must not be a file either.
 */
export function checkDirectoryOption(value: string, flag: string, uses = value): void {
  if (value === "") throw new UsageError(`${flag} is empty; pass a directory, or leave ${flag} out for its default`);
  const shown = JSON.stringify(value);
  const blocker = notADirectory(uses);
  if (blocker === undefined) return;
  const given = resolve(value);
  if (blocker === given) throw new UsageError(`${flag}: ${shown} is not a directory; pass a directory`);
  if (blocker.startsWith(given))
    throw new UsageError(`${flag}: ${JSON.stringify(blocker)} is not a directory, and ${flag} needs it to be one; move it aside, or pass another ${flag}`);
  throw new UsageError(`${flag}: ${shown} is under ${JSON.stringify(blocker)}, which is not a directory; pass a directory`);
}
