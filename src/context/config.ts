// Configuration from the environment, with the defaults below. Unlike chatcli (which silently fell
// back to the default on a bad value), an invalid value is an error naming the variable: a typo in
// a budget should not quietly send 10× more text to the model.
import { DEFAULT_MAX_RESULT_CHARS, DEFAULT_TURN_BUDGET_CHARS } from "./budget.js";
import { DEFAULT_ARCHIVE_MAX_BYTES, DEFAULT_ARCHIVE_TTL_MS } from "./disk-archive.js";
import { isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { ConfigError } from "./errors.js";
import {
  DEFAULT_MICRO_HEAD_CHARS,
  DEFAULT_MICRO_TAIL_CHARS,
  DEFAULT_MIN_CONTENT,
  DEFAULT_SUMMARIZE_MIN_CHARS,
  DEFAULT_SUMMARIZE_TURNS,
  DEFAULT_TRUNCATE_TURNS,
} from "./microcompact.js";

export interface ContextConfig {
  readonly maxResultChars: number;
  readonly turnBudgetChars: number;
  readonly truncateTurns: number;
  readonly summarizeTurns: number;
  readonly microHeadChars: number;
  readonly microTailChars: number;
  readonly minContent: number;
  readonly summarizeMinChars: number;
  /** 0 = unbounded. */
  readonly archiveMaxBytes: number;
  /** 0 = entries never expire. */
  readonly archiveTtlMs: number;
}

export const DEFAULT_CONTEXT_CONFIG: ContextConfig = {
  maxResultChars: DEFAULT_MAX_RESULT_CHARS,
  turnBudgetChars: DEFAULT_TURN_BUDGET_CHARS,
  truncateTurns: DEFAULT_TRUNCATE_TURNS,
  summarizeTurns: DEFAULT_SUMMARIZE_TURNS,
  microHeadChars: DEFAULT_MICRO_HEAD_CHARS,
  microTailChars: DEFAULT_MICRO_TAIL_CHARS,
  minContent: DEFAULT_MIN_CONTENT,
  summarizeMinChars: DEFAULT_SUMMARIZE_MIN_CHARS,
  archiveMaxBytes: DEFAULT_ARCHIVE_MAX_BYTES,
  archiveTtlMs: DEFAULT_ARCHIVE_TTL_MS,
};

type Env = Readonly<Record<string, string | undefined>>;

export function contextConfigFromEnv(env: Env = process.env): ContextConfig {
  const truncateTurns = positiveInt(env, "SPOOL_MICROCOMPACT_TRUNCATE_TURNS", DEFAULT_TRUNCATE_TURNS);
  const summarizeTurns = positiveInt(env, "SPOOL_MICROCOMPACT_SUMMARIZE_TURNS", DEFAULT_SUMMARIZE_TURNS);
  if (summarizeTurns < truncateTurns) {
    throw new ConfigError(
      "SPOOL_MICROCOMPACT_SUMMARIZE_TURNS",
      `is ${summarizeTurns}, below SPOOL_MICROCOMPACT_TRUNCATE_TURNS (${truncateTurns}); results are truncated before they are summarised, so set it ≥ ${truncateTurns}.`,
    );
  }
  const maxMb = env["SPOOL_ARCHIVE_MAX_MB"];
  let archiveMaxBytes = DEFAULT_ARCHIVE_MAX_BYTES;
  if (maxMb !== undefined && maxMb.trim() !== "") {
    if (!/^\s*\d+(\.\d+)?\s*$/.test(maxMb)) {
      throw new ConfigError("SPOOL_ARCHIVE_MAX_MB", `expected a number of megabytes (0 = unbounded), got ${JSON.stringify(maxMb)}.`);
    }
    archiveMaxBytes = Math.round(Number(maxMb) * 1024 * 1024);
  }
  return {
    maxResultChars: positiveInt(env, "SPOOL_TOOL_RESULT_MAX_CHARS", DEFAULT_MAX_RESULT_CHARS),
    turnBudgetChars: positiveInt(env, "SPOOL_TOOL_RESULT_BUDGET_CHARS", DEFAULT_TURN_BUDGET_CHARS),
    truncateTurns,
    summarizeTurns,
    microHeadChars: positiveInt(env, "SPOOL_MICROCOMPACT_HEAD_CHARS", DEFAULT_MICRO_HEAD_CHARS),
    microTailChars: positiveInt(env, "SPOOL_MICROCOMPACT_TAIL_CHARS", DEFAULT_MICRO_TAIL_CHARS),
    minContent: positiveInt(env, "SPOOL_MICROCOMPACT_MIN_CONTENT", DEFAULT_MIN_CONTENT),
    summarizeMinChars: positiveInt(env, "SPOOL_MICROCOMPACT_SUMMARIZE_MIN_CHARS", DEFAULT_SUMMARIZE_MIN_CHARS),
    archiveMaxBytes,
    archiveTtlMs: durationMs(env, "SPOOL_ARCHIVE_TTL", DEFAULT_ARCHIVE_TTL_MS),
  };
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const text = raw.trim().replace(/_/g, "");
  if (!/^\d+$/.test(text) || !isWholeNumberIn(Number(text), 1, Number.MAX_SAFE_INTEGER)) {
    throw new ConfigError(
      name,
      `expected ${wholeNumberRange(1, Number.MAX_SAFE_INTEGER)}, got ${JSON.stringify(raw)}. Unset it to use the default (${fallback}).`,
    );
  }
  return Number(text);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Go-style durations ("168h", "1h30m", "7d", "90s"), or "0" for no expiry. */
function durationMs(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const text = raw.trim().toLowerCase();
  if (text === "0") return 0;
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d|w))+$/.test(text)) {
    throw new ConfigError(name, `expected a duration such as "168h", "7d" or "1h30m" (or "0" for no expiry), got ${JSON.stringify(raw)}.`);
  }
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!;
  return Math.round(total);
}
