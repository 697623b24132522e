// Files the model may read back are written whole or not at all: a temp file renamed into place, so a
// crash or a concurrent reader never sees half an entry.
import { randomBytes } from "node:crypto";
import { renameSync, unlinkSync, writeFileSync } from "node:fs";

/** Write `data` to `path` atomically (mode 0600); on failure the temp file is removed and the error rethrown. */
export function writeFileAtomic(path: string, data: string): void {
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(tmp, data, { encoding: "utf8", mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // the temp file may never have been created
    }
    throw err;
  }
}
