// A port the user named that another program holds (`serve --port`, `run --serve=PORT`, `mcp --http`,
// `mcp --serve=PORT`): one line saying which port and what to do instead, exit 2, and no session made
// for it. `checkPortFree` looks before a command records anything; `portInUse` turns the listen's own
// failure (a program that took the port since) into the same line.
import { createServer } from "node:net";
import { UsageError } from "./usage-error.js";

function inUse(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === "EADDRINUSE" || code === "SPOOL_WIRE_PORT_IN_USE";
}

function inUseError(port: number, advice: string, cause: unknown): UsageError {
  return new UsageError(`port ${port} on 127.0.0.1 is already in use by another program; ${advice}`, { cause, help: false });
}

/** `err` as the one-line usage error when it says the port is taken; otherwise `err` itself. */
export function portInUse(err: unknown, port: number | undefined, advice: string): unknown {
  return inUse(err) && port !== undefined ? inUseError(port, advice, err) : err;
}

/** Refuses a port (not 0, any free one) that cannot be listened on now, as `portInUse` says it. */
export async function checkPortFree(port: number | undefined, advice: string): Promise<void> {
  if (port === undefined || port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen(port, "127.0.0.1", () => resolve());
    });
  } catch (err) {
    throw portInUse(err, port, advice);
  } finally {
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
}
