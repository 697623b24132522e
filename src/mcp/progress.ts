// Progress notifications for one call, paced: at most one per `minIntervalMs` (default 100 ms, so
// ≤ 10 per second whatever the command prints), the latest value winning, and never a value that does
// not grow (the protocol requires progress to increase with each notification). Progress is the
// cleaned output's size, one more for a redraw that adds no bytes: a `\r` progress bar keeps its line
// the same length (or one char longer at 10%), so sending only when the size grew froze the client's
// line at "13%" while the bar ran to 100% (2 notifications in 1.7 s).
// A command that prints nothing (a quiet test suite, `sleep 90`) gets a heartbeat instead: one more
// progress, "running 40s, no new output for 30s", once nothing was sent for `heartbeatMs`. Without it
// such a call sent nothing at all, and a client on the SDK's 60 s default request timeout timed out
// even with `resetTimeoutOnProgress: true` (measured: `sleep 25` under a 20 s timeout, 0 notifications).
import type { ToolOutputState } from "../output/index.js";

export interface ProgressUpdate {
  readonly progress: number;
  readonly message: string;
}

export interface ProgressPacer {
  update(state: ToolOutputState): void;
  /** Drops anything pending and ends the heartbeat; no notification is sent after this. */
  stop(): void;
}

const MAX_MESSAGE_CHARS = 200;

/** The latest non-empty line of the cleaned view, shortened for a status line. */
export function latestLine(text: string): string {
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end).trim();
    if (line !== "") return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS - 1)}…` : line;
    end = start - 1;
  }
  return "";
}

/** Quiet time before a heartbeat: well under the SDK's 60 s default request timeout, a few an idle minute. */
export const DEFAULT_HEARTBEAT_MS = 10_000;

/** Whole seconds, as a status line shows them. */
const seconds = (ms: number): string => `${Math.floor(ms / 1000)}s`;

/** `heartbeatMs` 0: no heartbeat. The heartbeat's clock starts now, at the call's start. */
export function createProgressPacer(send: (update: ProgressUpdate) => void, minIntervalMs = 100, heartbeatMs = DEFAULT_HEARTBEAT_MS): ProgressPacer {
  const startedAt = performance.now();
  /** When output last changed what was sent (the start until then). */
  let outputAt: number | undefined;
  let beat: NodeJS.Timeout | undefined;
  let lastSentAt = -Infinity;
  let lastProgress = -1;
  let lastBytes = -1;
  let lastMessage: string | undefined;
  let pending: ToolOutputState | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const fire = (): void => {
    timer = undefined;
    if (stopped || pending === undefined) return;
    const bytes = pending.truncation.totalBytes;
    const message = latestLine(pending.content[0].text);
    pending = undefined;
    if (bytes <= lastBytes && message === lastMessage) return;
    lastBytes = Math.max(lastBytes, bytes);
    lastMessage = message;
    lastProgress = Math.max(bytes, lastProgress + 1);
    lastSentAt = performance.now();
    outputAt = lastSentAt;
    send({ progress: lastProgress, message });
    armBeat();
  };
  const heartbeat = (): void => {
    beat = undefined;
    if (stopped) return;
    const now = performance.now();
    const quiet = outputAt === undefined ? "no output yet" : `no new output for ${seconds(now - outputAt)}`;
    lastProgress += 1;
    lastSentAt = now;
    send({ progress: lastProgress, message: `running ${seconds(now - startedAt)}, ${quiet}` });
    armBeat();
  };
  // Re-armed at every send, so a heartbeat comes only after heartbeatMs with nothing sent.
  function armBeat(): void {
    clearTimeout(beat);
    // A time no timer holds (over 2^31-1 ms, NaN) would fire at once, again and again: read as none.
    beat = heartbeatMs > 0 && heartbeatMs <= 2_147_483_647 && !stopped ? setTimeout(heartbeat, heartbeatMs) : undefined;
  }
  armBeat();
  return {
    update(state) {
      if (stopped) return;
      pending = state;
      const wait = lastSentAt + minIntervalMs - performance.now();
      if (wait <= 0) fire();
      else timer ??= setTimeout(fire, wait);
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      clearTimeout(beat);
      beat = undefined;
    },
  };
}
