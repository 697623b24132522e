// Configuration from the environment, with the defaults below. Unlike chatcli (which silently fell
// back to the default on a bad value), an invalid value is an error naming the variable: a typo in
// a budget should not quietly send 10× more text to the model.
import { DEFAULT_MAX_RESULT_CHARS, DEFAULT_TURN_BUDGET_CHARS } from "./budget.js";
import { DEFAULT_ARCHIVE_MAX_BYTES, DEFAULT_ARCHIVE_TTL_MS } from "./disk-archive.js";
import { isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { DEFAULT_INPUT_MAX_CHARS } from "./call-inputs.js";
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
  /** Longer strings in old tool-call inputs are replaced by a recall stub. */
  readonly inputMaxChars: number;
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
  inputMaxChars: DEFAULT_INPUT_MAX_CHARS,
  archiveMaxBytes: DEFAULT_ARCHIVE_MAX_BYTES,
  archiveTtlMs: DEFAULT_ARCHIVE_TTL_MS,
};

type Env = Readonly<Record<string, string | undefined>>;

/** The variable that sets each option. */
const VARIABLES: Record<keyof ContextConfig, string> = {
  maxResultChars: "SPOOL_TOOL_RESULT_MAX_CHARS",
  turnBudgetChars: "SPOOL_TOOL_RESULT_BUDGET_CHARS",
  truncateTurns: "SPOOL_MICROCOMPACT_TRUNCATE_TURNS",
  summarizeTurns: "SPOOL_MICROCOMPACT_SUMMARIZE_TURNS",
  microHeadChars: "SPOOL_MICROCOMPACT_HEAD_CHARS",
  microTailChars: "SPOOL_MICROCOMPACT_TAIL_CHARS",
  minContent: "SPOOL_MICROCOMPACT_MIN_CONTENT",
  summarizeMinChars: "SPOOL_MICROCOMPACT_SUMMARIZE_MIN_CHARS",
  inputMaxChars: "SPOOL_MICROCOMPACT_INPUT_MAX_CHARS",
  archiveMaxBytes: "SPOOL_ARCHIVE_MAX_MB",
  archiveTtlMs: "SPOOL_ARCHIVE_TTL",
};

/**
 * The configuration from the environment, with `overrides` in place of their variables: an option
 * given explicitly is used as it is, and its variable is not read (so a bad variable does not break
 * a caller that overrides it).
 */
export function contextConfigFromEnv(env: Env = process.env, overrides: Partial<ContextConfig> = {}): ContextConfig {
  const int = (option: keyof ContextConfig, fallback: number): number => overrides[option] ?? positiveInt(env, VARIABLES[option], fallback);
  const truncateTurns = int("truncateTurns", DEFAULT_TRUNCATE_TURNS);
  const summarizeTurns = int("summarizeTurns", DEFAULT_SUMMARIZE_TURNS);
  if (overrides.truncateTurns === undefined && overrides.summarizeTurns === undefined && summarizeTurns < truncateTurns) {
    throw new ConfigError(
      "SPOOL_MICROCOMPACT_SUMMARIZE_TURNS",
      `is ${summarizeTurns}, below SPOOL_MICROCOMPACT_TRUNCATE_TURNS (${truncateTurns}); results are truncated before they are summarised, so set it ≥ ${truncateTurns}.`,
    );
  }
  return {
    maxResultChars: int("maxResultChars", DEFAULT_MAX_RESULT_CHARS),
    turnBudgetChars: int("turnBudgetChars", DEFAULT_TURN_BUDGET_CHARS),
    truncateTurns,
    summarizeTurns,
    microHeadChars: int("microHeadChars", DEFAULT_MICRO_HEAD_CHARS),
    microTailChars: int("microTailChars", DEFAULT_MICRO_TAIL_CHARS),
    minContent: int("minContent", DEFAULT_MIN_CONTENT),
    summarizeMinChars: int("summarizeMinChars", DEFAULT_SUMMARIZE_MIN_CHARS),
    inputMaxChars: int("inputMaxChars", DEFAULT_INPUT_MAX_CHARS),
    archiveMaxBytes: overrides.archiveMaxBytes ?? megabytes(env, VARIABLES.archiveMaxBytes, DEFAULT_ARCHIVE_MAX_BYTES),
    archiveTtlMs: overrides.archiveTtlMs ?? durationMs(env, VARIABLES.archiveTtlMs, DEFAULT_ARCHIVE_TTL_MS),
  };
}

/**
 * The configuration for options a caller passes (createSpool's `context`), checked as strictly as
 * the variables: every option known and a whole number in its range, summarizeTurns ≥ truncateTurns.
 * Errors name the option as `<name>.<option>`; the rest comes from the environment as above.
 */
export function contextConfigFromOptions(options: Partial<ContextConfig>, env: Env = process.env, name = "context"): ContextConfig {
  const given: Partial<Record<keyof ContextConfig, number>> = {};
  for (const [option, value] of Object.entries(options)) {
    if (!Object.hasOwn(VARIABLES, option)) {
      throw new ConfigError(`${name}.${option}`, `is not a context option; the options are ${Object.keys(VARIABLES).join(", ")}.`);
    }
    if (value === undefined) continue;
    const archive = option === "archiveMaxBytes" || option === "archiveTtlMs";
    if (!isWholeNumberIn(value, archive ? 0 : 1, Number.MAX_SAFE_INTEGER)) {
      const zero = option === "archiveMaxBytes" ? " (0 = unbounded)" : option === "archiveTtlMs" ? " of milliseconds (0 = entries never expire)" : "";
      const got = typeof value === "number" ? String(value) : JSON.stringify(value);
      throw new ConfigError(`${name}.${option}`, `expected ${wholeNumberRange(archive ? 0 : 1, Number.MAX_SAFE_INTEGER)}${zero}, got ${got}.`);
    }
    given[option as keyof ContextConfig] = value;
  }
  const config = contextConfigFromEnv(env, given);
  if (config.summarizeTurns < config.truncateTurns) {
    // One of the two was given (both from the environment were checked above): the error names it.
    const { summarizeTurns: s, truncateTurns: t } = config;
    const other = (option: "summarizeTurns" | "truncateTurns"): string =>
      given[option] !== undefined ? `${name}.${option}` : (env[VARIABLES[option]] ?? "").trim() !== "" ? VARIABLES[option] : `the default ${option}`;
    const why = "results are truncated before they are summarised";
    if (given.summarizeTurns !== undefined) {
      throw new ConfigError(`${name}.summarizeTurns`, `is ${s}, below ${other("truncateTurns")} (${t}); ${why}, so set it ≥ ${t}.`);
    }
    throw new ConfigError(
      `${name}.truncateTurns`,
      `is ${t}, above ${other("summarizeTurns")} (${s}); ${why}, so set it ≤ ${s}, or set ${name}.summarizeTurns ≥ ${t} too.`,
    );
  }
  return config;
}

function megabytes(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  if (!/^\s*\d+(\.\d+)?\s*$/.test(raw)) {
    throw new ConfigError(name, `expected a number of megabytes (0 = unbounded), got ${JSON.stringify(raw)}.`);
  }
  return Math.round(Number(raw) * 1024 * 1024);
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
