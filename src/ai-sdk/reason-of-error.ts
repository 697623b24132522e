// What the session records of why a run that threw ended: the error's name, its HTTP status when the
// provider answered with one (the SDK's APICallError), and its message — "AI_APICallError (HTTP 500):
// <the message from the provider's error body>", "AbortError: This operation was aborted". An abort
// reason of the caller's own (`controller.abort("stop")`) is its text. The harness makes it one
// printable line of at most 300 chars before it is stored (endReason): the message may be a whole
// error body.

export function reasonOfError(error: unknown): string {
  // close() must record the end whatever was thrown: a getter or toString that throws included.
  try {
    return describe(error);
  } catch {
    return `a thrown ${typeof error} that cannot be shown`;
  }
}

function describe(error: unknown): string {
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    const { name, message, statusCode } = error as { name?: unknown; message: string; statusCode?: unknown };
    const label = `${typeof name === "string" && name !== "" ? name : "Error"}${typeof statusCode === "number" ? ` (HTTP ${statusCode})` : ""}`;
    return message === "" ? label : `${label}: ${message}`;
  }
  return typeof error === "bigint" ? String(error) : (JSON.stringify(error) ?? String(error));
}
