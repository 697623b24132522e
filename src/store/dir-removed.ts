// A session directory deleted while its session runs (a model's `rm -rf .spool`, a user cleaning up):
// the writers that find it gone recreate what they need and republish what they hold (the JSONL log
// from its open descriptor, the archive entries as the next prepare pass puts them again), and the
// user is told once per directory, through process warnings — the one channel every host already
// shows or can listen to (`process.on("warning")`). What was only on disk before (older archive
// entries, spill files) is gone, and the warning says so.
import { resolve } from "node:path";
import { SpoolError } from "../errors/index.js";

export class SessionDirRemovedError extends SpoolError {
  constructor(readonly dir: string) {
    super(
      "SPOOL_SESSION_DIR_REMOVED",
      `the session directory ${dir} was deleted while the session was running; spool recreated it and goes on recording there, but archived texts and spill files written before the deletion are gone — remove .spool only after the run has ended.`,
    );
  }
}

const told = new Set<string>();

/** Warns once per directory (process lifetime) that `dir` was deleted under a running session and recreated. */
export function warnSessionDirRemoved(dir: string): void {
  const at = resolve(dir);
  if (told.has(at)) return;
  told.add(at);
  process.emitWarning(new SessionDirRemovedError(at));
}
