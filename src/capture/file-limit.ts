// What to do when the process ran out of file descriptors (EMFILE) or the system did (ENFILE): said
// in place of advice that does not fit. Measured over `spool mcp` under `ulimit -n 256` with 400 bash
// calls at once: 286 could not spawn and were told "Check that the shell exists and is executable",
// and 311 could not open their durable record; each call failed on its own, nothing leaked.
import { readFileSync } from "node:fs";

let knownLimit: number | undefined;

/**
 * The soft limit on open files of this process (Linux: /proc/self/limits), or undefined. Read when it
 * is needed, which is when no file may be opened: kept once read (spool never changes it).
 */
function openFilesLimit(): number | undefined {
  if (knownLimit !== undefined) return knownLimit;
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (line) knownLimit = Number(line[1]);
  } catch {
    // out of descriptors for this read too, or not Linux: said without the number
  }
  return knownLimit;
}

/** A sentence for an error that is EMFILE or ENFILE, else undefined. */
export function fileLimitAdvice(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EMFILE") {
    const limit = openFilesLimit();
    return (
      `spool has as many files open as it may${limit !== undefined ? ` (${limit}, ulimit -n)` : " (ulimit -n)"}, each running command holding a few: ` +
      "run fewer commands at once, or raise the limit where spool is started"
    );
  }
  if (code === "ENFILE") return "the system has as many files open as it may (fs.file-max): run fewer commands at once, or end what holds them";
  return undefined;
}
