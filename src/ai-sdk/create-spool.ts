// createSpool: one spool session for an AI SDK agent — AI SDK tools for every harness agent tool
// (bash, read, recall, process_output/write/kill/list), a prepareStep over the same workspace, and close(). The session lives in
// `<root>/sessions/<id>/` like any other, so `spool sessions`, `spool inspect` and `spool serve` show
// the agent's calls live and afterwards.
import { resolve } from "node:path";
import type { Store, RepoBackend } from "../store/index.js";
import {
  contextConfigFromOptions,
  DEFAULT_RECALL_MAX_CHARS,
  ConfigError,
  MIN_RECALL_MAX_CHARS,
  type ContextConfig,
  type PrepareReport,
  type Workspace,
} from "../context/index.js";
import {
  openAgentSession,
  type AgentSession,
  type BashArgs,
  type ProcessKillArgs,
  type ProcessOutputArgs,
  type ProcessWriteArgs,
  type ReadArgs,
  type RecallArgs,
} from "../harness/index.js";
import type { Tool } from "ai";
import { checkSpoolOptions } from "./options.js";
import { createPrepareStep, type SpoolPrepareStep } from "./prepare-step.js";
import type { SpoolToolOutput } from "./tool-output.js";
import { reasonOfError } from "./reason-of-error.js";
import { statusOfError } from "./status-of-error.js";
import { toAiTool, type SpoolTool } from "./tools.js";

export interface CreateSpoolOptions {
  /**
   * The spool directory; the session goes to `<root>/sessions/<id>/` (default `.spool`). A relative
   * root is resolved against the process's working directory, not `cwd`.
   */
  readonly root?: string;
  readonly backend?: RepoBackend;
  /** backend "postgres": the database URL (default: the PG* environment variables). */
  readonly url?: string;
  /**
   * Continue this session under `root` — created when it does not exist yet, as `spool run --session`
   * does — so one conversation served over many requests (or restarts) is one session, its calls
   * recorded beside the earlier ones, its first start kept. Default: a new session, whose id is `sessionId`.
   */
  readonly session?: string;
  /**
   * Working directory of commands and of relative read paths (default: the process's). Resolved once,
   * when createSpool is called: a later process.chdir moves neither the commands nor the reads.
   */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * bash's window (defaults: tail, 50 KiB, 2000 lines; at most 64 MiB and 1,000,000 lines), and
   * `maxSpillBytes`: what a command may print before it is stopped (default: no limit).
   */
  readonly limits?: {
    readonly maxBytes?: number;
    readonly maxLines?: number;
    readonly maxSpillBytes?: number;
    /** Free space a command's spill must leave on its disk (default 256 MiB; 0 turns the check off). */
    readonly minFreeBytes?: number;
    readonly retain?: "head" | "tail";
  };
  /** Seconds, for bash calls that give no timeout (default: none). */
  readonly timeout?: number;
  /**
   * Context budgets for prepareStep and the session archive's limits (archiveMaxBytes, archiveTtlMs:
   * they bound archive/ and the saved results in results/, each); the rest from SPOOL_* environment
   * variables or the defaults. The archive limits do not apply to a `workspace` passed in.
   */
  readonly context?: Partial<ContextConfig>;
  /** Shown in `spool sessions` (default "ai-sdk"). */
  readonly label?: string;
  /** Use this store and workspace instead of creating a session (nothing is recorded or closed for you). */
  readonly store?: Store;
  readonly workspace?: Workspace;
  /** Each prepareStep's report: chars before and after, keys archived. */
  readonly onPrepare?: (report: PrepareReport, stepNumber: number | undefined) => void;
}

export interface SpoolTools {
  readonly bash: Tool<BashArgs, SpoolToolOutput>;
  readonly read: Tool<ReadArgs, SpoolToolOutput>;
  readonly recall: Tool<RecallArgs, SpoolToolOutput>;
  readonly process_output: Tool<ProcessOutputArgs, SpoolToolOutput>;
  readonly process_write: Tool<ProcessWriteArgs, SpoolToolOutput>;
  readonly process_kill: Tool<ProcessKillArgs, SpoolToolOutput>;
  readonly process_list: Tool<Record<string, never>, SpoolToolOutput>;
  readonly [name: string]: SpoolTool;
}

export interface Spool {
  readonly tools: SpoolTools;
  readonly prepareStep: SpoolPrepareStep;
  readonly sessionId: string;
  /** The session directory (spill/, results/, archive/ and the log). */
  readonly sessionDir: string;
  readonly session: AgentSession;
  /**
   * Aborts running calls, ends background processes, then records how the session ended. spool does
   * not see the model calls, so it learns that the run failed only from you: pass what generateText
   * threw (or streamText's onError error, or the abort reason of onAbort) as `{ error }`, and the
   * session is recorded as "failed" — "interrupted" for an abort, "timed out" for the SDK's `timeout` —
   * with the error's name and message as its reason. Without an error it is "succeeded"; "interrupted"
   * when calls were still running, or when the run's `abortSignal` ended a call (a one-step
   * generateText aborted while its tool ran returns normally). Idempotent: the first call decides.
   */
  close(options?: { readonly error?: unknown }): Promise<void>;
}

export async function createSpool(options: CreateSpoolOptions = {}): Promise<Spool> {
  // Checked before the session is created: a bad option throws here, once, naming the option —
  // SpoolOptionError (SPOOL_AI_SDK_OPTION), or ConfigError (SPOOL_CONTEXT_CONFIG) for `context`.
  checkSpoolOptions(options);
  // A relative cwd was resolved again by every call, against wherever the process was by then (after
  // a chdir, every command failed on a missing directory), and recorded as given ("sub").
  const cwd = resolve(options.cwd ?? process.cwd());
  const config: ContextConfig = contextConfigFromOptions(options.context ?? {});
  if (config.turnBudgetChars < MIN_RECALL_MAX_CHARS) {
    // A recall answer must fit in one turn's budget, or prepareStep cuts it into a preview that names
    // the same text again; answers page in parts of at least MIN_RECALL_MAX_CHARS.
    throw new ConfigError(
      options.context?.turnBudgetChars !== undefined ? "context.turnBudgetChars" : "SPOOL_TOOL_RESULT_BUDGET_CHARS",
      `is ${config.turnBudgetChars}, below ${MIN_RECALL_MAX_CHARS}: a recall answer (at least ${MIN_RECALL_MAX_CHARS} chars a part) must fit in one turn, so set it ≥ ${MIN_RECALL_MAX_CHARS}.`,
    );
  }
  const session = await openAgentSession({
    label: options.label ?? "ai-sdk",
    ...(options.root !== undefined ? { root: options.root } : {}),
    ...(options.backend !== undefined ? { backend: options.backend } : {}),
    ...(options.url !== undefined ? { url: options.url } : {}),
    ...(options.session !== undefined ? { sessionId: options.session } : {}),
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
    archive: { archiveMaxBytes: config.archiveMaxBytes, archiveTtlMs: config.archiveTtlMs },
    tools: {
      cwd,
      ...(options.env !== undefined ? { env: options.env } : {}),
      ...options.limits,
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      // A recall answer fits in one turn's budget, so prepareStep never cuts it into a preview of
      // itself (which would name the same text to recall again): paging reaches every character.
      recallMaxChars: Math.min(DEFAULT_RECALL_MAX_CHARS, config.turnBudgetChars),
      // A tool result can carry an image here (content output): recall gives an old image back.
      recallImages: true,
    },
  });
  const tools: Record<string, SpoolTool> = {};
  const toolCaps: Record<string, number> = {};
  // The first call the run's abortSignal ended, for close() without an error: a one-step generateText
  // aborted while its tool ran returns normally, the tool's result saying "aborted", and its caller
  // then closed the session as "succeeded".
  let aborted: string | undefined;
  for (const def of session.tools) {
    tools[def.name] = toAiTool(session, def, { onAbortedBySignal: (id) => void (aborted ??= `${id} (${def.name})`) });
    if (def.maxResultChars !== undefined) toolCaps[def.name] = def.maxResultChars;
  }
  // A recalled text is what the model asked for: recall declares its answer cap as its result cap
  // (above), or, without one, may use the whole turn budget — never the per-result default, which
  // would cut an answer into a stub of itself.
  toolCaps["recall"] ??= config.turnBudgetChars;
  const prepareStep = createPrepareStep({
    workspace: session.workspace,
    config,
    toolCaps,
    imagesRecallable: true,
    ...(options.onPrepare !== undefined ? { onReport: options.onPrepare } : {}),
  });
  return {
    tools: tools as unknown as SpoolTools,
    prepareStep,
    sessionId: session.id,
    sessionDir: session.dir,
    session,
    close: (options) => {
      const error = closeError(options);
      if (error !== undefined) return session.close({ status: statusOfError(error), reason: reasonOfError(error) });
      if (aborted !== undefined)
        return session.close({ status: "interrupted", reason: `the run's abortSignal ended call ${aborted}; close() was given no error` });
      return session.close();
    },
  };
}

/**
 * The error close() was given: `{ error }`, or an Error itself (`.catch(spool.close)`, which would
 * otherwise record a failed run as "succeeded"). Anything else — no argument, what an event or
 * `.then(spool.close)` passes — is no error.
 */
function closeError(options: unknown): unknown {
  if (options instanceof Error) return options;
  return typeof options === "object" && options !== null && "error" in options ? options.error : undefined;
}
