// The lane view: running tool calls folded from harness events by plain mutation. The reducer's input
// is the view and the event only — no registry, no tool code — so it can run under a tracker (the
// state host), where its own ops fall out against the view's shape.
import { applyImmutable } from "../delta/index.js";
import type { HarnessEvent } from "./events.js";

export interface LaneTool {
  id: string;
  name: string;
  args: unknown;
  /** The fold of the call's tool_update batches; undefined until its base arrives. */
  output: unknown;
}

export interface LaneView {
  operation: { id: string; tools: LaneTool[] } | null;
  /** Tool calls that ended in the current operation, with how they ended. */
  ended: { id: string; name: string; isError: boolean }[];
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
      view.operation.tools.push({ id: event.toolCallId, name: event.toolName, args: event.args, output: undefined });
      return;
    case "tool_update": {
      const tool = view.operation?.tools.find((t) => t.id === event.toolCallId);
      if (tool === undefined) return; // the host will send a base
      // Immutable fold: the view may be a tracked proxy, whose properties only plain assignment may
      // change; the assignment is diffed, so an append still leaves as an "a".
      tool.output = applyImmutable(tool.output as object | undefined, event.ops);
      return;
    }
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
