// recall: the model's way back to any text that was cut — a <<ccr:KEY>> marker (or a sloppy spelling
// of its key) gives back the original byte-identical, or a page of it by lines or by grep.
import { recall } from "../../context/index.js";
import { HarnessError, type ToolDefinition } from "../tool.js";

export interface RecallArgs {
  readonly key: string;
  readonly offset?: number;
  readonly limit?: number;
  readonly grep?: string;
}

export function createRecallTool(): ToolDefinition<RecallArgs> {
  return {
    name: "recall",
    description:
      "Get back the full text of a cut tool result. Pass the key from its <<ccr:KEY>> marker (or the marker itself). Optional offset/limit page by lines; grep shows only matching lines with their numbers.",
    parameters: {
      type: "object",
      properties: {
        key: { type: "string", description: "The 16-hex-char key or the <<ccr:KEY>> marker; several keys give labelled sections." },
        offset: { type: "integer", minimum: 1 },
        limit: { type: "integer", minimum: 1 },
        grep: { type: "string", description: "A regular expression (RE2 syntax: no backreferences or lookaround); only matching lines are shown." },
      },
      required: ["key"],
    },
    // A recalled text must not be cut again by the sink, or recall could never return it whole.
    output: { retain: "head", maxBytes: 64 * 1024 * 1024, maxLines: 10_000_000 },
    kind: "read",
    replaySafe: true,
    execute(_id, args, signal, out, ctx) {
      if (typeof args?.key !== "string") throw new HarnessError("SPOOL_HARNESS_BAD_CALL", 'recall needs a "key" string argument');
      const result = recall(args.key, ctx.workspace, {
        ...(args.offset !== undefined ? { offset: args.offset } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(args.grep !== undefined ? { grep: args.grep } : {}),
        signal,
      });
      out.write(result.text);
    },
  };
}
