// Progress notifications for one call, paced: at most one per `minIntervalMs` (default 100 ms, so
// ≤ 10 per second whatever the command prints), the latest value winning, and never a value that does
// not grow (the protocol requires progress to increase with each notification). Progress is the
// cleaned output's size, one more for a redraw that adds no bytes: a `\r` progress bar keeps its line
// the same length (or one char longer at 10%), so sending only when the size grew froze the client's
// line at "13%" while the bar ran to 100% (2 notifications in 1.7 s).
import type { ToolOutputState } from "../output/index.js";

export interface ProgressUpdate {
  readonly progress: number;
  readonly message: string;
}

export interface ProgressPacer {
  update(state: ToolOutputState): void;
  /** Drops anything pending; no notification is sent after this. */
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

export function createProgressPacer(send: (update: ProgressUpdate) => void, minIntervalMs = 100): ProgressPacer {
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
    send({ progress: lastProgress, message });
  };
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
    },
  };
}
