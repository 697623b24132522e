// prepareHistory: the one choke point every history passes through before a model call, in the
// order pairing, budget, microcompact — then the pairing invariant is checked again on the
// final list (repairs must run after every edit, not once: the lesson of every "tool_use without
// tool_result" 400 in other agents' issue trackers). Orphan results that pairing drops are archived first, so
// even a result that lost its call can be read back.
import type { ArchiveStore } from "./archive-store.js";
import { enforceToolResultBudget, type BudgetReport } from "./budget.js";
import { contextConfigFromEnv, type ContextConfig } from "./config.js";
import { ConfigError, PairingInvariantError } from "./errors.js";
import type { Message } from "./messages.js";
import { textOf } from "./messages.js";
import { applyMicrocompact, type MicrocompactReport } from "./microcompact.js";
import { ensureToolResultPairing, validatePairing, type PairingReport } from "./pairing.js";
import type { Workspace } from "./workspace.js";

export interface PrepareOptions {
  /** Supplies the results directory and the archive. */
  readonly workspace?: Workspace;
  /** Without a workspace: where cut text is archived (required), and optionally where budget overflow files go. */
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
}

export interface PrepareReport {
  readonly pairing: PairingReport;
  readonly budget: BudgetReport;
  readonly microcompact: MicrocompactReport;
  /** Archive keys of orphan results pairing removed. */
  readonly orphanKeys: readonly string[];
  /** Characters of tool results (and aged agent feedback) before and after. */
  readonly charsBefore: number;
  readonly charsAfter: number;
  readonly filesSaved: readonly string[];
  readonly keysArchived: readonly string[];
  readonly changed: boolean;
}

export function prepareHistory(messages: readonly Message[], options: PrepareOptions = {}): { messages: readonly Message[]; report: PrepareReport } {
  const config: ContextConfig = { ...contextConfigFromEnv(options.env ?? process.env), ...options.config };
  const archive = options.archive ?? options.workspace?.archive;
  const resultsDir = options.resultsDir ?? options.workspace?.resultsDir;
  // Never lossy: microcompaction needs an archive to put a recall marker in every stub.
  if (archive === undefined) {
    throw new ConfigError("workspace", "prepareHistory needs somewhere to keep the text it cuts: pass { workspace } (or { archive }, with { resultsDir } if you want overflow files).");
  }

  const paired = ensureToolResultPairing(messages);
  const orphanKeys: string[] = [];
  for (const removed of paired.report.removedResults) {
    const text = textOf(removed);
    if (text === "") continue;
    try {
      const key = archive.put(text);
      if (!orphanKeys.includes(key)) orphanKeys.push(key);
    } catch {
      // an orphan too big for the archive is still reported by id in the pairing report
    }
  }

  const budgetOptions: Parameters<typeof enforceToolResultBudget>[1] = {
    maxResultChars: config.maxResultChars,
    turnBudgetChars: config.turnBudgetChars,
    ...(options.toolCaps !== undefined ? { toolCaps: options.toolCaps } : {}),
    ...(resultsDir !== undefined ? { resultsDir } : {}),
    archive,
  };
  const budgeted = enforceToolResultBudget(paired.messages, budgetOptions);

  const microOptions: Parameters<typeof applyMicrocompact>[1] = {
    truncateTurns: config.truncateTurns,
    summarizeTurns: config.summarizeTurns,
    headChars: config.microHeadChars,
    tailChars: config.microTailChars,
    minContent: config.minContent,
    archive,
    ...(options.turn !== undefined ? { turn: options.turn } : {}),
    ...(options.preserveTools !== undefined ? { preserveTools: options.preserveTools } : {}),
    ...(options.minSavedChars !== undefined ? { minSavedChars: options.minSavedChars } : {}),
  };
  const compacted = applyMicrocompact(budgeted.messages, microOptions);

  const problems = validatePairing(compacted.messages);
  if (problems.length > 0) throw new PairingInvariantError(problems);

  const keysArchived = [...orphanKeys];
  for (const key of [...budgeted.report.keysSaved, ...compacted.report.keysArchived]) if (!keysArchived.includes(key)) keysArchived.push(key);
  return {
    messages: compacted.messages,
    report: {
      pairing: paired.report,
      budget: budgeted.report,
      microcompact: compacted.report,
      orphanKeys,
      charsBefore: resultChars(messages),
      charsAfter: resultChars(compacted.messages),
      filesSaved: budgeted.report.filesSaved,
      keysArchived,
      changed: compacted.messages !== messages,
    },
  };
}

function resultChars(messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) {
    if (m.role !== "tool" && !(m.role === "user" && m.agentFeedback === true)) continue;
    for (const part of m.content) if (part.type === "text") total += part.text.length;
  }
  return total;
}

