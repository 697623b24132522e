// Watching a pty command for a prompt: quiet for a second while some process of its terminal's session
// waits to read the terminal. Each look lists every process on the machine (/proc has no index by
// session), so a command that stays quiet without prompting — a server waiting for connections, a long
// `sleep` — is looked at less often the longer it has been quiet: every 200 ms made that one /proc scan
// five times a second for the whole run (~13 ms each with ~580 processes, on the event loop). Output
// starts the schedule again, so a prompt printed before its read is still found about a second after it.
import type { RunningCommand } from "../../capture/index.js";

/** Quiet this long while reading its terminal, a pty command is at a prompt. */
const PROMPT_QUIET_MS = 1000;
/** How often the quiet clock is read (cheap); the /proc look runs on the schedule below. */
const PROMPT_TICK_MS = 200;
const PROMPT_MAX_GAP_MS = 5000;

/**
 * The wait before the next look, after one at `quietMs` of quiet found no prompt: a quarter of the
 * quiet so far, from 200 ms to 5 s. A prompt reached in silence (a quiet build that ends in a question)
 * is then found within about a quarter of the quiet that came before it, and at most 5 s late.
 */
export function promptCheckDelay(quietMs: number): number {
  return Math.min(PROMPT_MAX_GAP_MS, Math.max(PROMPT_TICK_MS, quietMs / 4));
}

/** Resolves once the command sits at a prompt; `cancel` stops watching. */
export function atPrompt(handle: Pick<RunningCommand, "onActivity" | "waitingForInput">): { promise: Promise<void>; cancel(): void } {
  let last = Date.now();
  let nextLook = 0;
  const unsubscribe = handle.onActivity(() => {
    last = Date.now();
    nextLook = 0;
  });
  let timer: ReturnType<typeof setInterval> | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setInterval(() => {
      const now = Date.now();
      const quiet = now - last;
      if (quiet < PROMPT_QUIET_MS || now < nextLook) return;
      if (!handle.waitingForInput()) {
        nextLook = now + promptCheckDelay(quiet);
        return;
      }
      clearInterval(timer);
      resolve();
    }, PROMPT_TICK_MS);
  });
  return {
    promise,
    cancel: () => {
      clearInterval(timer);
      unsubscribe();
    },
  };
}
