// How CLI commands report failure: a usage problem (exit 2) versus a failed operation (exit 1).
export class UsageError extends Error {
  readonly code = "SPOOL_CLI_USAGE";
}

export function parseCount(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} expects a whole number ≥ ${min}, got ${JSON.stringify(value)}.`);
  return Number(value);
}

/** `spool recall KEY | head` closes stdout early; that is the reader's choice, not an error worth a stack trace. */
export function exitQuietlyOnClosedPipe(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
}
