// The capture contract: limits in, bounded views and updates out. Sizes are UTF-8 bytes of the
// *cleaned* text and line counts; `drop` in a slide counts UTF-16 code units (what JS strings index).

export type Retain = "head" | "tail";

export interface CaptureLimits {
  /** Bytes of cleaned text the view may hold. Default 50 KiB. */
  readonly maxBytes: number;
  /** Lines the view may hold. Default 2000. */
  readonly maxLines: number;
  /** `tail` keeps a rolling window (builds, tests); `head` keeps the start and stops (reads, listings). */
  readonly retain: Retain;
  /** One line longer than this is cut with a marker. Default min(4 KiB, maxBytes). */
  readonly maxLineBytes: number;
}

/** Why the view does not show everything, in order of precedence. */
export type TruncatedBy = "binary" | "lines" | "bytes" | "line-length";

export interface Truncation {
  readonly truncated: boolean;
  readonly truncatedBy: TruncatedBy | null;
  /**
   * Over everything ever written, cleaned (ANSI removed, CR frames collapsed, long lines cut). Stray
   * control characters are removed only when the view is built, so they still count here.
   * A final unterminated line counts.
   */
  readonly totalLines: number;
  readonly totalBytes: number;
  /** What the view holds. */
  readonly outputLines: number;
  readonly outputBytes: number;
  readonly maxLines: number;
  readonly maxBytes: number;
  /** Lines that were longer than maxLineBytes and were cut. */
  readonly cutLines: number;
  /** The view's last line is only part of a line (a line bigger than the whole window). */
  readonly lastLinePartial: boolean;
  /** Exact cleaned size of that line, present only when lastLinePartial. */
  readonly lastLineBytes?: number;
}

export interface CaptureMetadata {
  readonly truncation: Truncation;
  /** Output looked binary (two NULs in a row, or mostly NULs and invalid UTF-8, in its first 4 KiB: binary.ts): no text is rendered. A lone NUL in text is shown as U+2400. */
  readonly binary: boolean;
  /** Raw bytes received from the process, before cleaning. */
  readonly rawBytes: number;
  /** Present once the limits were crossed and the raw output is being preserved. */
  readonly spillPath?: string;
}

export interface CaptureView extends CaptureMetadata {
  readonly text: string;
}

export type CaptureUpdate =
  | { readonly kind: "replace"; readonly view: CaptureView }
  | { readonly kind: "append"; readonly text: string; readonly metadata: CaptureMetadata }
  | { readonly kind: "slide"; readonly drop: number; readonly text: string; readonly metadata: CaptureMetadata }
  | { readonly kind: "metadata"; readonly metadata: CaptureMetadata };

export interface SpillOptions {
  /** The spill file is `<dir>/<subdir>/<id>.log`; `dir` is usually the session directory. */
  readonly dir: string;
  /** Default "spill"; "" puts the files directly in `dir`. */
  readonly subdir?: string;
  /** File stem, e.g. the tool call id. Default: a random id. Never overwrites: a taken name gets `-2`, `-3`, … */
  readonly id?: string;
  /**
   * true: the command writes its stdout straight into the spill file, which spool follows, and its
   * stderr goes through a pipe that spool appends to the same file (Linux, no file-size limit, 64 MiB
   * free; else as with false): `echo x > /dev/stderr` works, and stderr's lines interleave with
   * stdout's in the order they reach the file, a little after they were written. The file is removed
   * at the end if the limits were never crossed. false: the output comes through pipes and spool writes
   * the spill once the limits are crossed. Default: true, unless spool runs as root — root can reopen
   * /dev/stdout for writing (`echo x > /dev/stdout`), which empties a file and could lose output not
   * yet read; on the pipes (real pipes on Linux) that open works and appends, and nothing is lost. Not
   * root, that reopen fails on the file (EACCES): `>&1`, or false, avoids it.
   */
  readonly direct?: boolean;
  /** With the pipes: bytes buffered for the disk before the process's pipes are paused. Default 1 MiB. */
  readonly highWaterMark?: number;
  /**
   * The raw output a command may print once it spills. Past it the command is stopped (its process
   * group killed) and exec fails with a SpillLimitError; the spill keeps what was printed up to then (a
   * little past the limit: what had already been read, or written by the command itself). Default: no
   * limit.
   */
  readonly maxBytes?: number;
  /**
   * Free space the spill must leave on its file system. Once a command has printed 16 MiB, the free
   * space is checked every 16 MiB; below this, the command is stopped as with `maxBytes`, before a
   * runaway command (`yes`, a log in a loop) fills the disk. Default 256 MiB; 0 turns the check off.
   * Free space is what every user may still take (`df`'s Avail, statfs `bavail`), also when spool runs
   * as root: the blocks reserved for root are not counted, as the programs this floor protects cannot
   * write into them.
   */
  readonly minFreeBytes?: number;
}

export interface ExecOptions {
  readonly cwd?: string;
  /** Inherited environment plus these. NO_COLOR=1 and FORCE_COLOR=0 are set unless overridden here. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Default `/bin/bash` when present, else `/bin/sh`; run as `shell -c command`. */
  readonly shell?: string;
  /** Time between SIGTERM and SIGKILL to the process group. Default 1000 ms. */
  readonly killGraceMs?: number;
  readonly capture?: {
    readonly limits?: Partial<CaptureLimits>;
    readonly spill?: SpillOptions | false;
  };
  /**
   * Run under a pseudo-terminal: stdout and stderr are one stream, the program sees a terminal of
   * cols × rows (default 120 × 40; TERM=xterm-256color, and NO_COLOR is not set) and its input is
   * the terminal's keyboard.
   */
  readonly pty?: boolean;
  readonly cols?: number;
  readonly rows?: number;
  /**
   * Without a pty: "pipe" keeps the command's stdin open for RunningCommand.write; "inherit" gives it
   * this process's own stdin (`cat file | spool run -- grep x`). Default "ignore": closed, so nothing
   * waits on a prompt.
   */
  readonly stdin?: "ignore" | "pipe" | "inherit";
  /** Paced by the adaptive publisher. Throwing kills the process group and fails exec. */
  readonly onUpdate?: (update: CaptureUpdate) => void;
  /** Publisher pacing; defaults 100 ms and 100 KiB/s. */
  readonly minIntervalMs?: number;
  readonly targetBytesPerSecond?: number;
}

export interface ExecResult extends CaptureView {
  /** The exit code, or 128 + signal number when the process was killed by a signal. */
  readonly exitCode: number;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  /** The signal aborted it; when it was aborted before the start nothing was spawned (exit 143, signal null). */
  readonly aborted: boolean;
  readonly durationMs: number;
  /**
   * Times the command was held back: its pipes paused because the spill file was behind (disk slower
   * than the process), or, writing the spill itself, its group stopped while spool caught up.
   */
  readonly spillPauses: number;
  /**
   * The command exited while processes it started in its group still ran (`server &`): they were
   * ended after the exit grace (SIGTERM, then SIGKILL). Absent otherwise.
   */
  readonly endedLeftovers?: true;
  /**
   * A process outside the command's group (`setsid`, a daemon) still wrote to its pipes a second after
   * the group was gone: spool stopped reading there, and that process's next write to them fails
   * (SIGPIPE), as after `| head`. On the file path (the command writes its spill itself) the file is
   * read to the size it has when the group is gone; a process still writing it a second after that is
   * ended (SIGPIPE, then SIGKILL), since its writes to a file would never fail. Absent otherwise.
   */
  readonly outsideWriter?: true;
}
