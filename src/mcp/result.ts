// A finished call as an MCP `CallToolResult`: the model-facing text (kept window + footer naming the
// spill file; never empty or only whitespace) as the one text block, `isError` when the command
// failed, timed out or the arguments were bad, and for bash the pinned `structuredContent` a client
// can branch on without parsing text. A recall that gives an old image back (the session's recall
// made with `recallImages`; `spool mcp` offers no recall) carries it as an image block after the text.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { imageInfo, parseImageEntry, type KeyLookup } from "../context/index.js";
import { bashDetails, recalledImageKey, visibleText, type AgentCallOutcome } from "../harness/index.js";

export interface BashStructured {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly truncated: boolean;
  readonly totalLines: number;
  readonly totalBytes: number;
  readonly spillPath: string | null;
  /** Set when the command still ran at the yield time and became a background process. */
  readonly processId?: string;
  [key: string]: unknown;
}

/** JSON Schema of bash's structuredContent (the tool's outputSchema). */
export const BASH_OUTPUT_SCHEMA = {
  type: "object",
  properties: {
    exitCode: { type: ["integer", "null"], description: "The command's exit code (null if it never ran)." },
    signal: { type: ["string", "null"], description: "The signal that ended it, if any." },
    timedOut: { type: "boolean" },
    truncated: { type: "boolean", description: "The text shows only part of the output; the rest is in spillPath." },
    totalLines: { type: "integer", description: "Lines the command printed, cleaned (ANSI removed, \\r frames collapsed)." },
    totalBytes: {
      type: "integer",
      description: "UTF-8 bytes of that cleaned output, an over-long line counted as cut; the spill file holds the raw bytes.",
    },
    spillPath: { type: ["string", "null"], description: "File with the full raw output (read it with the read tool)." },
    processId: {
      type: "string",
      description: "Present when the command keeps running in the background: pass it to process_output, process_write, process_kill.",
    },
  },
  required: ["exitCode", "signal", "timedOut", "truncated", "totalLines", "totalBytes", "spillPath"],
} as const;

export function bashStructured(outcome: AgentCallOutcome): BashStructured {
  const d = bashDetails(outcome.state?.details);
  const t = outcome.state?.truncation;
  return {
    exitCode: d.exitCode ?? null,
    signal: d.signal ?? null,
    timedOut: d.timedOut === true,
    truncated: t?.truncated === true,
    totalLines: t?.totalLines ?? 0,
    totalBytes: t?.totalBytes ?? 0,
    spillPath: d.spillPath ?? null,
    ...(d.processId !== undefined ? { processId: d.processId } : {}),
  };
}

export function toCallToolResult(toolName: string, outcome: AgentCallOutcome, archive?: KeyLookup): CallToolResult {
  const image = archive !== undefined && !outcome.isError ? recalledImage(outcome, archive) : undefined;
  return {
    content: [{ type: "text", text: visibleText(outcome.text) }, ...(image !== undefined ? [image] : [])],
    ...(outcome.isError ? { isError: true } : {}),
    ...(toolName === "bash" ? { structuredContent: bashStructured(outcome) } : {}),
  };
}

/** The image a recall answer gives back, read from the archive by the key its details name, as MCP image content. */
function recalledImage(outcome: AgentCallOutcome, archive: KeyLookup): { type: "image"; data: string; mimeType: string } | undefined {
  const key = recalledImageKey(outcome.state?.details);
  const entry = key !== undefined ? archive.get(key) : undefined;
  const part = entry !== undefined ? parseImageEntry(entry) : undefined;
  const info = part !== undefined ? imageInfo(part) : undefined;
  if (part === undefined || info === undefined) return undefined;
  // inline only (a remote URL is never archived): base64, or the payload of a data: URL
  const data = part.data !== undefined && part.data !== "" ? part.data : part.url!.slice(part.url!.indexOf(",") + 1);
  return { type: "image", data, mimeType: part.mediaType ?? info.mediaType };
}

/** A failure before or around the call (not the command's own): one clear line for the model. */
export function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}
