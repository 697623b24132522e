// prepareHistory: the one choke point every history passes through before a model call, in the
// order pairing (then ids made unique where the provider needs it), budget, microcompact —
// then the pairing invariant is checked again on the final list (repairs must run after every edit,
// not once: the lesson of every "tool_use without tool_result" 400 in other agents' issue trackers), and, as a
// debug assertion, every rule of the provider API. Results that pairing drops are archived first, so
// even a result that lost its call (or came late) can be read back.
import type { Format } from "./adapters/index.js";
import type { ArchiveStore } from "./archive-store.js";
import { enforceToolResultBudget, type BudgetReport } from "./budget.js";
import { contextConfigFromEnv, type ContextConfig } from "./config.js";
import { ConfigError, PairingInvariantError, ProviderRuleError } from "./errors.js";
import { resolveExternalCalls } from "./external-calls.js";
import { rewriteCollidingIds, type IdRewrite } from "./id-collisions.js";
import { imageInfo } from "./image-info.js";
import type { Message } from "./messages.js";
import { textOf } from "./messages.js";
import { applyMicrocompact, type MicrocompactReport } from "./microcompact.js";
import { ensureToolResultPairing, validatePairing, type PairingReport } from "./pairing.js";
import { validateForProvider, type ProviderProblem, type ProviderRuleOptions } from "./provider-rules.js";
import type { Workspace } from "./workspace.js";

export interface PrepareOptions {
  /** Supplies the results directory and the archive. */
  readonly workspace?: Workspace;
  /**
   * Without a workspace: where cut text is archived (required), and optionally where budget overflow
   * files go (a directory given here is not bounded; a workspace's results are, by its archive limits).
   */
  readonly archive?: ArchiveStore;
  readonly resultsDir?: string;
  /** Overrides; the rest comes from the environment (SPOOL_* variables) or the defaults. */
  readonly config?: Partial<ContextConfig>;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly toolCaps?: Readonly<Record<string, number>>;
  readonly preserveTools?: readonly string[];
  readonly turn?: number;
  /** See MicrocompactOptions.minSavedChars. */
  readonly minSavedChars?: number;
  /**
   * The provider format the history will be sent in. Tool call ids that repeat across turns are
   * renamed for Anthropic and the AI SDK (which may send to Anthropic), and when the format is not
   * given (valid for every provider); OpenAI Chat and Responses accept reused ids and keep them.
   */
  readonly format?: Format;
  /**
   * Name saved files in previews and stubs by absolute path instead of relative to the workspace —
   * for a model whose `read` resolves relative paths elsewhere (the agent surfaces' read resolves
   * them against the agent's cwd). Previews stay byte-identical across requests, since a session's
   * directory is fixed for the session; relative names are only needed to be stable across machines.
   */
  readonly absolutePaths?: boolean;
  /**
   * Debug assertion: check the output against every rule of the provider API (validateForProvider;
   * every format when `format` is not given) and throw ProviderRuleError on a problem spool should
   * have repaired or must not have caused. Default: SPOOL_DEBUG_CONTEXT=1 in `env` or the process
   * environment (the test suite sets it, so every prepareHistory in a test is checked).
   */
  readonly assertValid?: boolean;
  /**
   * Calls may live with the provider, outside the history (OpenAI Responses with
   * `previous_response_id`, `conversation` or `item_reference`; `continuesServerState(body)` says so):
   * a result whose id no call before it made is kept in place (and budgeted), not removed as an orphan.
   * Not given: true when the history holds an `item_reference`, or, with `format: "openai-responses"`,
   * results but not one call (the turn of a request on stored state); false otherwise (a history with
   * calls of its own is whole, and no other API keeps calls).
   */
  readonly externalCalls?: boolean;
  /** The consumer's recall gives an archived image back (RecallOptions.images): old images' stubs say so. */
  readonly imagesRecallable?: boolean;
}

export interface PrepareReport {
  readonly pairing: PairingReport;
  readonly budget: BudgetReport;
  readonly microcompact: MicrocompactReport;
  /** Archive keys of the results pairing removed (orphans, duplicates, late results). */
  readonly orphanKeys: readonly string[];
  /**
   * Tool call ids renamed because an earlier call used them (call and result together): by pairing, a
   * call repeating an id of its own message (every format); then, for Anthropic, the AI SDK or no
   * format, a call reusing an id of an earlier turn. `index` is the assistant message in the output.
   */
  readonly idsRewritten: readonly IdRewrite[];
  /**
   * Characters of tool results (and agent feedback) before and after, measured as budgets measure
   * them (textOf: text parts joined by "\n"), and how many such messages there were.
   */
  readonly charsBefore: number;
  readonly charsAfter: number;
  readonly resultsBefore: number;
  readonly resultsAfter: number;
  /** Characters of the inline images in tool results (base64, or the whole data: URL) before and after: what they add to a request. */
  readonly imageCharsBefore: number;
  readonly imageCharsAfter: number;
  readonly filesSaved: readonly string[];
  readonly keysArchived: readonly string[];
  readonly changed: boolean;
}

export function prepareHistory(messages: readonly Message[], options: PrepareOptions = {}): { messages: readonly Message[]; report: PrepareReport } {
  // An option given in config is not read from the environment: a bad variable it overrides is no error.
  const config: ContextConfig = contextConfigFromEnv(options.env ?? process.env, options.config);
  const archive = options.archive ?? options.workspace?.archive;
  // A workspace's results are bounded by its archive limits; a directory given on its own is not.
  const results = options.resultsDir === undefined ? options.workspace?.results : undefined;
  const resultsDir = options.resultsDir;
  // Never lossy: microcompaction needs an archive to put a recall marker in every stub.
  if (archive === undefined) {
    throw new ConfigError(
      "workspace",
      "prepareHistory needs somewhere to keep the text it cuts: pass { workspace } (or { archive }, with { resultsDir } if you want overflow files).",
    );
  }

  const externalCalls = resolveExternalCalls(messages, options.externalCalls, options.format);
  const pairingOptions = { externalCalls };
  const paired = ensureToolResultPairing(messages, pairingOptions);
  const orphanKeys: string[] = [];
  const archiveErrors: string[] = [];
  for (const removed of paired.report.removedResults) {
    const text = textOf(removed);
    if (text === "") continue;
    try {
      const key = archive.put(text);
      if (!orphanKeys.includes(key)) orphanKeys.push(key);
    } catch (err) {
      // still reported by id in the pairing report; a late result's marker would not resolve, so say so
      archiveErrors.push(`removed result ${removed.toolCallId} could not be archived (${(err as Error).message})`);
    }
  }
  const unique =
    options.format === "openai-chat" || options.format === "openai-responses"
      ? { messages: paired.messages, rewrites: [] }
      : rewriteCollidingIds(paired.messages);

  const budgetOptions: Parameters<typeof enforceToolResultBudget>[1] = {
    maxResultChars: config.maxResultChars,
    turnBudgetChars: config.turnBudgetChars,
    ...(options.toolCaps !== undefined ? { toolCaps: options.toolCaps } : {}),
    ...(results !== undefined ? { results } : resultsDir !== undefined ? { resultsDir } : {}),
    ...(options.workspace !== undefined && options.absolutePaths !== true ? { workspaceDir: options.workspace.dir } : {}),
    archive,
    ...(externalCalls ? { externalCalls: true } : {}),
  };
  const budgeted = enforceToolResultBudget(unique.messages, budgetOptions);

  const microOptions: Parameters<typeof applyMicrocompact>[1] = {
    truncateTurns: config.truncateTurns,
    summarizeTurns: config.summarizeTurns,
    headChars: config.microHeadChars,
    tailChars: config.microTailChars,
    minContent: config.minContent,
    summarizeMinChars: config.summarizeMinChars,
    inputMaxChars: config.inputMaxChars,
    archive,
    ...(options.turn !== undefined ? { turn: options.turn } : {}),
    ...(options.preserveTools !== undefined ? { preserveTools: options.preserveTools } : {}),
    ...(options.minSavedChars !== undefined ? { minSavedChars: options.minSavedChars } : {}),
    ...(options.imagesRecallable === true ? { imagesRecallable: true } : {}),
  };
  const compacted = applyMicrocompact(budgeted.messages, microOptions);

  const problems = validatePairing(compacted.messages, pairingOptions);
  if (problems.length > 0) throw new PairingInvariantError(problems);
  // the debug switch is read from the process too: callers pass `env` to pin budgets, not to turn checks off
  if (options.assertValid ?? (options.env?.["SPOOL_DEBUG_CONTEXT"] ?? process.env["SPOOL_DEBUG_CONTEXT"]) === "1") {
    assertProviderRules(messages, compacted.messages, options.format, pairingOptions);
  }

  const keysArchived = [...orphanKeys];
  for (const key of [...budgeted.report.keysSaved, ...compacted.report.keysArchived]) if (!keysArchived.includes(key)) keysArchived.push(key);
  return {
    messages: compacted.messages,
    report: {
      pairing: paired.report,
      budget: archiveErrors.length > 0 ? { ...budgeted.report, errors: [...archiveErrors, ...budgeted.report.errors] } : budgeted.report,
      microcompact: compacted.report,
      orphanKeys,
      idsRewritten: paired.report.callIdsRenamed.length > 0 ? [...paired.report.callIdsRenamed, ...unique.rewrites] : unique.rewrites,
      charsBefore: resultChars(messages),
      charsAfter: resultChars(compacted.messages),
      resultsBefore: resultCount(messages),
      resultsAfter: resultCount(compacted.messages),
      imageCharsBefore: imageChars(messages),
      imageCharsAfter: imageChars(compacted.messages),
      filesSaved: budgeted.report.filesSaved,
      keysArchived,
      changed: compacted.messages !== messages,
    },
  };
}

function isResult(m: Message): boolean {
  return m.role === "tool" || (m.role === "user" && m.agentFeedback === true);
}

function resultChars(messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) if (isResult(m)) total += textOf(m).length;
  return total;
}

function imageChars(messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) {
    if (m.role !== "tool") continue;
    for (const part of m.content) if (part.type === "image") total += imageInfo(part)?.payloadChars ?? 0;
  }
  return total;
}

function resultCount(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) if (isResult(m)) n++;
  return n;
}

/**
 * Pairing, id and order rules must hold on the output whatever the input was (spool repairs them);
 * role alternation only must not get worse (a caller's own consecutive user messages are accepted by
 * Anthropic, which merges them, and spool leaves them as they are).
 */
function assertProviderRules(input: readonly Message[], output: readonly Message[], format: Format | undefined, rules: ProviderRuleOptions): void {
  // results answering calls the provider keeps exist only in OpenAI Responses
  const formats: readonly Format[] =
    format !== undefined ? [format] : rules.externalCalls === true ? ["openai-responses"] : ["anthropic", "openai-chat", "openai-responses", "ai-sdk"];
  for (const f of formats) {
    const after = validateForProvider(output, f, rules);
    if (after.length === 0) continue;
    const alternationBefore = validateForProvider(input, f, rules).filter((p) => p.rule === "roles_alternate").length;
    const alternationAfter = after.filter((p) => p.rule === "roles_alternate").length;
    const bad: ProviderProblem[] = after.filter((p) => p.rule !== "roles_alternate");
    if (bad.length > 0 || alternationAfter > alternationBefore) throw new ProviderRuleError(f, bad.length > 0 ? bad : after);
  }
}
