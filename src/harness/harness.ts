// Running tool calls end to end. Per call: tool_start (identity), tool_update batches (the first is a
// base), tool_end (no content). Each flushed batch also goes, encoded by the call's own durable encoder,
// into a list in the operation's ephemeral scope, tagged "base" for base batches. When every call of
// the operation has ended, the results are appended to the transcript and the scope is retired in the
// same transaction, so the main log holds the transcript and the sidecar disappears.
//
// After a crash, recover() reads each unsettled call's list backwards to its last base and folds
// forward; resume() re-runs replay-safe tools with their sink *seeded* from that state (deleting it
// would lose memoised work's output and spill a second file) and settles the rest as interrupted.
// resumeLeftOpen() does that for every operation the session held open when this harness was created:
// a writer that opens a session (spool run --session, openAgentSession) calls it first, so a call its
// dead predecessor left open gets its result, and the transcript stays paired.
import { fileLimitAdvice, isTimeoutAbort } from "../capture/index.js";
import { apply, decoder, encoder, type Op, type WireOp } from "../delta/index.js";
import type { ContentPart, ToolResultMessage, Workspace } from "../context/index.js";
import { createToolOutput, type ToolOutput, type ToolOutputState } from "../output/index.js";
import {
  appendList,
  deleteList,
  ephemeralScope,
  list,
  retireScope,
  setValue,
  value,
  type EphemeralScope,
  type Store,
  type ValueList,
  type Write,
} from "../store/index.js";
import type { HarnessEvent, HarnessListener } from "./events.js";
import { createProcessHost, type ProcessHost } from "./processes.js";
import { HarnessError, type ToolCall, type ToolContext, type ToolDefinition } from "./tool.js";
import { readTranscript, TRANSCRIPT } from "./transcript.js";
import { callRecord, type SessionStatus } from "./session-record.js";

export interface HarnessOptions {
  readonly store: Store;
  readonly workspace: Workspace;
  // Tools are heterogeneous in their argument types; the harness only passes arguments through.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly tools: readonly ToolDefinition<any>[];
  /** Base batch every N durable flushes (default 50): recovery replays at most N batches. */
  readonly rebaseEvery?: number;
  /** Live pacing of tool_update (default 100 ms / 100 KiB/s). */
  readonly minIntervalMs?: number;
  readonly targetBytesPerSecond?: number;
  /**
   * A listener threw. Listeners are UI code: their errors must not skip a durable batch or fail the
   * call, so each is isolated and reported here. Default: rethrown asynchronously.
   */
  readonly onListenerError?: (error: unknown, event: HarnessEvent) => void;
}

export interface OpenOperation {
  readonly startedAt: string;
  readonly calls: readonly ToolCall[];
}

export interface RecoveredCall extends ToolCall {
  /** The call's output as of its last durable flush; undefined when it never flushed. */
  readonly output: ToolOutputState | undefined;
  /** Durable batches replayed to rebuild it (bounded by the rebase policy). */
  readonly replayed: number;
}

export interface RecoveredOperation {
  readonly operationId: string;
  readonly startedAt: string;
  readonly calls: readonly RecoveredCall[];
}

export interface Harness {
  on(listener: HarnessListener): () => void;
  /** Run the calls concurrently; resolves with their results once the operation has settled. */
  runTools(operationId: string, calls: readonly ToolCall[], options?: { signal?: AbortSignal }): Promise<ToolResultMessage[]>;
  /** Operations that started but never settled (a crash), with each call's last durable output. */
  recover(): RecoveredOperation[];
  /**
   * Finish an unsettled operation: replay-safe calls run again on a seeded sink; others settle as
   * interrupted. A call record (callRecord) still "running" ends with it, in the same transaction.
   */
  resume(operationId: string, options?: { signal?: AbortSignal }): Promise<ToolResultMessage[]>;
  /**
   * resume() every operation that was open when this harness was created — left by a writer that
   * died — in the order they started; never one this harness started. Their results, in that order.
   */
  resumeLeftOpen(options?: { signal?: AbortSignal }): Promise<ToolResultMessage[]>;
  /** The transcript: every settled tool result, in order. */
  transcript(): ToolResultMessage[];
  /** Background processes started by bash calls (background / yieldSeconds). */
  readonly processes: ProcessHost;
  /** Kills every background process and waits until each has settled. Call it before exiting. */
  close(): Promise<void>;
}

/** Operations started and not yet settled, with their calls: what recover() lists after a crash. */
export const OPEN_OPERATIONS = value<Record<string, OpenOperation>>("harness", "operations");

export const operationScope = (operationId: string): EphemeralScope => ephemeralScope(`op:${operationId}`);
export const outputList = (operationId: string, toolCallId: string): ValueList<WireOp[], EphemeralScope> =>
  list<WireOp[]>("tool_output", `${operationId}:${toolCallId}`, operationScope(operationId));
const memoValue = (operationId: string, toolCallId: string, name: string) =>
  value<unknown>("tool_memo", `${operationId}:${toolCallId}:${name}`, operationScope(operationId));

/** Fold a call's durable list: read backwards to the last base, then apply forward. */
export function readDurableOutput(
  store: Pick<Store, "readList">,
  operationId: string,
  toolCallId: string,
): { output: ToolOutputState | undefined; replayed: number } {
  const address = outputList(operationId, toolCallId);
  const batches: WireOp[][] = [];
  let cursor: number | undefined;
  for (;;) {
    const page = store.readList(address, { order: "desc", stopAtTag: "base", ...(cursor !== undefined ? { cursor } : {}) });
    for (const el of page.elements) batches.push(el.value);
    if (page.elements.some((el) => el.tag === "base") || page.cursor === undefined) break;
    cursor = page.cursor;
  }
  if (batches.length === 0) return { output: undefined, replayed: 0 };
  batches.reverse();
  const dec = decoder();
  let state: ToolOutputState | undefined;
  for (const wire of batches) state = apply(state, dec.decode(wire));
  return { output: state, replayed: batches.length };
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function resultOf(call: ToolCall, state: Readonly<ToolOutputState>, isError: boolean): ToolResultMessage {
  const content: ContentPart[] = [{ type: "text", text: state.content[0].text }];
  for (const block of state.content.slice(1)) {
    if (block.type === "image") content.push({ type: "image", mediaType: block.mimeType, data: block.data });
  }
  const spill = state.details["spillPath"];
  return {
    role: "tool",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    isError,
    content,
    ...(typeof spill === "string" ? { spillPath: spill } : {}),
  };
}

function checkCalls(calls: readonly ToolCall[]): void {
  const seen = new Set<string>();
  for (const c of calls) {
    if (typeof c?.toolCallId !== "string" || c.toolCallId.length === 0) {
      throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `every call needs a non-empty string toolCallId, got ${JSON.stringify(c?.toolCallId)}`);
    }
    if (typeof c.toolName !== "string" || c.toolName.length === 0) {
      throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `call ${c.toolCallId} needs a non-empty string toolName`);
    }
    if (seen.has(c.toolCallId)) throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `duplicate toolCallId ${c.toolCallId} in one operation`);
    seen.add(c.toolCallId);
  }
}

export function createHarness(options: HarnessOptions): Harness {
  const { store, workspace } = options;
  const tools = new Map<string, ToolDefinition<unknown>>();
  for (const t of options.tools) {
    if (tools.has(t.name)) throw new HarnessError("SPOOL_HARNESS_DUPLICATE_TOOL", `two tools are named "${t.name}"; tool names must be unique`);
    tools.set(t.name, t as ToolDefinition<unknown>);
  }
  const listeners = new Set<HarnessListener>();
  const onListenerError =
    options.onListenerError ??
    ((err: unknown) =>
      queueMicrotask(() => {
        throw err;
      }));
  const emit = (event: HarnessEvent): void => {
    for (const l of [...listeners]) {
      try {
        l(event);
      } catch (err) {
        onListenerError(err, event);
      }
    }
  };
  const open: Record<string, OpenOperation> = { ...(store.get(OPEN_OPERATIONS) ?? {}) };
  /** What a writer before this harness left open (in start order: the record keeps insertion order). */
  const leftOpen = Object.keys(open);
  /**
   * Operations this harness is running (runTools, resume): resume() refuses them. A resume racing
   * another resume (or resumeLeftOpen) of one operation ran its calls twice and appended two results.
   */
  const running = new Set<string>();

  /**
   * A call's sink: each flushed batch goes to the durable list first (one chain per call keeps its
   * checkpoints in flush order; after a failure nothing more is written, so the list never skips a
   * batch), then to the listeners as tool_update. `after` delays the first write (a commit that must
   * land before it).
   */
  const openSink = (
    operationId: string,
    call: ToolCall,
    tool: ToolDefinition<unknown> | undefined,
    seed: ToolOutputState | undefined,
    after?: Promise<void>,
  ) => {
    const address = outputList(operationId, call.toolCallId);
    const enc = encoder();
    let chain: Promise<void> = after ?? Promise.resolve();
    let durableError: unknown;
    const persist = (writes: readonly Write<EphemeralScope>[]): Promise<void> => {
      chain = chain.then(async () => {
        if (durableError !== undefined) return;
        try {
          await store.commit(writes);
        } catch (err) {
          durableError = err;
        }
      });
      return chain;
    };
    const out: ToolOutput = createToolOutput({
      ...(tool?.output?.retain !== undefined ? { retain: tool.output.retain } : {}),
      ...(tool?.output?.maxBytes !== undefined ? { maxBytes: tool.output.maxBytes } : {}),
      ...(tool?.output?.maxLines !== undefined ? { maxLines: tool.output.maxLines } : {}),
      ...(seed ? { initial: seed } : {}),
      ...(options.rebaseEvery !== undefined ? { rebaseEvery: options.rebaseEvery } : {}),
      ...(options.minIntervalMs !== undefined ? { minIntervalMs: options.minIntervalMs } : {}),
      ...(options.targetBytesPerSecond !== undefined ? { targetBytesPerSecond: options.targetBytesPerSecond } : {}),
      onFlush: (ops, info) => {
        // Durable first: the list must hold every batch whatever the listeners do. A base holds the
        // whole state, so what came before it is cleared in the same commit: every store keeps an
        // open list in memory, and a background process printing for hours grew it by every flush
        // (~5.4 KB/s at 90 KB/s of output). Now it holds at most rebaseEvery batches.
        const batch = enc.encode(ops);
        void persist(info.base ? [deleteList(address), appendList(address, batch, "base")] : [appendList(address, batch)]);
        emit({ type: "tool_update", operationId, toolCallId: call.toolCallId, ops });
      },
      onError: (err) => {
        durableError ??= err;
      },
    });
    return {
      out,
      enc,
      address,
      persist,
      get durableError() {
        return durableError;
      },
      /** Closes the sink and waits for its last durable write. */
      async close(): Promise<unknown> {
        out.close();
        await chain;
        return durableError;
      },
    };
  };

  const runCall = async (operationId: string, call: ToolCall, signal: AbortSignal, seed: ToolOutputState | undefined): Promise<ToolResultMessage> => {
    const tool = tools.get(call.toolName);
    emit({ type: "tool_start", operationId, toolCallId: call.toolCallId, toolName: call.toolName, args: call.args });
    const sink = openSink(operationId, call, tool, seed);
    const { out, enc, address, persist } = sink;

    const ctx: ToolContext = {
      operationId,
      toolCallId: call.toolCallId,
      workspace,
      processes,
      memoized: <T>(name: string) => store.get(memoValue(operationId, call.toolCallId, name)) as T | undefined,
      memo: async (name, v) => {
        out.flush({ force: true });
        const base: Op[] = [["r", structuredClone(out.state)]];
        await persist([setValue(memoValue(operationId, call.toolCallId, name), v), appendList(address, enc.encode(base), "base")]);
        if (sink.durableError !== undefined) throw sink.durableError;
      },
    };

    let isError = false;
    const fail = (text: string): void => {
      isError = true;
      const current = out.state.content[0].text;
      // A footer, so the sentence is part of what the model reads but not of the output's totals.
      out.footer(`${current.length > 0 && !current.endsWith("\n") ? "\n" : ""}${text}`);
    };
    if (!tool) {
      fail(`Unknown tool "${call.toolName}". Available tools: ${[...tools.keys()].join(", ") || "none"}.`);
    } else if (signal.aborted) {
      // Cancelled before it started (the AI SDK runs a tool whose run's signal fired as the call was set
      // up, e.g. in its onToolExecutionStart): nothing runs. exec spawned the command and then killed it,
      // and a quick one (`echo ran > file`) had finished first, its result reading "[aborted] Command
      // aborted (exit 0)"; a process_write wrote its input.
      fail(`${isTimeoutAbort(signal) ? "[timed out]" : "[aborted]"} The call was cancelled before it started; nothing ran.`);
    } else {
      try {
        await tool.execute(call.toolCallId, call.args as never, signal, out, ctx);
        if (signal.aborted) fail(isTimeoutAbort(signal) ? "[timed out]" : "[aborted]");
      } catch (err) {
        // A signal that timed out (the AI SDK's per-tool timeout) stopped no one's call: bash says so itself.
        fail(signal.aborted && !isTimeoutAbort(signal) ? `[aborted] ${errorText(err)}` : errorText(err));
      }
    }
    const durableError = await sink.close();
    if (durableError !== undefined) {
      isError = true;
      // The model still gets the output (it is in memory); the note says recovery could not have.
      const text = out.state.content[0].text;
      const limit = fileLimitAdvice(durableError);
      const note = `\n[spool: this output could not be saved durably: ${errorText(durableError)}${limit !== undefined ? `; ${limit}` : ""}]`;
      emit({ type: "tool_end", operationId, toolCallId: call.toolCallId, isError });
      return resultOf(call, { ...out.state, content: [{ type: "text", text: text + note }, ...out.state.content.slice(1)] } as ToolOutputState, isError);
    }
    emit({ type: "tool_end", operationId, toolCallId: call.toolCallId, isError });
    return resultOf(call, out.state, isError);
  };

  const settle = async (operationId: string, results: ToolResultMessage[], also: readonly Write[] = []): Promise<void> => {
    const entry = open[operationId]!;
    delete open[operationId];
    try {
      await store.commit([
        ...results.map((m) => appendList(TRANSCRIPT, m)),
        setValue(OPEN_OPERATIONS, { ...open }),
        retireScope(operationScope(operationId)),
        ...also,
      ]);
    } catch (err) {
      // Not settled on disk, so not settled here either: recover()/resume() must still see it.
      open[operationId] = entry;
      throw err;
    }
    emit({ type: "operation_end", operationId });
  };

  const start = async (operationId: string, calls: readonly ToolCall[]): Promise<void> => {
    operationScope(operationId); // validates the id before anything is written
    checkCalls(calls);
    if (open[operationId]) {
      throw new HarnessError("SPOOL_HARNESS_OPERATION_OPEN", `operation ${operationId} is already running or unsettled; use resume() to finish it`);
    }
    open[operationId] = { startedAt: new Date().toISOString(), calls: calls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, args: c.args })) };
    await store.commit([setValue(OPEN_OPERATIONS, { ...open })]);
    emit({ type: "operation_start", operationId });
  };

  const processes = createProcessHost({
    open(processId, args, seed) {
      const call: ToolCall = { toolCallId: processId, toolName: "bash", args };
      open[processId] = { startedAt: new Date().toISOString(), calls: [call] };
      const begun = store.commit([setValue(OPEN_OPERATIONS, { ...open })]).then(() => undefined);
      emit({ type: "operation_start", operationId: processId });
      emit({ type: "tool_start", operationId: processId, toolCallId: processId, toolName: "bash", args });
      const sink = openSink(processId, call, tools.get("bash"), seed, begun);
      background.set(processId, { call, sink });
      return sink.out;
    },
    async settle(processId, isError) {
      const entry = background.get(processId)!;
      background.delete(processId);
      const durableError = await entry.sink.close();
      emit({ type: "tool_end", operationId: processId, toolCallId: processId, isError: isError || durableError !== undefined });
      await settle(processId, [resultOf(entry.call, entry.sink.out.state, isError || durableError !== undefined)]);
    },
  });
  const background = new Map<string, { call: ToolCall; sink: ReturnType<typeof openSink> }>();

  /** resume()'s work, for an operation no one in this harness runs. */
  const resumeOpen = async (operationId: string, op: OpenOperation, runOptions: { signal?: AbortSignal }): Promise<ToolResultMessage[]> => {
    const signal = runOptions.signal ?? new AbortController().signal;
    emit({ type: "operation_start", operationId });
    const records: Write[] = [];
    const results = await Promise.all(
      op.calls.map(async (call) => {
        const { output } = readDurableOutput(store, operationId, call.toolCallId);
        const tool = tools.get(call.toolName);
        const result = tool?.replaySafe ? await runCall(operationId, call, signal, output) : interrupted(call, output, tool === undefined);
        // The record its writer left "running" ends now (the first time known to be after it ended),
        // as interrupted: or the viewer would time it for ever. A replay-safe call ran to the end.
        const record = store.get(callRecord(call.toolCallId));
        if (record?.status === "running") {
          const status: SessionStatus = tool?.replaySafe ? (result.isError ? "failed" : "succeeded") : "interrupted";
          records.push(setValue(callRecord(call.toolCallId), { ...record, endedAt: new Date().toISOString(), status }));
        }
        return result;
      }),
    );
    await settle(operationId, results, records);
    return results;
  };

  const harness: Harness = {
    processes,
    close() {
      return processes.closeAll();
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async runTools(operationId, calls, runOptions = {}) {
      await start(operationId, calls);
      running.add(operationId);
      try {
        const signal = runOptions.signal ?? new AbortController().signal;
        const results = await Promise.all(calls.map((c) => runCall(operationId, c, signal, undefined)));
        await settle(operationId, results);
        return results;
      } finally {
        running.delete(operationId);
      }
    },
    recover() {
      return Object.entries(open).map(([operationId, op]) => ({
        operationId,
        startedAt: op.startedAt,
        calls: op.calls.map((c) => ({ ...c, ...readDurableOutput(store, operationId, c.toolCallId) })),
      }));
    },
    async resume(operationId, runOptions = {}) {
      const op = open[operationId];
      if (!op) throw new HarnessError("SPOOL_HARNESS_UNKNOWN_OPERATION", `no unsettled operation ${operationId}; recover() lists them`);
      if (running.has(operationId) || background.has(operationId)) {
        throw new HarnessError("SPOOL_HARNESS_OPERATION_OPEN", `operation ${operationId} is running in this harness; it settles when its calls end`);
      }
      running.add(operationId);
      try {
        return await resumeOpen(operationId, op, runOptions);
      } finally {
        running.delete(operationId);
      }
    },
    async resumeLeftOpen(runOptions = {}) {
      const results: ToolResultMessage[] = [];
      for (const operationId of leftOpen.splice(0))
        if (open[operationId] && !running.has(operationId)) results.push(...(await harness.resume(operationId, runOptions)));
      return results;
    },
    transcript() {
      return readTranscript(store);
    },
  };

  /** A call whose writer died mid-call: its last durable output, and a note that says so. */
  const interrupted = (call: ToolCall, output: ToolOutputState | undefined, unknownTool: boolean): ToolResultMessage => {
    const text = output?.content[0].text ?? "";
    const note =
      "[interrupted: spool stopped while this call was running (it was killed or crashed)" +
      (text ? "; the output above is what it had saved" : "; it had saved no output") +
      `; it was not run again because ${unknownTool ? `no tool "${call.toolName}" is available here` : "the tool is not replay-safe"}]`;
    const state = output ?? ({ content: [{ type: "text", text: "" }], details: {}, terminate: false } as unknown as ToolOutputState);
    return resultOf(
      call,
      {
        ...state,
        content: [{ type: "text", text: `${text}${text && !text.endsWith("\n") ? "\n" : ""}${note}` }, ...state.content.slice(1)],
      } as ToolOutputState,
      true,
    );
  };

  return harness;
}
