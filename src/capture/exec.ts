// exec: run a shell command and own its output — one arrival-ordered bounded view of stdout+stderr
// (or of a pseudo-terminal), paced updates, a lossless spill once the limits are crossed (written by
// the command itself when it can: file-child.ts; else from the pipes), and a
// process group that is killed whole on timeout, abort or failure. `start` is the same run as a
// handle: the exact current view, input to the command, and a kill, for commands that keep running.
import { Buffer } from "node:buffer";
import { fstatSync, statSync } from "node:fs";
import { constants } from "node:os";
import { resolve as resolvePath } from "node:path";
import { isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { pipeChild, type Child } from "./child.js";
import { FULL_BYTES, fileChild, freeBytes, keepDirectSpill, openDirectSpill, spillSpaceLow, type DirectSpill } from "./file-child.js";
import { monotonicMs } from "./clock.js";
import { type PidWindow, fileWriters, pidWindow, stopFileWriters } from "./file-writers.js";
import { CallbackError, type CaptureError, InputClosedError, InvalidOptionsError, MissingCwdError, SpawnError, SpillError, SpillLimitError } from "./errors.js";
import { waitingForTerminalInput } from "./input-wait.js";
import { resolveLimits } from "./limits.js";
import { DEFAULT_COLS, DEFAULT_ROWS, OutputCapture } from "./output-capture.js";
import { ptyChild } from "./pty-child.js";
import { prepareRealPipes } from "./real-pipe.js";
import {
  exitCodeOf,
  groupRunning,
  guardAgainstOrphans,
  killWhenQuiet,
  resolveShell,
  sessionRunning,
  signalGroup,
  signalSession,
  terminateGroup,
  untilGone,
} from "./process-group.js";
import { AdaptivePublisher } from "./publisher.js";
import { SpillWriter, discardSpillFile, validateSpill } from "./spill.js";
import { isTimeoutAbort } from "./timeout-abort.js";
import type { CaptureUpdate, CaptureView, ExecOptions, ExecResult, SpillOptions } from "./types.js";
import { deriveUpdate, measureUpdate, metadataOf } from "./updates.js";

/**
 * After the process exits, pipes idle this long are closed (a backgrounded grandchild may hold them),
 * and so is a terminal, which spool itself holds open (pty-child.ts): a pty command whose last output
 * came within this long of its exit ends about this long after it (`echo hi`: median 110 ms over 25
 * runs), one that left nothing running and was quiet ends at once (`true`: 9 ms; 112 ms when the first
 * look waited for this timer, 210 ms when node-pty closed the terminal 200 ms after the exit).
 */
const EXIT_STDIO_GRACE_MS = 100;
const DEFAULT_KILL_GRACE_MS = 1000;
/**
 * After the command exits, what it left running in its process group (`sleep 300 &`) gets this long
 * to finish writing, then the group is ended like on a timeout; on a pty too, where its jobs survive
 * the shell's exit because it runs with SIGHUP ignored (pty-child.ts). A `setsid` daemon has left the
 * group on purpose and is not touched.
 */
const EXIT_GROUP_GRACE_MS = 500;
/**
 * Once the group is gone, a process that left it (`setsid server &`, a daemon) may still hold the
 * pipes and write to them: output is read for this much longer, then spool stops reading. Before,
 * such a writer kept the call open past its timeout (a loop echoing every 50 ms: over 6 minutes).
 */
const OUTSIDE_WRITER_MS = 1000;
const GROUP_POLL_MS = 25;
/** Free space the spill leaves by default (SpillOptions.minFreeBytes), and how often it is checked. */
const DEFAULT_MIN_FREE_BYTES = 256 * 1024 * 1024;
const ROOM_CHECK_BYTES = 16 * 1024 * 1024;

/** -1 when the file is gone. */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const MAX_TIMER_MS = 2 ** 31 - 1;
const CUT_MESSAGE =
  "the command truncated its own output file (it opened /dev/stdout or /dev/stderr for writing, which on a file empties it); use >&1 or >&2 instead, or run it with spill.direct: false";

function checkMs(name: string, v: number | undefined): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > MAX_TIMER_MS) {
    throw new InvalidOptionsError(`${name} must be a positive number of milliseconds up to ${MAX_TIMER_MS}, got ${v}`);
  }
}

function checkSize(name: string, v: number | undefined): void {
  if (v === undefined) return;
  if (!isWholeNumberIn(v, 2, 1000)) throw new InvalidOptionsError(`${name} must be ${wholeNumberRange(2, 1000)}, got ${v}`);
}

function buildEnv(overrides: ExecOptions["env"], pty: boolean): NodeJS.ProcessEnv {
  // Under a terminal the program is meant to behave as it would for a person, colour included.
  const env: NodeJS.ProcessEnv = pty ? { ...process.env, TERM: "xterm-256color" } : { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" };
  for (const [k, v] of Object.entries(overrides ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export interface RunningCommand {
  /** Undefined when the spawn failed (then `result` rejects with a SpawnError). */
  readonly pid: number | undefined;
  /** Settles when the command has exited and its output is read to the end. */
  readonly result: Promise<ExecResult>;
  /** The bounded view as of now (exact, not paced like onUpdate). */
  view(): CaptureView;
  /**
   * Writes to the command's input (with `pty`: keystrokes, so "\u0003" is Ctrl-C). `end`: then close
   * it, as at the end of a file (with `pty`: Ctrl-D at the start of a line); later writes throw.
   */
  write(input: string, options?: { readonly end?: boolean }): void;
  /** SIGTERM to the process group, SIGKILL after the grace period. */
  kill(): void;
  /** Called after every read of output and once when the command has finished; returns an unsubscribe. */
  onActivity(listener: () => void): () => void;
  /**
   * onUpdate from now on at most once per `ms` (what `minIntervalMs` set at the start): a command
   * nobody follows closely any more (a background process) can be paced down. view() stays exact.
   */
  setUpdateInterval(ms: number): void;
  /** With `pty`: a process of the command is asleep reading its terminal (a prompt). Linux only. */
  waitingForInput(): boolean;
}

/**
 * For a process about to run its first command: what every command's spawn needs and is made once per
 * process (Linux's real pipes, from a batch of FIFOs `mkfifo` makes) is started now, in the background,
 * so that command does not wait for it (`spool run` calls it as it starts). Optional; idempotent.
 */
export function prepareExec(): void {
  prepareRealPipes();
}

export async function exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
  return start(command, options).result;
}

/** Starts the command and returns at once; throws (synchronously) only for invalid options. */
export function start(command: string, options: ExecOptions = {}): RunningCommand {
  if (typeof command !== "string" || command.trim() === "") throw new InvalidOptionsError("command must be a non-empty string");
  const limits = resolveLimits(options.capture?.limits);
  const spill = options.capture?.spill || undefined;
  if (spill) validateSpill(spill);
  checkMs("timeoutMs", options.timeoutMs);
  checkMs("killGraceMs", options.killGraceMs);
  checkSize("cols", options.cols);
  checkSize("rows", options.rows);
  if (options.stdin !== undefined && options.stdin !== "ignore" && options.stdin !== "pipe" && options.stdin !== "inherit") {
    throw new InvalidOptionsError(`stdin must be "ignore", "pipe" or "inherit", got ${JSON.stringify(options.stdin)}`);
  }
  const cwd = resolvePath(options.cwd ?? process.cwd());
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new MissingCwdError(cwd);
  const shell = resolveShell(options.shell);
  const size = { cols: options.cols ?? DEFAULT_COLS, rows: options.rows ?? DEFAULT_ROWS };
  // With a spill the command writes its stdout straight into it (file-child.ts; its stderr is a pipe
  // spool appends there), unless it runs on a terminal. As root a command can reopen /dev/stdout for
  // writing despite the file being read-only, which empties it and can lose output spool has not
  // read yet: root gets the pipes unless it asks.
  // An already-aborted signal starts nothing (Execution.run), so no spill file is opened for it either.
  const direct =
    spill && options.pty !== true && options.signal?.aborted !== true && (spill.direct ?? process.geteuid?.() !== 0) ? openDirectSpill(spill) : undefined;
  const execution = new Execution(command, options, new OutputCapture(limits, size), spill, direct);
  const result = execution.run(shell, cwd, buildEnv(options.env, options.pty === true));
  return {
    pid: execution.pid,
    result,
    view: () => execution.view(),
    write: (input, options) => execution.write(input, options?.end === true),
    kill: () => execution.kill(),
    onActivity: (l) => execution.onActivity(l),
    waitingForInput: () => execution.waitingForInput(),
    setUpdateInterval: (ms) => {
      checkMs("update interval", ms);
      execution.setUpdateInterval(ms);
    },
  };
}

class Execution {
  private child!: Child;
  private readonly activity = new Set<() => void>();
  private readonly started = monotonicMs();
  private readonly publisher: AdaptivePublisher<CaptureView, CaptureUpdate> | undefined;
  private readonly rawPrefixLimit: number;
  private spillWriter: SpillWriter | undefined;
  /** The command's own output file is the spill; its path is shown once the limits are crossed. */
  private directShown = false;
  private directDiscarded = false;
  /** The command emptied its own output file (it reopened /dev/stdout for writing, as root). */
  private directCut = false;
  /** The process group is stopped (SIGSTOP) while the file's reader catches up. */
  private groupStopped = false;
  private spillClosed = false;
  /**
   * The latest update went out while spill writes were still pending. A paced update can carry the
   * final view (all output read) before the spill is on disk; the final flush then finds nothing new
   * and publishes nothing, and the consumer's last update would name an incomplete spill file.
   */
  private publishedBeforeSpillClosed = false;
  private prefix: Buffer[] = [];
  private paused = false;
  private spillPauses = 0;
  /** Raw output at which the spill's room is checked next (free space, spill.maxBytes). */
  private nextRoomCheck = ROOM_CHECK_BYTES;
  private failure: CaptureError | undefined;
  private timedOut = false;
  private aborted = false;
  private killStarted = false;
  private groupEnded: Promise<void> | undefined;
  /** Nothing of the command's session runs any more (running()). */
  private sessionEmpty = false;
  /** endGroupAfterExit is over: nothing of the group is left to write. */
  private groupDone = false;
  /** write() was told the input ends: it takes no more. */
  private inputEnded = false;
  /** The command exited leaving processes running in its group, and they were ended. */
  private endedLeftovers = false;
  /** When endGroupAfterExit was over (the pipes' grace counts from then). */
  private groupDoneAt: number | undefined;
  /** A process outside the group still wrote OUTSIDE_WRITER_MS after the group was gone: reading stopped. */
  private outsideWriter = false;
  /**
   * Set after the first poll for I/O once the group is gone and reading runs: what the group wrote has
   * been read by then (a pipe holds at most 1 MiB, read whole in one poll), so later output is written
   * from outside the group.
   */
  private groupDrained = false;
  private drainMarked = false;
  /** Output arrived once groupDrained was set: a process outside the group wrote after the group ended. */
  private wroteAfterGroup = false;
  /** On the file path: the pids that can hold the spill file, from the spawn on (file-writers.ts). */
  private pidsFrom: PidWindow | undefined;
  private cancelKill: (() => void) | undefined;
  private releaseGuard: (() => void) | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private outputOpen = true;
  private lastDataAt = 0;
  private finishing = false;
  private timers: ReturnType<typeof setTimeout>[] = [];
  private settle!: { resolve(r: ExecResult): void; reject(e: unknown): void };

  constructor(
    private readonly command: string,
    private readonly options: ExecOptions,
    private readonly capture: OutputCapture,
    private readonly spill: SpillOptions | undefined,
    private readonly direct: DirectSpill | undefined,
  ) {
    // Raw bytes kept for the spill before any limit is crossed. ANSI- or CR-heavy output can be far
    // bigger raw than clean, so past this the spill starts anyway and memory stays bounded.
    this.rawPrefixLimit = Math.max(4 * capture.limits.maxBytes, 1024 * 1024);
    const onUpdate = options.onUpdate;
    if (onUpdate) {
      this.publisher = new AdaptivePublisher<CaptureView, CaptureUpdate>({
        snapshot: () => this.capture.view(this.spillPath),
        update: deriveUpdate,
        measure: measureUpdate,
        publish: (update) => {
          this.publishedBeforeSpillClosed = this.spillPath !== undefined && !this.spillClosed;
          onUpdate(update);
        },
        onError: (e) => this.fail(new CallbackError(e)),
        ...(options.minIntervalMs !== undefined ? { minIntervalMs: options.minIntervalMs } : {}),
        ...(options.targetBytesPerSecond !== undefined ? { targetBytesPerSecond: options.targetBytesPerSecond } : {}),
      });
    }
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  view(): CaptureView {
    // Its reader may open the spill file it names next: what the view shows must be in the file.
    this.spillWriter?.flush();
    return this.capture.view(this.spillPath);
  }

  private get spillPath(): string | undefined {
    return this.spillWriter?.path ?? (this.directShown ? this.direct?.path : undefined);
  }

  write(input: string, end = false): void {
    if (typeof input !== "string") throw new InvalidOptionsError("input must be a string");
    if (this.inputEnded || this.finishing || this.exit !== undefined || !this.child.write(input, end)) throw new InputClosedError(this.options.pty === true);
    // A terminal's Ctrl-D ends one read, not the terminal: a program may read it again.
    if (end && this.options.pty !== true) this.inputEnded = true;
  }

  waitingForInput(): boolean {
    const pid = this.child?.pid;
    return this.options.pty === true && pid !== undefined && this.exit === undefined && waitingForTerminalInput(pid);
  }

  setUpdateInterval(ms: number): void {
    this.publisher?.setMinInterval(ms);
  }

  onActivity(listener: () => void): () => void {
    this.activity.add(listener);
    return () => this.activity.delete(listener);
  }

  private notify(): void {
    for (const l of [...this.activity]) {
      try {
        l();
      } catch {
        // A watcher's failure is its own; the command's capture goes on.
      }
    }
  }

  run(shell: string, cwd: string, env: NodeJS.ProcessEnv): Promise<ExecResult> {
    return new Promise<ExecResult>((resolve, reject) => {
      this.settle = {
        resolve: (r) => {
          resolve(r);
          this.notify();
        },
        reject: (e) => {
          reject(e);
          this.notify();
        },
      };
      if (this.options.signal?.aborted) {
        this.settleUnstarted();
        return;
      }
      const { pty, cols, rows } = this.options;
      // "inherit": this process's descriptor 0, handed to the command as it is.
      const stdin = this.options.stdin === "pipe" ? true : this.options.stdin === "inherit" ? 0 : false;
      try {
        this.child = pty
          ? ptyChild(shell, this.command, cwd, env, cols ?? DEFAULT_COLS, rows ?? DEFAULT_ROWS)
          : this.direct
            ? fileChild(shell, this.command, cwd, env, stdin, this.direct)
            : pipeChild(shell, this.command, cwd, env, stdin);
      } catch (e) {
        // Some failures are thrown by spawn itself rather than reported by the child (E2BIG: a command
        // line past the kernel's limit for one argument).
        reject(new SpawnError(shell, e, this.command));
        return;
      }
      this.child.onSpawnError((e) => {
        if (this.child.pid === undefined) this.rejectNow(new SpawnError(shell, e));
      });
      if (this.child.pid === undefined) return;
      this.releaseGuard = guardAgainstOrphans(this.child.pid);
      // What may inherit the command's stdout on the file path (a setsid process) is started after it.
      if (this.direct) this.pidsFrom = pidWindow(this.child.pid);
      this.child.onData((chunk) => this.onData(chunk));
      this.child.onBacklog?.((behind) => this.holdBack(behind));
      this.child.onTruncated?.(() => (this.directCut = true));
      // stderr's bytes that could not be appended to the spill (ENOSPC): no lossy success.
      this.child.onCopyFailed?.((e) => this.fail(new SpillError(this.direct!.path, e)));
      this.child.onOutputClosed(() => {
        this.outputOpen = false;
        this.maybeFinish();
      });
      this.child.onExit((code, signal) => {
        this.exit = { code, signal };
        this.groupEnded = this.endGroupAfterExit().then(() => void (this.groupDone = true));
        // A file has no end of its own: it is read to the end once nothing in the group can write.
        if (this.child.outputEndsWithGroup) {
          void this.groupEnded.then(() => {
            this.groupDoneAt = monotonicMs();
            this.child.closeOutput();
          });
        } else this.armExitGrace();
        this.maybeFinish();
      });
      if (this.options.timeoutMs !== undefined) {
        this.timers.push(
          setTimeout(() => {
            this.timedOut = true;
            this.kill();
          }, this.options.timeoutMs),
        );
      }
      const signal = this.options.signal;
      if (signal) {
        if (signal.aborted) this.onAbort();
        else signal.addEventListener("abort", this.onAbort, { once: true });
      }
    });
  }

  /**
   * The signal was aborted before the start: nothing is spawned, and the run ends as an abort during it
   * does (aborted, or timedOut for a TimeoutError; exit 143 as after the SIGTERM), with no pid, an empty
   * view and no signal, since no process received one. Before, the command was spawned and killed at
   * once: `echo hi > f; sleep 5` under an aborted signal created f 16 times in 20.
   */
  private settleUnstarted(): void {
    this.onAbort();
    this.exit = { code: 128 + constants.signals.SIGTERM, signal: null };
    this.outputOpen = false;
    this.groupDone = true;
    this.maybeFinish();
  }

  private readonly onAbort = (): void => {
    // AbortSignal.timeout(), the AI SDK's per-tool timeout: time ran out, nobody stopped the command.
    if (this.options.signal !== undefined && isTimeoutAbort(this.options.signal)) this.timedOut = true;
    else this.aborted = true;
    this.kill();
  };

  private onData(chunk: Buffer): void {
    if (this.failure) return;
    this.lastDataAt = monotonicMs();
    if (this.groupDrained) this.wroteAfterGroup = true;
    if (this.spillWriter) {
      if (!this.spillWriter.write(chunk)) this.pauseForSpill();
    } else if (this.spill && !this.direct) {
      // The chunk is the pipes' reused read buffer: what is kept is copied.
      this.prefix.push(Buffer.from(chunk));
    }
    this.capture.push(chunk);
    if (this.spill && this.spillPath === undefined && (this.capture.truncatedBy !== null || this.capture.rawBytes > this.rawPrefixLimit)) {
      this.startSpill();
    }
    if (this.spillPath !== undefined) this.checkRoom(this.spillPath);
    this.publish(false);
    this.notify();
  }

  /**
   * A runaway command (`yes`, a log in a loop) is stopped before its spill passes spill.maxBytes or
   * leaves less than spill.minFreeBytes on the disk: the spill grows as fast as the disk writes, and a
   * full disk fails every other write too (the session log, the user's own files). Everything printed
   * before the limit is kept. statfs costs a few µs; it runs once per 16 MiB of output.
   */
  private checkRoom(path: string): void {
    const spill = this.spill!;
    // A command writing its spill itself can be a reader's lag (up to 64 MiB) past what was read: the
    // file's own size (an fstat per read) is what it has written.
    const raw = this.direct ? this.directSize() : this.capture.rawBytes;
    if (spill.maxBytes !== undefined && raw > spill.maxBytes) {
      this.fail(new SpillLimitError(path, { maxBytes: spill.maxBytes }));
      return;
    }
    if (raw < this.nextRoomCheck) return;
    this.nextRoomCheck = raw + ROOM_CHECK_BYTES;
    const minFreeBytes = spill.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES;
    const free = minFreeBytes > 0 ? freeBytes(path) : undefined;
    if (free !== undefined && free < minFreeBytes) this.fail(new SpillLimitError(path, { minFreeBytes, freeBytes: free }));
  }

  private directSize(): number {
    try {
      return fstatSync(this.direct!.readFd).size;
    } catch {
      return this.capture.rawBytes;
    }
  }

  private publish(force: boolean): void {
    if (!this.publisher || this.failure) return;
    try {
      if (force) this.publisher.flush(true);
      else this.publisher.markDirty();
    } catch (e) {
      this.fail(new CallbackError(e));
    }
  }

  private startSpill(): void {
    if (!this.spill || this.failure) return;
    if (this.direct) {
      // Already on disk, written by the command itself: only the path is new.
      this.directShown = true;
      this.publish(true);
      return;
    }
    try {
      this.spillWriter = SpillWriter.create(this.spill, (e) => this.fail(e));
    } catch (e) {
      this.fail(e as CaptureError);
      return;
    }
    this.spillWriter.onDrain(() => this.resume());
    let ok = true;
    for (const c of this.prefix) ok = this.spillWriter.write(c);
    this.prefix = [];
    if (!ok) this.pauseForSpill();
    this.publish(true);
  }

  private pauseForSpill(): void {
    if (this.paused) return;
    this.paused = true;
    this.spillPauses++;
    this.child.pause();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    // As fresh output: the exit grace must not close the pipes between the resume and their next read
    // (what a pipe held through a pause longer than the grace would be lost).
    this.lastDataAt = monotonicMs();
    this.child.resume();
  }

  /**
   * The command writing its spill file never waits for spool; when the reader falls far behind
   * (file-tail.ts) the group is stopped until it has caught up, so a timeout still ends the run
   * soon and the file grows no faster than spool reads it.
   */
  private holdBack(behind: boolean): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    if (behind && !this.groupStopped && !this.killStarted && !this.finishing) {
      this.groupStopped = signalGroup(pid, "SIGSTOP");
      if (this.groupStopped) this.spillPauses++;
    } else if (!behind) {
      this.continueGroup();
    }
  }

  /** A stopped process acts on SIGTERM only once continued. */
  private continueGroup(): void {
    if (!this.groupStopped || this.child.pid === undefined) return;
    this.groupStopped = false;
    signalGroup(this.child.pid, "SIGCONT");
  }

  private fail(error: CaptureError): void {
    if (this.failure) return;
    this.failure = error;
    // Keep draining the pipes (into nothing) so the dying process is never blocked on a full pipe.
    this.resume();
    this.kill();
  }

  kill(): void {
    if (this.killStarted || this.child?.pid === undefined || this.finishing) return;
    this.killStarted = true;
    this.cancelKill = terminateGroup(this.child.pid, this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    this.continueGroup();
  }

  /** After exit, wait while the pipes still deliver (or the spill drains), then stop waiting for them. */
  private armExitGrace(): void {
    /** `polled`: this look runs after an event-loop poll that followed a quiet look (below). */
    const check = (early = false, polled = false): void => {
      if (!this.outputOpen || this.finishing) return;
      // What the command left in its group writes on through its grace (`(sleep 0.3; echo done) &`):
      // the pipes are given up only once the group is gone, to a `setsid` daemon that holds them.
      const now = monotonicMs();
      // After a timeout or abort endGroupAfterExit is over at once, while the group's own members still
      // run (and may print on SIGTERM) through the kill grace: the outside writer's second counts from
      // when nothing of the group runs. Counted from endGroupAfterExit, a member printing every 20 ms
      // on SIGTERM with killGraceMs 10 s was cut after 1 s and called a process outside the group.
      if (this.groupDone && this.groupDoneAt === undefined && !this.running()) this.groupDoneAt = now;
      const writing = now - this.lastDataAt < EXIT_STDIO_GRACE_MS;
      // Reading is paused while the spill catches up: what the pipes hold is still to be kept.
      const draining = this.paused && !this.failure;
      const busy = draining || writing || !this.groupDone;
      // A terminal gives its last output to the reader a chunk per poll, often long after the exit is
      // seen (a command that ends printing 300 KB under a pty was still being read 1 s later, and 67 of
      // 72 such runs got the outside-writer note): its group counts as drained only at a look that finds
      // it quiet. A writer outside the group is then one that keeps writing for OUTSIDE_WRITER_MS, or
      // writes again after a quiet spell. Pipes give theirs at once, so they keep the first poll.
      if (this.groupDoneAt !== undefined && !draining && !this.drainMarked && !(this.child.heldOpen && writing)) {
        this.drainMarked = true;
        setImmediate(() => (this.groupDrained = true));
      }
      const outsider = !draining && this.groupDoneAt !== undefined && now - this.groupDoneAt >= OUTSIDE_WRITER_MS;
      if (busy && !outsider) {
        if (!early) this.timers.push(setTimeout(check, EXIT_STDIO_GRACE_MS));
        return;
      }
      if (!busy && !polled) {
        // A quiet look is taken again after the loop's next poll for I/O: timers run before it, so a
        // timer's look never sees what the pipes hold by then. Under load the exit was handled before
        // the pipe's last bytes were read, the loop stayed busy past the grace, and the pipes were
        // closed with `echo`'s line unread: 400 `sleep 1; echo N` over `spool mcp` came back
        // "(no output)", exit code 0, 18-259 times. A busy look (an outside writer) closes at once.
        setImmediate(() => check(early, true));
        return;
      }
      // An outside writer is one still writing now, or one that wrote after the group was gone: a loop
      // that pauses between lines is quiet for a look whenever a loaded machine stretches a pause past
      // the grace (a 50 ms pause, or a few ms of spinning, went without the note 1 run in 2-4 beside
      // two test suites).
      if (busy || this.wroteAfterGroup) this.outsideWriter = true;
      this.child.closeOutput();
      this.outputOpen = false;
      this.maybeFinish();
    };
    this.timers.push(setTimeout(check, EXIT_STDIO_GRACE_MS));
    // A terminal is closed by this grace alone, and reads all it holds as it closes: once the group is
    // gone (at the exit for a command that left nothing running: kill(-pgid, 0) finds no process) the
    // same look is taken then, not at the first timer. After a timeout or an abort the group's members
    // may still print on SIGTERM, so the group itself must be empty, not only endGroupAfterExit over. A
    // look that finds output in the last EXIT_STDIO_GRACE_MS leaves it to the timer, as before: spool
    // cannot tell a process that left the group (setsid) and still writes to the terminal from the
    // command's own last words. Pipes close by themselves once nothing holds them; what they still
    // hold after that is in flight, and only the timer's quiet spell tells it was read.
    if (this.child.heldOpen) void this.groupEnded?.then(() => !this.running() && check(true));
  }

  private maybeFinish(): void {
    if (this.exit === undefined || this.outputOpen || this.finishing) return;
    void this.finish();
  }

  private cleanup(): void {
    this.releaseGuard?.();
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    this.options.signal?.removeEventListener("abort", this.onAbort);
    if (this.killStarted && this.child.pid !== undefined) {
      // Whatever in the group ignored SIGTERM and let go of the pipes is not left running either.
      signalSession(this.child.pid, ["SIGKILL"], !this.sessionEmpty);
      this.cancelKill?.();
    }
  }

  /**
   * Something of the command still runs: in its group, or in another group of its session (`set -m`
   * gives each job its own; process-group.ts). A session with nothing left running never gains a member
   * again (only a member's fork joins it), so once seen empty it is not listed again: a command that
   * left nothing costs one listing of /proc at its end. Measured here with ~110 processes at a load
   * average of 8 on two cores: the listing 1.3 ms median inside a run (p90 5 ms), exec("true") 5.4-7.3
   * → 8.7-9.7 ms median over 80 runs each; ~1,000 processes make a listing ~35 ms (process-group.ts).
   */
  private running(): boolean {
    if (this.sessionEmpty) return false;
    const pid = this.child.pid!;
    if (groupRunning(pid)) return true;
    // No /proc (not Linux): the group is all spool can see, as before.
    this.sessionEmpty = sessionRunning(pid) !== true;
    return !this.sessionEmpty;
  }

  /** Ends what the command left in its group: a grace period to finish writing, then SIGTERM, then SIGKILL. */
  private async endGroupAfterExit(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined) return;
    const graceEnds = monotonicMs() + EXIT_GROUP_GRACE_MS;
    while (!this.killStarted && this.running() && monotonicMs() < graceEnds) await pause(GROUP_POLL_MS);
    const killGrace = this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    if (this.killStarted) {
      // A timeout or abort already signalled the group; cleanup() finishes that job — before the
      // file is read to its end, when the command writes one.
      if (this.child.outputEndsWithGroup) await killWhenQuiet(pid, killGrace, EXIT_STDIO_GRACE_MS, () => this.lastDataAt);
      return;
    }
    if (!this.running()) return;
    this.endedLeftovers = true;
    const cancel = terminateGroup(pid, killGrace);
    this.continueGroup();
    const killEnds = monotonicMs() + killGrace + GROUP_POLL_MS * 4;
    while (this.running() && monotonicMs() < killEnds) await pause(GROUP_POLL_MS);
    cancel();
    signalSession(pid, ["SIGKILL"], !this.sessionEmpty);
    if (this.child.outputEndsWithGroup) await untilGone(pid);
  }

  private async finish(): Promise<void> {
    this.finishing = true;
    // The orphan guard stays armed until the group is gone.
    await this.groupEnded;
    this.cleanup();
    if (!this.failure) {
      this.capture.end();
      if (this.spill && this.spillPath === undefined && this.capture.truncatedBy !== null) this.startSpill();
    }
    if (this.spillWriter) {
      try {
        await this.spillWriter.close();
      } catch (e) {
        this.failure ??= e as CaptureError;
      }
      this.spillClosed = true;
    }
    if (this.direct) {
      await this.endOutsideWriters(this.direct.path);
      // The command's writes to a full disk failed where spool cannot see them: no lossy success.
      if (spillSpaceLow(this.direct.path, FULL_BYTES)) this.failure ??= new SpillError(this.direct.path, new Error("ENOSPC: no space left on device"));
      // The view has every byte (reading started again at 0), the file lost what was cut.
      if (this.directCut && this.directShown) this.failure ??= new SpillError(this.direct.path, new Error(CUT_MESSAGE));
      this.spillClosed = true;
      if (this.directShown) keepDirectSpill(this.direct);
      else this.discardDirect();
    }
    const view = this.capture.view(this.spillPath);
    if (this.failure) {
      if (!(this.failure instanceof CallbackError) && this.publisher) {
        try {
          this.publisher.flush(true);
        } catch {
          // The error being reported is the spill failure; a second one from the consumer adds nothing.
        }
      }
      this.rejectNow(this.failure, view);
      return;
    }
    try {
      this.publisher?.flush(true);
      // Unchanged since an update sent while the spill was still being written: say it once more.
      if (this.publishedBeforeSpillClosed) this.options.onUpdate?.({ kind: "metadata", metadata: metadataOf(view) });
    } catch (e) {
      this.rejectNow(new CallbackError(e), view);
      return;
    }
    this.publisher?.dispose();
    const exit = this.exit ?? { code: null, signal: null };
    this.settle.resolve({
      ...view,
      exitCode: exitCodeOf(exit.code, exit.signal),
      signal: exit.signal,
      timedOut: this.timedOut,
      aborted: this.aborted,
      durationMs: Math.round(monotonicMs() - this.started),
      spillPauses: this.spillPauses,
      ...(this.endedLeftovers ? { endedLeftovers: true as const } : {}),
      ...(this.outsideWriter ? { outsideWriter: true as const } : {}),
    });
  }

  /**
   * On the file path the output is read to the size the file has once the group is gone; a process
   * that left the group (`setsid`) and still holds the command's stdout writes on into the file —
   * after spool has removed it, where nothing sees it and nothing bounds it (a `while :; do echo; done`
   * loop: ~2.5 MB/s into a deleted file, past spill.maxBytes, after the server had exited). On pipes
   * such a writer is read for OUTSIDE_WRITER_MS and then its next write fails. Here the same: a file
   * has no end of file to say that nothing holds it any more, so the processes started since the
   * command are looked through for one holding it for writing (file-writers.ts; the one cost when none
   * does). While the file grows past what was read it is followed by its size; a quiet spell of
   * EXIT_STDIO_GRACE_MS ends the wait and the holder is left alone, as a quiet daemon is on pipes (a
   * single look at the size is not enough: on two loaded cores the loop above was seen not to write
   * for the few ms between the last read and the look). Still writing OUTSIDE_WRITER_MS after the
   * group's end, or past spill.maxBytes, it is an outside writer: noted in the result, and what holds
   * the file for writing is ended (SIGPIPE, then SIGKILL for what survives).
   */
  private async endOutsideWriters(path: string): Promise<void> {
    const readTo = this.child.readTo?.();
    if (readTo === undefined || fileWriters(path, this.pidsFrom).length === 0) return;
    const since = this.groupDoneAt ?? monotonicMs();
    const maxBytes = this.spill?.maxBytes ?? Number.POSITIVE_INFINITY;
    let size = readTo;
    // At least one look, however long reading to the end took: a reader held up past the second (a
    // slow onUpdate, a loaded machine, a backlog of up to 4 MiB) otherwise judged a quiet daemon
    // (`setsid sleep 30 &`) an outside writer without looking, and killed it.
    do {
      await pause(EXIT_STDIO_GRACE_MS);
      const now = sizeOf(path);
      if (now <= size) return;
      size = now;
    } while (monotonicMs() - since < OUTSIDE_WRITER_MS && size <= maxBytes);
    this.outsideWriter = true;
    await stopFileWriters(path, this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, this.pidsFrom);
  }

  /** A spill the limits never called for is not left behind (nor the directories made for it). */
  private discardDirect(): void {
    if (this.directDiscarded || !this.direct) return;
    this.directDiscarded = true;
    discardSpillFile(this.direct);
  }

  private rejectNow(error: CaptureError, view?: CaptureView): void {
    this.finishing = true;
    this.cleanup();
    this.publisher?.dispose();
    this.spillWriter?.destroy();
    if (this.direct) {
      this.child.closeOutput();
      if (!this.directShown) this.discardDirect();
    }
    error.view = view;
    this.settle.reject(error);
  }
}
