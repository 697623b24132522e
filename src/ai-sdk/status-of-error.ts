// How a run that threw ended, as the session records it: an abort (the `abortSignal` given to
// generateText/streamText) is "interrupted", the SDK's `timeout` (or AbortSignal.timeout) "timed out",
// anything else — a provider's HTTP 500, a network error, an exception in the caller's code — "failed".
// The names are the ones the AI SDK's own isAbortError reads: generateText rejects with the DOMException
// "AbortError" when its signal fires ("TimeoutError" for `timeout`), and Next.js aborts a response with
// "ResponseAborted". An abort given a reason of the caller's own (`controller.abort("stop")`) may reach
// the caller as that reason, which reads as "failed".
import type { SessionStatus } from "../harness/index.js";

export function statusOfError(error: unknown): Exclude<SessionStatus, "running" | "succeeded"> {
  const name = error instanceof Error ? error.name : undefined;
  if (name === "TimeoutError") return "timed out";
  if (name === "AbortError" || name === "ResponseAborted") return "interrupted";
  return "failed";
}
