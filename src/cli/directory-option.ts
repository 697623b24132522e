// The one check of a directory-valued option (--root, --workspace, --cwd), run by command.ts for every
// command before it starts: an empty value is refused (`run --root ''` recorded into ./sessions), and
// so is a path that is not a directory or lies under a file — the same line from every command
// (`sessions --root /etc/passwd` said "No sessions" where `run` refused). A path that does not exist
// yet passes: `run` creates it, a reader finds nothing there.
import { directoryProblem } from "../store/index.js";
import { UsageError } from "./usage-error.js";

/**
 * `value` of `flag` as a directory; `uses`: the directory the command works in under it (DIR/sessions
 * for --root), which must not be a file either.
 */
export function checkDirectoryOption(value: string, flag: string, uses = value): void {
  if (value === "") throw new UsageError(`${flag} is empty; pass a directory, or leave ${flag} out for its default`);
  const problem = directoryProblem(value, flag, uses);
  if (problem !== undefined) throw new UsageError(`${flag}: ${problem}`);
}
