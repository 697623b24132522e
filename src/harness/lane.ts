// The lane view: running tool calls folded from harness events by plain mutation. The reducer's input
// is the view and the event only — no registry, no tool code — so it can run under a tracker (the
// state host), where its own ops fall out against the view's shape.
import { applyImmutable } from "../delta/index.js";
import type { HarnessEvent } from "./events.js";

export interface CallView {
  id: string;
  name: string;
  args: unknown;
  /** The fold of the call's tool_update batches; undefined until its base arrives. */
  output: unknown;
  ended: boolean;
  isError: boolean;
}

/** A running call of the lane (ended ones move to `ended`). */
export type LaneTool = CallView;

export interface LaneView {
  operation: { id: string; tools: LaneTool[] } | null;
  /** Tool calls that ended in the current operation, with how they ended. */
  ended: { id: string; name: string; isError: boolean }[];
}

/**
 * The one fold of a call's events, shared by the lane and the session view: tool_start adds the
 * call, tool_update folds its ops into `output`, tool_end marks it. Other events are ignored.
 */
export function reduceCalls(calls: CallView[], event: HarnessEvent): void {
  switch (event.type) {
    case "tool_start":
      calls.push({ id: event.toolCallId, name: event.toolName, args: event.args, output: undefined, ended: false, isError: false });
      return;
    case "tool_update": {
      const call = calls.find((c) => c.id === event.toolCallId);
      // Immutable fold: the call may be a tracked proxy, whose properties only plain assignment may
      // change; the assignment is diffed, so an append still leaves as an "a".
      if (call) call.output = applyImmutable(call.output as object | undefined, event.ops);
      return;
    }
    case "tool_end": {
      const call = calls.find((c) => c.id === event.toolCallId);
      if (call) {
        call.ended = true;
        call.isError = event.isError;
      }
      return;
    }
    default:
      return;
  }
}

export function emptyLane(): LaneView {
  return { operation: null, ended: [] };
}

export function reduceLane(view: LaneView, event: HarnessEvent): void {
  switch (event.type) {
    case "operation_start":
      view.operation = { id: event.operationId, tools: [] };
      view.ended = [];
      return;
    case "tool_start":
      if (!view.operation || view.operation.id !== event.operationId) view.operation = { id: event.operationId, tools: [] };
      reduceCalls(view.operation.tools, event);
      return;
    case "tool_update":
      // A call the lane does not know yet is skipped: the host will send a base.
      reduceCalls(view.operation?.tools ?? [], event);
      return;
    case "tool_end": {
      const tools = view.operation?.tools;
      const i = tools ? tools.findIndex((t) => t.id === event.toolCallId) : -1;
      if (i < 0) return;
      const [tool] = tools!.splice(i, 1);
      view.ended.push({ id: tool!.id, name: tool!.name, isError: event.isError });
      return;
    }
    case "operation_end":
      if (view.operation?.id === event.operationId) view.operation = null;
      return;
  }
}
