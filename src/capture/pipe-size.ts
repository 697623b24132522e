// Grows a busy output pipe from the kernel's 64 KiB to 1 MiB.
//
// A command on the pipe path (root with a spill, no spill, `spill.direct: false`) writes into a pipe
// spool reads. At 64 KiB a fast writer fills it between two of spool's reads, blocks, and both
// sides take turns: every read is at most 64 KiB, whatever the read buffer. At 1 MiB the writer runs
// on while spool works and each read takes up to READ_BUFFER_BYTES. Measured on 2 shared cores, root,
// medians of 5 runs, the two builds side by side: 1 GiB of plain lines 2.45 → 1.55 s (1.51 → 1.20
// ms/MiB of spool's CPU; 0.51× → 0.80× of `GEN > file`), 100 MiB of coloured lines 0.51× → 0.67×
// (2.59 → 2.33 ms/MiB).
//
// Node has no fcntl(2), so F_SETPIPE_SZ is set by a process that has it: perl (perl-base is part of
// every Debian and Ubuntu system) gets the read end as its descriptor 3, fdopens it ("<&=": no read, no
// flag changed) and sets the size on it; the pipe, not the descriptor, carries the size, so spool's
// own end sees it. Trap: not as its stdin. libuv makes a child's inherited descriptors 0-2 blocking,
// and O_NONBLOCK belongs to the open file description spool reads too: a read that filled the buffer
// was then followed by one that held the event loop until the command wrote again (2 MiB, then 256 KiB,
// then `sleep 20`: a 3 s timeoutMs fired after 21 s). Only pipes that have carried BUSY_BYTES are
// grown, so a command with little output never pays for a process. Where perl is missing, or the
// kernel refuses (an unprivileged user over `pipe-user-pages-soft`), the pipe stays as it was and
// nothing is reported: this is speed, not behaviour.
import { spawn } from "node:child_process";

/** Output a pipe carries before it is grown: a command past it is a sustained writer. */
export const BUSY_BYTES = 1024 * 1024;
/** The kernel's default `/proc/sys/fs/pipe-max-size`: the most an unprivileged process may ask. */
const PIPE_BYTES = 1024 * 1024;
/** F_SETPIPE_SZ (F_LINUX_SPECIFIC_BASE + 7). */
const F_SETPIPE_SZ = 1031;

let usable = process.platform === "linux";

/** Asks for `fd`'s pipe to hold PIPE_BYTES, in the background; never throws, never keeps the loop alive. */
export function growPipe(fd: number): void {
  if (!usable) return;
  try {
    const setter = spawn("perl", ["-e", `open(my $p, "<&=", 3) or exit 1; fcntl($p, ${F_SETPIPE_SZ}, ${PIPE_BYTES})`], {
      stdio: ["ignore", "ignore", "ignore", fd],
      // PATH alone: the user's PERL5OPT or PERL5LIB is not for this one-liner (`-d` starts the
      // debugger, which talks to the terminal while the pipe's read end is held).
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    setter.on("error", (e: NodeJS.ErrnoException) => {
      // No perl here: do not try again in this process. Anything else (EAGAIN: too many processes
      // right now) costs this pipe its growth only.
      if (e.code === "ENOENT") usable = false;
    });
    setter.unref();
  } catch {
    // Out of descriptors or processes right now: the pipe keeps its size.
  }
}
