// Background processes: commands that keep running after the bash call that started them returned.
// Each is owned by the harness, has its own tool-output state (a live and durable sink, shown by
// viewers and recovered after a crash like any call's), and a read cursor for the model: a read
// returns only what is new since the last one, with exact counts of what left the bounded view
// unread. Waiting ends as soon as output arrives or the process ends. When the owning process dies,
// the capture's orphan guard kills each process group, and the unsettled operation left in the
// session is reported as interrupted by recover()/resume().
import { givenValue } from "../errors/index.js";
import { applyUpdate, CaptureError, type CaptureUpdate, type CaptureView, type ExecResult, type RunningCommand } from "../capture/index.js";
import { HarnessError } from "./tool.js";
import { mirrorUpdate } from "./capture-target.js";
import { START, takeUnread, type ReadCursor } from "./unread.js";
import type { ToolOutput, ToolOutputState } from "../output/index.js";

/** After the first new output, gather what follows within this quiet gap (an echo, then the answer). */
const QUIET_MS = 30;
const GATHER_MAX_MS = 250;
/** Longest wait a call may ask for. */
export const MAX_WAIT_SECONDS = 600;
/**
 * What every running background process together may publish (its live and durable output state: the
 * viewer, `spool inspect`, a crash's recovery), in updates a second: each one's updates are spaced
 * `running × 1000 / this` ms apart, never closer than the capture's own 100 ms nor further than 5 s.
 * A model reads a process from its exact view (process_output), not from these. An update builds the
 * process's view and records a batch (~250 µs with a full 50 KB window): 100 chatty processes each at
 * the capture's 10 a second were ~25% of a core (bench/processes.bench.mjs).
 */
export const BACKGROUND_UPDATES_PER_SECOND = 100;
const MIN_UPDATE_INTERVAL_MS = 100;
const MAX_UPDATE_INTERVAL_MS = 5000;

/** The spacing of each background process's updates when `running` of them run. */
export function backgroundUpdateInterval(running: number): number {
  return Math.min(MAX_UPDATE_INTERVAL_MS, Math.max(MIN_UPDATE_INTERVAL_MS, Math.ceil((running * 1000) / BACKGROUND_UPDATES_PER_SECOND)));
}

export type ProcessStatus =
  | { readonly state: "running" }
  /** `endedLeftovers`: what it left running in its group (`server &`) was stopped as it exited. */
  | { readonly state: "exited"; readonly exitCode: number; readonly timedOut?: true; readonly endedLeftovers?: true }
  /** spool stopped it: its output could not be kept (a spill limit, a full disk); `error` says why. */
  | { readonly state: "failed"; readonly exitCode: number; readonly error: string }
  | { readonly state: "killed"; readonly exitCode: number; readonly signal: string; readonly timedOut?: true; readonly endedLeftovers?: true };

export interface ProcessInfo {
  readonly processId: string;
  readonly command: string;
  readonly pty: boolean;
  readonly pid: number | undefined;
  readonly startedAt: string;
  readonly status: ProcessStatus;
}

export interface ProcessRead {
  readonly processId: string;
  readonly status: ProcessStatus;
  /** New complete lines, then the current unfinished line (if any). */
  readonly text: string;
  readonly skippedLines: number;
  readonly skippedBytes: number;
  /** Over-long lines cut since the last read: their full text is only in the spill file. */
  readonly cutLines: number;
  readonly spillPath?: string;
}

/** What the harness lends the host: a live, durable sink per process, and its settlement. */
export interface ProcessSinks {
  open(processId: string, args: Record<string, unknown>, seed: ToolOutputState): ToolOutput;
  settle(processId: string, isError: boolean): Promise<void>;
}

export interface AdoptSpec {
  readonly handle: RunningCommand;
  readonly command: string;
  readonly pty: boolean;
  /** The state the process's output has reached in the call that started it. */
  readonly seed: ToolOutputState;
  /** The last view published to that state. */
  readonly view: CaptureView | undefined;
  /** Points the command's capture updates at the process's own sink from now on. */
  readonly redirect: (receiver: (u: CaptureUpdate) => void) => void;
}

export interface ProcessHost {
  /** Takes over a running command: it gets a processId, its own sink, and a cursor at its start. */
  adopt(spec: AdoptSpec): string;
  /**
   * A wait ended by `signal` reads nothing (the cursor stays) and throws: the output stays unread for the
   * next read. Reads waiting at once share the cursor: each new line goes to the one that ends first,
   * and the others wait on for what follows.
   */
  read(processId: string, waitMs?: number, signal?: AbortSignal): Promise<ProcessRead>;
  /** `end`: close its input after `input` (end of file; on a pty, Ctrl-D at the start of a line). */
  write(processId: string, input: string, waitMs?: number, signal?: AbortSignal, end?: boolean): Promise<ProcessRead>;
  kill(processId: string): Promise<ProcessRead>;
  list(): ProcessInfo[];
  /** Kills every running process and waits until each one's operation has settled. */
  closeAll(): Promise<void>;
}

interface BackgroundRecord {
  readonly id: string;
  readonly command: string;
  readonly pty: boolean;
  readonly pid: number | undefined;
  /**
   * The running command; let go once it has ended (`result` holds what reads need then). Kept, each
   * ended process held its capture: a 256 KiB read buffer, the window, the spill writer — 200
   * background processes in one `spool mcp` session held 52 MB of read buffers alone.
   */
  handle: RunningCommand | undefined;
  readonly startedAt: string;
  cursor: ReadCursor;
  status: ProcessStatus;
  result: ExecResult | undefined;
  /** Resolves once the process has ended and its operation has settled. */
  settled: Promise<void>;
  readonly waiters: Set<() => void>;
  /** Its input was ended by a write with `end` (pipes: it takes no more). */
  inputEnded: boolean;
}

function statusOf(r: ExecResult): ProcessStatus {
  const extra = { ...(r.timedOut ? { timedOut: true as const } : {}), ...(r.endedLeftovers ? { endedLeftovers: true as const } : {}) };
  return r.signal !== null ? { state: "killed", exitCode: r.exitCode, signal: r.signal, ...extra } : { state: "exited", exitCode: r.exitCode, ...extra };
}

export function describeStatus(processId: string, s: ProcessStatus): string {
  if (s.state === "running") return `process ${processId} is still running`;
  if (s.state === "failed") return `process ${processId} was stopped: ${s.error.replace(/\.$/, "")}`;
  const limit = s.timedOut ? " after its timeout" : "";
  // As bash's note says it: a server started with `&` inside it is gone too.
  const left = s.endedLeftovers ? "; what it left running in the background (`… &`) was stopped as it exited" : "";
  if (s.state === "exited") return `process ${processId} exited with code ${s.exitCode}${s.timedOut ? " (its timeout had ended it)" : ""}${left}`;
  return `process ${processId} was killed by ${s.signal}${limit} (exit ${s.exitCode})${left}`;
}

/** Ids an unknown-process error names: the latest ones. */
const KNOWN_IN_ERROR = 10;

let counter = 0;
const newId = (): string => `proc-${(++counter).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export function createProcessHost(sinks: ProcessSinks): ProcessHost {
  const records = new Map<string, BackgroundRecord>();
  /** Processes still running, and the update spacing they were last given. */
  const running = new Set<BackgroundRecord>();
  let interval = MIN_UPDATE_INTERVAL_MS;
  const pace = (): void => {
    const next = backgroundUpdateInterval(running.size);
    if (next === interval) return;
    interval = next;
    for (const r of running) r.handle?.setUpdateInterval(interval);
  };

  const get = (processId: string): BackgroundRecord => {
    const r = typeof processId === "string" ? records.get(processId) : undefined;
    if (!r) {
      // The latest few only: every id ever started made a 12 KB sentence after 1000 background commands.
      const known = [...records.keys()];
      const shown = known.slice(-KNOWN_IN_ERROR);
      const more = known.length > shown.length ? ` (and ${known.length - shown.length} earlier)` : "";
      throw new HarnessError(
        "SPOOL_HARNESS_UNKNOWN_PROCESS",
        `no background process ${givenValue(processId)}; ${known.length ? `known: ${shown.join(", ")}${more}` : "none was started"} (process_list shows them)`,
      );
    }
    return r;
  };

  const take = (r: BackgroundRecord): ProcessRead => {
    const view = r.result ?? r.handle!.view();
    const u = takeUnread(view, r.cursor, r.result !== undefined);
    r.cursor = u.cursor;
    return {
      processId: r.id,
      status: r.status,
      text: u.text,
      skippedLines: u.skippedLines,
      skippedBytes: u.skippedBytes,
      cutLines: u.cutLines,
      ...(view.spillPath !== undefined ? { spillPath: view.spillPath } : {}),
    };
  };

  /** What a read would return now, as a comparable string. */
  const unreadNow = (r: BackgroundRecord): string => {
    const u = takeUnread(r.result ?? r.handle!.view(), r.cursor, false);
    return u.skippedLines > 0 ? `${u.skippedLines}\n${u.text}` : u.text;
  };

  /**
   * Resolves when there is something new (plus a short gathering gap), the process ends, the time is
   * up, or `signal` aborts. `before` is what was unread when the wait began, for a wait that must see
   * output produced after that moment (the answer to input just written, not the prompt that asked for it).
   */
  const waitForNews = (r: BackgroundRecord, waitMs: number, before: string, signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve) => {
      const hasNews = (): boolean => r.result !== undefined || unreadNow(r) !== before;
      if (waitMs <= 0 || signal?.aborted || hasNews()) return resolve();
      let quiet: ReturnType<typeof setTimeout> | undefined;
      let gatherEnd = 0;
      const done = (): void => {
        clearTimeout(deadline);
        clearTimeout(quiet);
        off();
        r.waiters.delete(onEvent);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const onEvent = (): void => {
        if (r.result !== undefined) return done();
        if (quiet === undefined && !hasNews()) return;
        const now = performance.now();
        if (quiet === undefined) gatherEnd = now + GATHER_MAX_MS;
        clearTimeout(quiet);
        quiet = setTimeout(done, Math.max(0, Math.min(QUIET_MS, gatherEnd - now)));
      };
      const deadline = setTimeout(done, waitMs);
      const off = r.handle!.onActivity(onEvent);
      r.waiters.add(onEvent);
      signal?.addEventListener("abort", done, { once: true });
    });

  /**
   * waitForNews until there is something to take when it ends. Two waits on one process at once (a
   * client's parallel calls) share its one cursor: the first to end takes the new output, and the
   * other used to end with it and return "(no new output)" (measured: both returned at 1.03 s of a
   * 10 s wait, the next line came at 3 s). It waits on, in its own time, for what comes next; so
   * each line goes to exactly one read, none is lost or doubled, and no wait ends empty early.
   */
  const waitForOwnNews = async (r: BackgroundRecord, waitMs: number, before: string, signal: AbortSignal | undefined): Promise<void> => {
    const end = performance.now() + waitMs;
    for (let since = before; ; since = "") {
      await waitForNews(r, end - performance.now(), since, signal);
      if (signal?.aborted || r.result !== undefined || performance.now() >= end || unreadNow(r) !== "") return;
    }
  };

  /**
   * After its input was ended the process is expected to finish (sort, wc, a REPL's Ctrl-D): the wait
   * lasts until it has, not until its first output, so one call gives what it printed and how it ended.
   */
  const waitForEnd = (r: BackgroundRecord, waitMs: number, signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve) => {
      if (waitMs <= 0 || signal?.aborted || r.result !== undefined) return resolve();
      const done = (): void => {
        clearTimeout(deadline);
        r.waiters.delete(onEvent);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const onEvent = (): void => {
        if (r.result !== undefined) done();
      };
      const deadline = setTimeout(done, waitMs);
      r.waiters.add(onEvent);
      signal?.addEventListener("abort", done, { once: true });
    });

  /** After a wait: a cancelled call takes nothing, so what arrived stays for the next read. */
  const takeUnlessAborted = (r: BackgroundRecord, signal: AbortSignal | undefined, what: string): ProcessRead => {
    if (signal?.aborted) {
      throw new HarnessError(
        "SPOOL_HARNESS_ABORTED",
        `${what} was cancelled; ${describeStatus(r.id, r.status)} and nothing was read (process_output shows what it printed)`,
      );
    }
    return take(r);
  };

  return {
    adopt(spec) {
      const id = newId();
      const out = sinks.open(id, { command: spec.command, background: true, ...(spec.pty ? { pty: true } : {}) }, spec.seed);
      let view = spec.view;
      spec.redirect((u) => {
        const previous = view;
        view = applyUpdate(view, u);
        mirrorUpdate(out, previous, view, u);
      });
      const r: BackgroundRecord = {
        id,
        command: spec.command,
        pty: spec.pty,
        pid: spec.handle.pid,
        handle: spec.handle,
        startedAt: new Date().toISOString(),
        cursor: START,
        status: { state: "running" },
        result: undefined,
        settled: Promise.resolve(),
        waiters: new Set(),
        inputEnded: false,
      };
      const ended = (result: ExecResult | undefined, error?: unknown): void => {
        r.result = result ?? { ...spec.handle.view(), exitCode: 1, signal: null, timedOut: false, aborted: false, durationMs: 0, spillPauses: 0 };
        r.status =
          error === undefined
            ? statusOf(r.result)
            : { state: "failed", exitCode: r.result.exitCode, error: error instanceof Error ? error.message : String(error) };
        if (result) mirrorUpdate(out, undefined, result, { kind: "replace", view: result });
        out.details.status = r.status.state;
        out.details.exitCode = r.result.exitCode;
        if (r.result.signal) out.details.signal = r.result.signal;
        const note = describeStatus(id, r.status);
        const text = out.state.content[0].text;
        out.footer(`${text.endsWith("\n") || text === "" ? "" : "\n"}[${note}]`);
        for (const w of [...r.waiters]) w();
        r.handle = undefined;
        running.delete(r);
        pace();
      };
      r.settled = spec.handle.result
        .then(
          (res) => ended(res),
          (err: unknown) => ended(undefined, err),
        )
        .then(() => sinks.settle(id, r.status.state !== "exited" || (r.status.state === "exited" && r.status.exitCode !== 0)));
      records.set(id, r);
      running.add(r);
      spec.handle.setUpdateInterval(backgroundUpdateInterval(running.size));
      pace();
      return id;
    },

    async read(processId, waitMs = 0, signal) {
      const r = get(processId);
      await waitForOwnNews(r, waitMs, "", signal);
      return takeUnlessAborted(r, signal, "the read");
    },

    async write(processId, input, waitMs = 0, signal, end = false) {
      const r = get(processId);
      if (r.result !== undefined) {
        throw new HarnessError("SPOOL_HARNESS_PROCESS_ENDED", `${describeStatus(r.id, r.status)}; it takes no more input (start it again)`);
      }
      if (r.inputEnded) {
        throw new HarnessError(
          "SPOOL_HARNESS_INPUT_CLOSED",
          `process ${r.id}'s input was ended by an earlier process_write with end: true; it reads no more of it (process_output shows what it prints)`,
        );
      }
      const before = unreadNow(r);
      try {
        r.handle!.write(input, { end });
        if (end && !r.pty) r.inputEnded = true;
      } catch (e) {
        // The capture's sentence speaks to a library caller (stdin: "pipe"); the model needs this one.
        if (!(e instanceof CaptureError && e.code === "SPOOL_CAPTURE_INPUT")) throw e;
        throw new HarnessError(
          "SPOOL_HARNESS_INPUT_CLOSED",
          `process ${r.id} has closed its input and reads no more of it; process_output still shows what it prints`,
        );
      }
      await (end ? waitForEnd(r, waitMs, signal) : waitForOwnNews(r, waitMs, before, signal));
      return takeUnlessAborted(r, signal, "the wait after the input (which was written)");
    },

    async kill(processId) {
      const r = get(processId);
      if (r.result === undefined) r.handle!.kill();
      await r.settled;
      return take(r);
    },

    list() {
      return [...records.values()].map((r) => ({
        processId: r.id,
        command: r.command,
        pty: r.pty,
        pid: r.pid,
        startedAt: r.startedAt,
        status: r.status,
      }));
    },

    async closeAll() {
      for (const r of records.values()) if (r.result === undefined) r.handle!.kill();
      await Promise.all([...records.values()].map((r) => r.settled.catch(() => {})));
    },
  };
}
