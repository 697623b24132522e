// The one command helper: every `spool <cmd>` is declared here as options + a run function, and this
// file owns argument parsing (node:util parseArgs, strict), `--help`, turning bad arguments into a
// UsageError, and reporting a failed command. Exit codes and the `spool <cmd>:` prefix live in exit.ts,
// in one place for all commands.
import { parseArgs } from "node:util";
import { countOf, isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { errorLine, exitCodeFor } from "./exit.js";
import { parseSize } from "./parse-size.js";
import { UsageError } from "./usage-error.js";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** Shown in --help after the flag: `--max-bytes N`. */
  readonly value?: string;
  readonly help: string;
  /** `--serve` or `--serve=PORT`: a bare flag parses as the empty string. */
  readonly optionalValue?: boolean;
  /** Refuses a bad value (a UsageError) before the command runs, the same way in every command that takes the option. */
  readonly check?: (value: string, flag: string) => void;
}

export type OptionValues<O extends Record<string, OptionSpec>> = {
  readonly [K in keyof O]?: O[K]["type"] extends "boolean" ? boolean : string;
};

export interface CommandSpec<O extends Record<string, OptionSpec>> {
  readonly name: string;
  readonly summary: string;
  /** After `Usage: spool <name> `, e.g. `[options] -- COMMAND...`. */
  readonly synopsis: string;
  readonly description: string;
  readonly options: O;
  /** How many positionals the command takes (default none). */
  readonly positionals?: { readonly min: number; readonly max: number; readonly name: string };
  /**
   * Options end at the first positional, as for `timeout`, `env` or `nice`: `spool run grep -q x f`
   * runs `grep -q x f` (its `-q` was taken as spool's --quiet and grep ran without it).
   */
  readonly optionsEndAtFirstPositional?: boolean;
  run(values: OptionValues<O>, positionals: readonly string[]): Promise<number>;
}

export interface Command {
  readonly name: string;
  readonly summary: string;
  /** The exit code; a failure is reported on stderr (`spool <name>: …`) and never thrown. */
  run(argv: readonly string[]): Promise<number>;
}

const HELP: OptionSpec = { type: "boolean", short: "h", help: "show this help" };

export function usage(spec: CommandSpec<Record<string, OptionSpec>>): string {
  const all = { ...spec.options, help: HELP };
  const flags = Object.entries(all).map(([name, o]) => {
    const value = o.value ? (o.optionalValue ? `[=${o.value}]` : ` ${o.value}`) : "";
    return [`${o.short ? `-${o.short}, ` : "    "}--${name}${value}`, o.help] as const;
  });
  const width = Math.max(...flags.map(([f]) => f.length));
  return [
    `Usage: spool ${spec.name} ${spec.synopsis}`,
    "",
    spec.description,
    "",
    "Options:",
    ...flags.map(([f, h]) => `  ${f.padEnd(width)}  ${h.replace(/\n/g, `\n  ${" ".repeat(width)}  `)}`),
  ].join("\n");
}

/** Puts a `--` before the first positional (after any value its option takes), unless one comes first. */
function endOptionsAtFirstPositional(argv: readonly string[], options: Record<string, OptionSpec>): string[] {
  const takesValue = new Set(
    Object.entries(options).flatMap(([n, o]) => (o.type === "string" && !o.optionalValue ? [`--${n}`, ...(o.short ? [`-${o.short}`] : [])] : [])),
  );
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") break;
    if (takesValue.has(a)) i++;
    else if (a === "-" || !a.startsWith("-")) return [...argv.slice(0, i), "--", ...argv.slice(i)];
  }
  return [...argv];
}

/**
 * Refuses `--serve 8080`: a flag whose value is optional takes it after "=" only, so parseArgs read
 * 8080 as the first positional — for `spool run`, the command, which then ran as "8080". A number after
 * such a flag is taken as a misplaced value; `--serve -- 8080` still passes an argument "8080".
 */
function refuseSpacedOptionalValue(argv: readonly string[], options: Record<string, OptionSpec>, optionsEndAtFirstPositional: boolean): void {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return;
    const o = a.startsWith("--") ? options[a.slice(2)] : undefined;
    if (o?.type === "string" && !o.optionalValue) i++;
    else if (o?.optionalValue && /^\d+$/.test(argv[i + 1] ?? "")) {
      const next = argv[i + 1]!;
      const what = (o.value ?? "value").toLowerCase();
      const command = optionsEndAtFirstPositional ? `; to run a command named "${next}", write ${a} -- ${next}` : "";
      throw new UsageError(`${a} takes its ${what} after "=": write ${a}=${next} (a bare ${a} picks any free ${what})${command}`);
    } else if (optionsEndAtFirstPositional && (a === "-" || !a.startsWith("-"))) return;
  }
}

/** Rewrites a bare `--flag` that takes an optional value to `--flag=`, up to `--`. */
function expandOptionalValues(argv: readonly string[], options: Record<string, OptionSpec>): string[] {
  const optional = new Set(
    Object.entries(options)
      .filter(([, o]) => o.optionalValue)
      .map(([n]) => `--${n}`),
  );
  const end = argv.indexOf("--");
  return argv.map((a, i) => (optional.has(a) && (end < 0 || i < end) ? `${a}=` : a));
}

export function defineCommand<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    async run(argv) {
      // Reported here, inside the command's own bundle (dist/bin/<name>-<hash>.cjs): exit.ts tells errors
      // apart with instanceof, and only this bundle's copies of the error classes match what it throws.
      try {
        return await parseAndRun(spec, argv);
      } catch (err) {
        process.stderr.write(errorLine(spec.name, err));
        return exitCodeFor(err);
      }
    },
  };
}

async function parseAndRun<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>, argv: readonly string[]): Promise<number> {
  const options = { ...spec.options, help: HELP } as Record<string, OptionSpec>;
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  refuseSpacedOptionalValue(argv, options, spec.optionsEndAtFirstPositional === true);
  try {
    parsed = parseArgs({
      args: expandOptionalValues(spec.optionsEndAtFirstPositional ? endOptionsAtFirstPositional(argv, options) : argv, options),
      strict: true,
      allowPositionals: true,
      options: Object.fromEntries(Object.entries(options).map(([n, o]) => [n, { type: o.type, ...(o.short ? { short: o.short } : {}) }])),
    }) as typeof parsed;
  } catch (err) {
    throw new UsageError(parseArgsMessage((err as Error).message), { cause: err });
  }
  if (parsed.values.help) {
    process.stdout.write(usage(spec as CommandSpec<Record<string, OptionSpec>>) + "\n");
    return 0;
  }
  const p = spec.positionals ?? { min: 0, max: 0, name: "" };
  const n = parsed.positionals.length;
  if (n < p.min) throw new UsageError(`missing ${p.name}`);
  if (n > p.max) throw new UsageError(p.max === 0 ? `unexpected argument "${parsed.positionals[0]}"` : `too many arguments: expected ${p.name}`);
  for (const [name, o] of Object.entries(options)) {
    const value = parsed.values[name];
    if (o.check && typeof value === "string") o.check(value, `--${name}`);
  }
  return spec.run(parsed.values as OptionValues<O>, parsed.positionals);
}

/**
 * parseArgs explains itself over several lines ("Unknown option '--x'. To specify a positional
 * argument starting with a '-', …"); a user gets the first sentence, or one line for a flag whose
 * value looks like a flag (`--timeout -1`).
 */
function parseArgsMessage(message: string): string {
  const ambiguous = /^Option '?([^\s']+)'? argument is ambiguous/.exec(message);
  if (ambiguous) return `${ambiguous[1]} needs a value; for one that starts with "-", write ${ambiguous[1]}=VALUE`;
  return message
    .split("\n")[0]!
    .replace(/\. To specify a positional.*$/, "")
    .replace(/'/g, "");
}

/** A whole number within [min, max]; the message says the range in words. */
export function intOption(flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!isWholeNumberIn(n, min, max)) throw new UsageError(`--${flag} must be ${wholeNumberRange(min, max)}, got ${JSON.stringify(raw)}`);
  return n;
}

/** A byte size within [min, max] bytes: a whole number or one with a unit (64K, 512MB, 1.5GiB; K = 1024). */
export function sizeOption(flag: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = parseSize(raw);
  if (n === undefined || !isWholeNumberIn(n, min, max)) {
    const range =
      max >= Number.MAX_SAFE_INTEGER
        ? `of ${countOf(min, "byte", "bytes", min.toLocaleString("en-US"))} or more`
        : `from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")} bytes`;
    throw new UsageError(`--${flag} must be a size ${range} (a number, or one with K, M, G or T: 64K, 512MB, 1.5GiB; K = 1024), got ${JSON.stringify(raw)}`);
  }
  return n;
}
