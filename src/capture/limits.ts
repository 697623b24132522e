// Defaults and validation for capture limits.
import { isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { InvalidOptionsError } from "./errors.js";
import type { CaptureLimits } from "./types.js";

export const DEFAULT_MAX_BYTES = 50 * 1024;
export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024;
/**
 * The largest window a caller may ask for (--max-bytes / --max-lines, createSpool's limits): the window
 * is held in memory several times over while it fills, and no model reads more.
 */
export const MAX_WINDOW_BYTES = 64 * 1024 * 1024;
export const MAX_WINDOW_LINES = 1_000_000;
/** The open line is held whole in memory, so its cap must itself be bounded. */
const MAX_LINE_BYTES_CEILING = 1024 * 1024;

function positiveInteger(name: string, v: unknown): number {
  if (!isWholeNumberIn(v, 1)) throw new InvalidOptionsError(`${name} must be ${wholeNumberRange(1)}, got ${JSON.stringify(v)}`);
  return v;
}

export function resolveLimits(partial: Partial<CaptureLimits> = {}): CaptureLimits {
  const maxBytes = positiveInteger("maxBytes", partial.maxBytes ?? DEFAULT_MAX_BYTES);
  const maxLines = positiveInteger("maxLines", partial.maxLines ?? DEFAULT_MAX_LINES);
  const retain = partial.retain ?? "tail";
  if (retain !== "head" && retain !== "tail") {
    throw new InvalidOptionsError(`retain must be "head" or "tail", got ${JSON.stringify(retain)}`);
  }
  const maxLineBytes = positiveInteger("maxLineBytes", partial.maxLineBytes ?? Math.min(DEFAULT_MAX_LINE_BYTES, maxBytes));
  if (maxLineBytes > MAX_LINE_BYTES_CEILING) {
    throw new InvalidOptionsError(`maxLineBytes must be at most ${MAX_LINE_BYTES_CEILING}, got ${maxLineBytes}`);
  }
  return { maxBytes, maxLines, retain, maxLineBytes };
}
