// Errors of the context layer. Each has a stable `code` and a message that says what was wrong and
// what to do about it, because these surface in CLI output and in tool results the model reads.
import { SpoolError } from "../errors/index.js";

export class ContextError extends SpoolError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/** Input that is not a conversation in the named (or any known) provider format. */
export class FormatError extends ContextError {
  constructor(
    message: string,
    readonly at: string = "",
    code = "SPOOL_CONTEXT_FORMAT",
  ) {
    super(code, at ? `${message} (at ${at})` : message);
  }
}

/** A bad configuration value: an environment variable or an option. */
export class ConfigError extends ContextError {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super("SPOOL_CONTEXT_CONFIG", `${variable}: ${message}`);
  }
}

export class ArchiveError extends ContextError {}

export class RecallError extends ContextError {}

export class WorkspaceError extends ContextError {}

/** The pipeline produced a history that still breaks the pairing invariant — a bug in spool, never the caller's. */
export class PairingInvariantError extends ContextError {
  constructor(readonly problems: readonly unknown[]) {
    super(
      "SPOOL_CONTEXT_PAIRING_INVARIANT",
      `prepareHistory produced a history whose tool calls and results do not pair (${problems.length} problem(s): ` +
        `${JSON.stringify(problems.slice(0, 3))}). This is a bug in spool; please report it with the input transcript.`,
    );
  }
}

/** `--format X` (or a caller's format) names one format while the conversation is plainly in another. */
export class FormatMismatchError extends FormatError {
  constructor(
    readonly expected: string,
    readonly detected: string,
  ) {
    super(
      `the conversation is in ${detected} format, not ${expected}: nothing was changed. Use --format ${detected}, or --format auto to detect it.`,
      "",
      "SPOOL_CONTEXT_FORMAT_MISMATCH",
    );
  }
}

/** prepareHistory's debug assertion: the output breaks a rule of the provider API that the input did not break — a bug in spool. */
export class ProviderRuleError extends ContextError {
  constructor(
    readonly format: string,
    readonly problems: readonly { rule: string; message: string }[],
  ) {
    super(
      "SPOOL_CONTEXT_PROVIDER_RULE",
      `prepareHistory produced a history the ${format} API would reject (${problems.length} problem(s): ${problems
        .slice(0, 3)
        .map((p) => `${p.rule}: ${p.message}`)
        .join("; ")}). This is a bug in spool; please report it with the input transcript.`,
    );
  }
}
