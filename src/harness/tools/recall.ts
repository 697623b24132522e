// recall: the model's way back to any text that was cut — a <<ccr:KEY>> marker (or a sloppy spelling
// of its key) gives back the original byte-identical, or a page of it by lines or by grep. No answer
// is longer than the tool's cap: a longer text, page or line comes back in parts, each naming the
// exact call for the next (offset, and column inside a line too long for one answer).
import { checkRecallMaxChars, DEFAULT_RECALL_MAX_CHARS, recall } from "../../context/index.js";
import { HarnessError, type ToolDefinition } from "../tool.js";

export interface RecallArgs {
  readonly key: string;
  readonly offset?: number;
  readonly column?: number;
  readonly limit?: number;
  readonly grep?: string;
}

export interface RecallToolOptions {
  /** The longest answer in characters (default DEFAULT_RECALL_MAX_CHARS, at least MIN_RECALL_MAX_CHARS). */
  readonly maxChars?: number;
  /**
   * The surface can carry an image in a tool result (spool/ai-sdk): an archived image comes back as
   * itself, one per answer. The answer's text says so, and its details name the image's archive key
   * (recalledImageKey); the surface puts the image beside the text. Default false: images are described.
   */
  readonly images?: boolean;
}

/** The archive key of the image a recall answer gives back (RecallToolOptions.images), from the call's details. */
export function recalledImageKey(details: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const key = details?.["recalledImage"];
  return typeof key === "string" ? key : undefined;
}

export function createRecallTool(options: RecallToolOptions = {}): ToolDefinition<RecallArgs> {
  const maxChars = options.maxChars ?? DEFAULT_RECALL_MAX_CHARS;
  checkRecallMaxChars(maxChars);
  const finite = Number.isFinite(maxChars);
  const images = options.images === true;
  return {
    name: "recall",
    description:
      "Get back the full text of a cut tool result. Pass the key from its <<ccr:KEY>> marker (or the marker itself). " +
      (images ? "An old image's marker gives the image back (one image per call). " : "") +
      `Optional offset/limit page by lines; grep shows only matching lines with their numbers. An answer holds at most ${finite ? maxChars : "any number of"} chars: ` +
      "a longer text, page or line comes back in parts, and each part ends its header with the exact call for the next (column=N reads on inside a long line).",
    parameters: {
      type: "object",
      properties: {
        key: { type: "string", description: "The 16-hex-char key or the <<ccr:KEY>> marker; several keys give labelled sections." },
        offset: { type: "integer", minimum: 1 },
        column: { type: "integer", minimum: 1, description: "First character of the line at offset to show (for a line too long for one answer)." },
        limit: { type: "integer", minimum: 1 },
        grep: { type: "string", description: "A regular expression (RE2 syntax: no backreferences or lookaround); only matching lines are shown." },
      },
      required: ["key"],
    },
    // recall bounds its own answer; the sink must not cut it again (a UTF-16 unit is at most 3 UTF-8 bytes).
    output: { retain: "head", maxBytes: finite ? 3 * maxChars + 1024 : 64 * 1024 * 1024, maxLines: 10_000_000 },
    // The context budget takes the cap as recall's per-result limit, so an answer is never cut into a stub of itself.
    ...(finite ? { maxResultChars: maxChars } : {}),
    kind: "read",
    replaySafe: true,
    execute(_id, args, signal, out, ctx) {
      if (typeof args?.key !== "string") throw new HarnessError("SPOOL_HARNESS_BAD_CALL", 'recall needs a "key" string argument');
      const result = recall(args.key, ctx.workspace, {
        ...(args.offset !== undefined ? { offset: args.offset } : {}),
        ...(args.column !== undefined ? { column: args.column } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(args.grep !== undefined ? { grep: args.grep } : {}),
        maxChars,
        signal,
        ...(images ? { images: true } : {}),
      });
      out.write(result.text);
      // The key, not the image: the session log and a UI's tool output stay small; the surface reads it back.
      if (result.image !== undefined) out.details["recalledImage"] = result.image.key;
    },
  };
}
