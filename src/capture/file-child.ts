// A command that writes its stdout straight into its spill file (O_APPEND), while spool follows the
// file (file-tail.ts) into the same capture as the pipes feed. Its stderr is a real pipe that spool
// appends to the same file (append-pipe.ts), so the file stays the one source of the capture.
//
// Why: on a pipe the command blocks whenever the ~208 KiB socket buffer is full and spool is not
// running; on two cores shared with other work that capped 1 GiB at ~0.68× the speed of `GEN > file`
// (and `GEN | cat > file` itself at 0.78–0.85×). Writing to a file the command never waits for spool.
// The spill is byte-identical by construction and nothing is written twice.
//
// Why stderr is a pipe: the file is read-only while the command runs, so that a reopen of it for
// writing (which truncates) fails rather than empty the spill; and `echo error > /dev/stderr`, a
// common shell idiom, is such a reopen: on the file it failed with "Permission denied" (and ended a
// `set -e` script). A pipe reopened through /proc is the same pipe, and the write appends.
//
// What changes for the command: its stdout is a regular file (no SIGPIPE, a file-size limit it sets
// itself applies to it; C stdio buffers it fully, as on any file); its stderr is a pipe, and a reopen
// of /dev/stderr works. spool copies stderr's bytes into the file a little after they were written,
// so stdout and stderr interleave in the order they reach the file, not the exact order of the
// writes (`2>&1` puts both on the file, in the true order). A reopen of /dev/stdout for writing still
// fails with EACCES (`>&1`, or `spill.direct: false`, avoid it); as root it succeeds and would empty
// the file (file-tail.ts). Where no real pipe can be had, stderr is the file too, as stdout is.
import { Buffer } from "node:buffer";
import { chmodSync, closeSync, fchmodSync, openSync, readFileSync, statfsSync } from "node:fs";
import { appendPipe } from "./append-pipe.js";
import { READ_BUFFER_BYTES, closeAll, inputWriter, pipeInput, type Child } from "./child.js";
import { FileTail } from "./file-tail.js";
import { spawnInGroup } from "./process-group.js";
import { realPipe } from "./real-pipe.js";
import { createSpillFile, discardSpillFile, type SpillFile } from "./spill.js";
import type { SpillOptions } from "./types.js";

let available: boolean | undefined;

/**
 * Linux only (where inotify and /proc are, and where it was measured), and only with no file-size
 * limit: the command inherits the limit, and would hit it on its output where a pipe never does.
 */
function directSpillAvailable(): boolean {
  if (available === undefined) {
    available = false;
    if (process.platform === "linux") {
      try {
        const line = readFileSync("/proc/self/limits", "utf8")
          .split("\n")
          .find((l) => l.startsWith("Max file size"));
        available = line !== undefined && line.slice("Max file size".length).trim().startsWith("unlimited");
      } catch {
        available = false;
      }
    }
  }
  return available;
}

/**
 * Below this much free space the pipes take the run: a command's writes to a full disk fail where
 * spool cannot see them, and a small output (no spill needed) would be lost with them.
 */
const MIN_FREE_BYTES = 64 * 1024 * 1024;
/**
 * What counts as a full disk at the end of a run: a margin over zero, as the blocks statfs counts free
 * and the ones a write can still get are not quite the same (delayed allocation, metadata).
 */
export const FULL_BYTES = 1024 * 1024;

/**
 * Free space every user may still take on the file system that holds `path` (statfs `bavail`, `df`'s
 * Avail; undefined when unknown): what spill.minFreeBytes keeps. Never root's reserved blocks, even
 * when spool runs as root: the floor is there for everything else on the disk — the user's other
 * programs, a database running as its own user — and none of them can write into the reserve. Counted
 * with it, a root spool stopped only once the others had long been out of space (on this machine's
 * 252 GiB disk the reserve is ~150 GiB: bfree 212 GiB against bavail 62 GiB).
 */
export function freeBytes(path: string): number | undefined {
  try {
    const fs = statfsSync(path);
    return fs.bavail * fs.bsize;
  } catch {
    return undefined;
  }
}

/**
 * Whether the command's own writes to the file system that holds `path` are at most `bytes` from
 * failing (false when unknown): root's reach the reserved blocks too (`bfree`), so a root command
 * whose disk is full for everyone else has not lost a write yet.
 */
export function spillSpaceLow(path: string, bytes: number): boolean {
  try {
    const fs = statfsSync(path);
    const blocks = process.getuid?.() === 0 ? fs.bfree : fs.bavail;
    return blocks * fs.bsize <= bytes;
  } catch {
    return false;
  }
}

/**
 * The spill file opened for the command (fd: its stdout, and spool's own appends of its stderr) and
 * for spool's reader (readFd).
 */
export interface DirectSpill extends SpillFile {
  readonly readFd: number;
}

/** undefined when the command cannot write its spill itself: the pipes and a SpillWriter take over. */
export function openDirectSpill(spill: SpillOptions): DirectSpill | undefined {
  if (!directSpillAvailable()) return undefined;
  let file: SpillFile;
  try {
    file = createSpillFile(spill);
  } catch {
    // The pipe path creates its spill only when the limits are crossed, and reports it failing then.
    return undefined;
  }
  try {
    if (spillSpaceLow(file.path, MIN_FREE_BYTES)) throw new Error("low on space");
    const readFd = openSync(file.path, "r");
    // Read-only while the command runs: the descriptors open already keep writing, and a reopen of
    // /dev/stdout for writing (which would empty the file) fails with EACCES — unless the command
    // runs as root (see file-tail.ts). /dev/stderr is a pipe (fileChild), where the reopen works.
    fchmodSync(file.fd, 0o400);
    return { ...file, readFd };
  } catch {
    closeSync(file.fd);
    discardSpillFile(file);
    return undefined;
  }
}

/** The run is over: the file kept as the spill gets the pipes' spill mode back (0600). */
export function keepDirectSpill(spill: DirectSpill): void {
  try {
    chmodSync(spill.path, 0o600);
  } catch {
    // Removed under us: the view already names it; nothing to restore.
  }
}

/**
 * Spawns the command with the spill file as its stdout and a real pipe as its stderr, copied into
 * the file through the same descriptor (the file's open description is shared: O_APPEND, the
 * command's and spool's appends never overwrite one another). Without a real pipe the file is its
 * stderr too, and spool's copy of the descriptor is closed after the spawn. spool reads the file
 * through `readFd`.
 */
/** `stdin` as for pipeChild (child.ts). */
export function fileChild(shell: string, command: string, cwd: string, env: NodeJS.ProcessEnv, stdin: boolean | number, spill: DirectSpill): Child {
  const dataListeners: ((chunk: Buffer) => void)[] = [];
  const closed: (() => void)[] = [];
  const backlog: ((behind: boolean) => void)[] = [];
  const truncated: (() => void)[] = [];
  const failed: ((error: Error) => void)[] = [];
  // stdin on a real pipe, as on the pipe path (child.ts), so `cat /dev/stdin` works here too.
  const inputPipe = stdin === true ? realPipe() : undefined;
  const errorPipe = realPipe();
  let child: ReturnType<typeof spawnInGroup>;
  try {
    child = spawnInGroup(shell, command, cwd, env, inputPipe?.read ?? stdin, spill.fd, errorPipe?.write ?? spill.fd);
  } catch (e) {
    closeAll(spill.readFd, inputPipe?.write, errorPipe?.read, errorPipe && spill.fd);
    discardSpillFile(spill);
    throw e;
  } finally {
    // The command's ends are its own now (spool keeping the pipe's would hold it open for ever).
    closeAll(errorPipe ? undefined : spill.fd, inputPipe?.read, errorPipe?.write);
  }
  const stderr = errorPipe
    ? appendPipe(errorPipe.read, spill.fd, (error) => {
        for (const l of failed) l(error);
      })
    : undefined;
  const tail = new FileTail(spill.path, spill.readFd, Buffer.allocUnsafe(READ_BUFFER_BYTES), {
    onChunk: (chunk) => {
      for (const l of dataListeners) l(chunk);
    },
    onBacklog: (behind) => {
      for (const l of backlog) l(behind);
    },
    onTruncated: () => {
      for (const l of truncated) l();
    },
  });
  const input = inputPipe ? pipeInput(child, inputPipe.write) : child.stdin;
  let closing = false;
  return {
    pid: child.pid,
    onData: (l) => void dataListeners.push(l),
    onOutputClosed: (l) => void closed.push(l),
    onExit: (l) => void child.on("exit", l),
    onSpawnError: (l) => void child.on("error", l),
    pause: () => tail.pause(),
    resume: () => tail.resume(),
    closeOutput: () => {
      if (closing) return;
      closing = true;
      input?.destroy();
      // stderr's last bytes are in the file before the tail reads it to its end.
      void (stderr?.finish() ?? Promise.resolve())
        .then(() => tail.finish())
        .then(() => {
          for (const l of closed) l();
        });
    },
    outputEndsWithGroup: true,
    onBacklog: (l) => void backlog.push(l),
    onTruncated: (l) => void truncated.push(l),
    onCopyFailed: (l) => void failed.push(l),
    readTo: () => tail.readTo,
    write: inputWriter(input),
  };
}
