// An abort that means "time ran out", not "someone stopped it": AbortSignal.timeout() aborts with a
// DOMException named "TimeoutError", and so does the AI SDK's per-tool timeout (`timeout: { toolMs }`),
// which it merges into the signal it hands a tool. A command ended by one is reported as timed out:
// read as an abort, the model was told "[aborted] Command aborted (exit 143)", the call was recorded
// interrupted, and a run that went on past it was recorded as interrupted by its abortSignal.

/** The signal has fired, and its reason is a TimeoutError. */
export function isTimeoutAbort(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return signal.aborted && typeof reason === "object" && reason !== null && (reason as { name?: unknown }).name === "TimeoutError";
}
