// A session's log or database must be a regular file. A directory in its place failed every reader
// with a bare "EISDIR: illegal operation on a directory, read", and a FIFO blocked `spool sessions`
// for ever in open(); so the path is looked at before anything opens it. A missing file throws ENOENT
// as before (each caller says what that means).
import { statSync } from "node:fs";
import { CorruptSessionError } from "./errors.js";

/** `what`: how the message names the file ("the log", "the sidecar", "the database"). */
export function checkRegularFile(path: string, what: string): void {
  const st = statSync(path);
  if (st.isFile()) return;
  const kind = st.isDirectory() ? "a directory" : st.isFIFO() ? "a FIFO (named pipe)" : st.isSocket() ? "a socket" : "a device";
  throw new CorruptSessionError(path, 0, `${what} is ${kind}, not a regular file`);
}
