// One agent session: a session directory under `<root>/sessions/` (durable log, spill, results,
// archive), a harness over the agent tools, and the session record that `spool sessions` lists. Each
// tool call runs as its own operation, so concurrent calls settle independently; a caller follows a
// call's output as it grows through `onUpdate` (the folded state after each paced batch). close()
// aborts what still runs (ending each command's process group), kills the background processes,
// waits for all of them to settle with their output so far, and records how the session ended. A
// session it created also keeps a record per call (what ran, its times, how it ended). A session
// passed in whose last writer died mid-call is settled first (harness resumeLeftOpen).
import { join } from "node:path";
import { isTimeoutAbort } from "../capture/index.js";
import { SpoolError } from "../errors/index.js";
import { createWorkspace, type ToolResultMessage, type Workspace, type WorkspaceOptions } from "../context/index.js";
import { applyImmutable } from "../delta/index.js";
import type { ToolOutputState } from "../output/index.js";
import {
  checkSessionId,
  currentOwner,
  DEFAULT_ROOT,
  newSessionId,
  openSessionRepo,
  sessionsDir,
  setValue,
  type PostgresRepoOptions,
  type RepoBackend,
  type Store,
} from "../store/index.js";
import { createHarness, OPEN_OPERATIONS, type Harness } from "./harness.js";
import { endReason } from "./end-reason.js";
import { transcriptLength } from "./transcript.js";
import { callRecord, SESSION_RECORD, type SessionRecord, type SessionStatus } from "./session-record.js";
import type { ToolDefinition } from "./tool.js";
import { createAgentTools, type AgentToolsOptions } from "./tools/agent-tools.js";
import { bashDetails } from "./tools/bash.js";

export interface AgentSessionOptions {
  /** The spool directory; the session goes to `<root>/sessions/<id>/` (default `.spool`). */
  readonly root?: string;
  readonly backend?: RepoBackend;
  /** backend "postgres": the database URL (undefined: the PG* environment) and its options. */
  readonly url?: string;
  readonly postgres?: PostgresRepoOptions;
  /**
   * Continue this session under `root` (created when it does not exist yet), as `spool run --session`
   * does: its calls are recorded beside the earlier ones and its first start is kept. Default: a new session.
   */
  readonly sessionId?: string;
  /** What `spool sessions` shows in its COMMAND column, e.g. "mcp". */
  readonly label: string;
  /** Tool settings: cwd, bash limits and default timeout. */
  readonly tools?: AgentToolsOptions;
  /** Use this store and workspace instead of creating a session (nothing is recorded or closed for you). */
  readonly store?: Store;
  readonly workspace?: Workspace;
  /** Archive limits of a workspace created here (default: SPOOL_ARCHIVE_MAX_MB / SPOOL_ARCHIVE_TTL, else 256 MB / 7 days). */
  readonly archive?: Pick<WorkspaceOptions, "archiveMaxBytes" | "archiveTtlMs">;
}

export interface AgentCallOutcome {
  readonly result: ToolResultMessage;
  /** How the call ended, as its record says ("interrupted": it was aborted, by its signal or by close()). */
  readonly status: Exclude<SessionStatus, "running">;
  /** The model-facing text. */
  readonly text: string;
  readonly isError: boolean;
  /** The call's final output state (details: exitCode, signal, timedOut, aborted, spillPath; truncation). */
  readonly state: ToolOutputState | undefined;
}

export interface AgentCallOptions {
  readonly signal?: AbortSignal;
  readonly onUpdate?: (state: ToolOutputState) => void;
}

export interface AgentSession {
  readonly id: string;
  readonly dir: string;
  readonly store: Store;
  readonly workspace: Workspace;
  readonly harness: Harness;
  readonly tools: readonly ToolDefinition<unknown>[];
  /** Calls still running. */
  readonly running: number;
  call(toolName: string, args: unknown, options?: AgentCallOptions): Promise<AgentCallOutcome>;
  /**
   * Called with each call record once it is stored (when the call starts, and when it ends with its
   * times, status and exit code); a live view uses it to time its calls. Returns the unsubscribe.
   */
  onCallRecord(listener: (toolCallId: string, record: SessionRecord) => void): () => void;
  /**
   * Aborts running calls, waits for them to settle, records the end and closes the store. Idempotent:
   * the first call decides. The session is recorded as `end.status` when given (how the caller's run
   * ended: e.g. "failed" when its model call threw), else "interrupted" when calls were still running,
   * else "succeeded"; `end.reason`, when given, is stored beside it as one line (endReason).
   */
  close(end?: AgentSessionEnd): Promise<void>;
}

/** How the caller's run ended, for close() to record; anything but "running". */
export interface AgentSessionEnd {
  readonly status?: Exclude<SessionStatus, "running">;
  /** Why, in words (an error's message): stored as one printable line of at most 300 chars. */
  readonly reason?: string;
}

export async function openAgentSession(options: AgentSessionOptions): Promise<AgentSession> {
  const tools = createAgentTools(options.tools) as ToolDefinition<unknown>[];
  let id: string;
  let dir: string;
  let store: Store;
  let workspace: Workspace;
  const owned = options.store === undefined;
  if (options.store !== undefined) {
    store = options.store;
    workspace = options.workspace ?? createWorkspace({ keep: true, ...options.archive });
    id = workspace.sessionId;
    dir = workspace.dir;
  } else {
    const root = sessionsDir(options.root ?? DEFAULT_ROOT);
    const repo = openSessionRepo(root, {
      backend: options.backend ?? "jsonl",
      ...(options.url !== undefined ? { url: options.url } : {}),
      ...(options.postgres !== undefined ? { postgres: options.postgres } : {}),
    });
    if (options.sessionId !== undefined) {
      // The session's lock keeps a second writer out ("session … is open in process N").
      id = checkSessionId(options.sessionId);
      store = await repo.open(id, { create: true });
      dir = join(root, id);
    } else {
      const created = await repo.create({ id: newSessionId() });
      ({ id, store } = created);
      dir = created.dir;
    }
    workspace = options.workspace ?? createWorkspace({ dir: join(root, id), keep: true, ...options.archive });
  }
  // A session continued keeps its first start, as `spool run --session` keeps it across runs.
  const previous = owned ? store.get(SESSION_RECORD) : undefined;
  const record: SessionRecord = {
    command: options.label,
    cwd: options.tools?.cwd ?? process.cwd(),
    ...currentOwner(),
    startedAt: previous?.startedAt ?? new Date().toISOString(),
    endedAt: null,
    status: "running",
    exitCode: null,
  };
  if (owned) await store.commit([setValue(SESSION_RECORD, record)]);
  const harness = createHarness({ store, workspace, tools });
  // A store passed in may hold calls its last writer left open when it died: they get their results
  // (interrupted, with the output they had saved; replay-safe ones run again) before this one runs any.
  await harness.resumeLeftOpen();

  // Operation numbers continue after whatever the session already holds (a store passed in).
  let seq = transcriptLength(store) + Object.keys(store.get(OPEN_OPERATIONS) ?? {}).length;
  const followers = new Map<string, (ops: Parameters<typeof applyImmutable>[1]) => void>();
  harness.on((e) => {
    if (e.type === "tool_update") followers.get(e.toolCallId)?.(e.ops);
  });
  const running = new Map<string, { abort: AbortController; done: Promise<unknown> }>();
  const recordListeners = new Set<(toolCallId: string, record: SessionRecord) => void>();
  const storeCallRecord = async (toolCallId: string, callRecordValue: SessionRecord): Promise<void> => {
    await store.commit([setValue(callRecord(toolCallId), callRecordValue)]);
    for (const listener of recordListeners) listener(toolCallId, callRecordValue);
  };
  let closing: Promise<void> | undefined;

  const call = async (toolName: string, args: unknown, callOptions: AgentCallOptions = {}): Promise<AgentCallOutcome> => {
    if (closing) throw new AgentSessionClosedError(id);
    // Numbered before any await: concurrent calls each keep their own number.
    const n = ++seq;
    const toolCallId = `call-${n}`;
    const abort = new AbortController();
    // With the caller's reason: a TimeoutError (the AI SDK's per-tool timeout) ends the call as timed out.
    const onAbort = (): void => abort.abort(callOptions.signal?.reason);
    callOptions.signal?.addEventListener("abort", onAbort, { once: true });
    if (callOptions.signal?.aborted) abort.abort(callOptions.signal.reason);
    let state: ToolOutputState | undefined;
    followers.set(toolCallId, (ops) => {
      state = applyImmutable(state, ops);
      callOptions.onUpdate?.(state);
    });
    // Arguments are recorded in the session log, which holds JSON only: what a client sends as JSON is
    // unchanged; undefined fields, NaN and the like become what JSON makes of them.
    const jsonArgs: unknown = args === undefined ? {} : JSON.parse(JSON.stringify(args) ?? "null");
    const started: SessionRecord = { ...record, command: describeCall(toolName, jsonArgs), startedAt: new Date().toISOString() };
    // Registered before any await, so close() aborts this call and waits until its record is written.
    let settle!: () => void;
    running.set(toolCallId, { abort, done: new Promise<void>((r) => (settle = r)) });
    try {
      if (owned) await storeCallRecord(toolCallId, started);
      const [result] = await harness.runTools(`op-${n}`, [{ toolCallId, toolName, args: jsonArgs }], { signal: abort.signal });
      const first = result!.content[0];
      const d = bashDetails(state?.details);
      // Aborted whatever the tool: a cancelled process_write or read records no `aborted` detail of its
      // own (bash does), and was recorded "failed", as if its arguments or the process had been wrong.
      const status =
        d.timedOut || isTimeoutAbort(abort.signal) ? "timed out" : d.aborted || abort.signal.aborted ? "interrupted" : result!.isError ? "failed" : "succeeded";
      if (owned) {
        const ended: SessionRecord = { ...started, endedAt: new Date().toISOString(), status, exitCode: d.exitCode ?? null };
        if (state) Object.assign(ended, { truncation: state.truncation, details: state.details });
        await storeCallRecord(toolCallId, ended);
      }
      // Cancelled once the command was handed over, while its output settled and its record was stored
      // (a few ms): the caller never gets the processId (MCP drops the response of a cancelled request),
      // so the process would run unseen until the session ends. It is stopped, as a cancelled
      // foreground command is. Checked after the last await: from here to the MCP SDK's own check
      // before it replies, no cancel can come in. (A cancel that arrives after the reply was sent is
      // the client's to handle: process_list still shows that process.)
      // bash's only: process_output, process_write and process_kill name the process they acted on in
      // the same detail, and a read cancelled as its record was stored killed the process it read.
      const handedOver = toolName === "bash" ? bashDetails(state?.details).processId : undefined;
      if (abort.signal.aborted && handedOver !== undefined) await harness.processes.kill(handedOver).catch(() => undefined);
      return { result: result!, status, text: first && first.type === "text" ? first.text : "", isError: result!.isError, state };
    } finally {
      followers.delete(toolCallId);
      running.delete(toolCallId);
      callOptions.signal?.removeEventListener("abort", onAbort);
      settle();
    }
  };

  const close = (end?: AgentSessionEnd): Promise<void> =>
    (closing ??= (async () => {
      const status: SessionStatus = end?.status ?? (running.size > 0 ? "interrupted" : "succeeded");
      const reason = end?.reason === undefined ? undefined : endReason(end.reason);
      for (const r of running.values()) r.abort.abort();
      await Promise.all([...running.values()].map((r) => r.done));
      // Background processes end with the session; each settles with its output and how it ended.
      await harness.close();
      if (!owned) return;
      await store.commit([setValue(SESSION_RECORD, { ...record, endedAt: new Date().toISOString(), status, ...(reason !== undefined ? { reason } : {}) })]);
      await store.close();
    })());

  return {
    id,
    dir,
    store,
    workspace,
    harness,
    tools,
    get running() {
      return running.size;
    },
    call,
    onCallRecord(listener) {
      recordListeners.add(listener);
      return () => void recordListeners.delete(listener);
    },
    close,
  };
}

/** What a call's record names as its command: bash's command line, else the tool and its arguments (cut at 200 chars). */
function describeCall(toolName: string, args: unknown): string {
  const command = (args as { command?: unknown } | null)?.command;
  if (toolName === "bash" && typeof command === "string") return command;
  const text = `${toolName} ${JSON.stringify(args)}`;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

export class AgentSessionClosedError extends SpoolError {
  constructor(id: string) {
    super("SPOOL_HARNESS_SESSION_CLOSED", `session ${id} is closed; open a new one (createSpool / spool mcp) to run more tool calls`);
  }
}
