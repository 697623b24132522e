// createSpool's options, checked when the spool is created. Left to the tools, a bad value failed
// only later, on every model call, as tool text the model reads and the developer does not — and in
// the harness's units (a timeout of -1 s reported as "timeoutMs … got -1000").
import { statSync } from "node:fs";
import { isWholeNumberIn, SpoolError, wholeNumberRange } from "../errors/index.js";

/** A createSpool option that cannot work; `option` names it as the caller wrote it (e.g. "limits.maxBytes"). */
export class SpoolOptionError extends SpoolError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super("SPOOL_AI_SDK_OPTION", `createSpool: ${option} ${message}`);
  }
}

// Node's timers hold at most 2^31-1 ms; the bash tool refuses a longer timeout.
const MAX_TIMEOUT_SECONDS = 2_147_483;

export interface CheckedOptions {
  readonly cwd?: unknown;
  readonly limits?: unknown;
  readonly timeout?: unknown;
  readonly context?: unknown;
}

/** Throws SpoolOptionError for the first option of `options` that cannot work. */
export function checkSpoolOptions(options: CheckedOptions): void {
  const { timeout, limits, cwd, context } = options;
  if (timeout !== undefined && !(typeof timeout === "number" && timeout > 0 && timeout <= MAX_TIMEOUT_SECONDS)) {
    throw new SpoolOptionError("timeout", `must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, got ${show(timeout)}.`);
  }
  if (limits !== undefined) {
    if (!isObject(limits))
      throw new SpoolOptionError("limits", `must be an object { maxBytes, maxLines, maxSpillBytes, minFreeBytes, retain }, got ${show(limits)}.`);
    for (const [name, value] of Object.entries(limits)) {
      if (name === "maxBytes" || name === "maxLines" || name === "maxSpillBytes" || name === "minFreeBytes") {
        const min = name === "minFreeBytes" ? 0 : 1;
        if (value !== undefined && !isWholeNumberIn(value, min))
          throw new SpoolOptionError(`limits.${name}`, `must be ${wholeNumberRange(min)}, got ${show(value)}.`);
      } else if (name === "retain") {
        if (value !== undefined && value !== "head" && value !== "tail")
          throw new SpoolOptionError("limits.retain", `must be "head" or "tail", got ${show(value)}.`);
      } else throw new SpoolOptionError(`limits.${name}`, "is not a limit; the limits are maxBytes, maxLines, maxSpillBytes, minFreeBytes and retain.");
    }
  }
  if (cwd !== undefined) {
    if (typeof cwd !== "string" || cwd === "") throw new SpoolOptionError("cwd", `must be a directory path, got ${show(cwd)}.`);
    let isDir = false;
    try {
      isDir = statSync(cwd).isDirectory();
    } catch {
      throw new SpoolOptionError("cwd", `${JSON.stringify(cwd)} does not exist; create it first or pass an existing directory.`);
    }
    if (!isDir) throw new SpoolOptionError("cwd", `${JSON.stringify(cwd)} is not a directory; pass the directory commands should run in.`);
  }
  if (context !== undefined && !isObject(context)) throw new SpoolOptionError("context", `must be an object of context budgets, got ${show(context)}.`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  return typeof v === "number" || v === undefined ? String(v) : JSON.stringify(v);
}
