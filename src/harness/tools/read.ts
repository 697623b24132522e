// read: a file by line offset/limit, only inside the session workspace (spill files, saved results),
// cleaned like command output (ANSI, CR frames, control characters, binary detection). The file is
// streamed, so paging through a 1 GB spill costs one pass and a bounded window of memory.
import { createReadStream } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, OutputCapture, describeTruncation, resolveLimits } from "../../capture/index.js";
import { HarnessError, type ToolDefinition } from "../tool.js";

export interface ReadArgs {
  readonly path: string;
  /** First line, 1-based (default 1). */
  readonly offset?: number;
  /** Lines to show (default 2000). */
  readonly limit?: number;
}

const DEFAULT_LIMIT = DEFAULT_MAX_LINES;

function positive(name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `read "${name}" must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

export function createReadTool(): ToolDefinition<ReadArgs> {
  const output = { retain: "head", maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_LIMIT } as const;
  return {
    name: "read",
    description:
      "Read a text file saved in the session workspace (spill files of cut command output, saved tool results) by line offset and limit. The answer says which lines it shows and how to get the next ones.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path of the file (absolute, or relative to the session directory)." },
        offset: { type: "integer", minimum: 1, description: "First line to show, 1-based." },
        limit: { type: "integer", minimum: 1, description: `Number of lines (default ${DEFAULT_LIMIT}).` },
      },
      required: ["path"],
    },
    output,
    kind: "read",
    replaySafe: true,
    async execute(_id, args, signal, out, ctx) {
      if (typeof args?.path !== "string" || args.path === "") throw new HarnessError("SPOOL_HARNESS_BAD_CALL", 'read needs a "path" string argument');
      const offset = positive("offset", args.offset) ?? 1;
      const limit = positive("limit", args.limit) ?? DEFAULT_LIMIT;
      const path = isAbsolute(args.path) ? args.path : resolve(ctx.workspace.dir, args.path);
      if (!ctx.workspace.canRead(path)) {
        throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `read is limited to the session workspace ${ctx.workspace.dir}; ${args.path} is outside it (or does not exist)`);
      }
      const capture = new OutputCapture(resolveLimits(output));
      let line = 1; // the line the next byte belongs to
      let size = 0;
      let lastByte = 10;
      const last = offset + limit - 1;
      for await (const chunk of createReadStream(path, { signal }) as AsyncIterable<Buffer>) {
        let start = 0;
        for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) {
          if (line >= offset && line <= last) capture.push(chunk.subarray(start, nl + 1));
          line++;
          start = nl + 1;
        }
        if (start < chunk.length && line >= offset && line <= last) capture.push(chunk.subarray(start));
        size += chunk.length;
        if (chunk.length > 0) lastByte = chunk[chunk.length - 1]!;
      }
      capture.end();
      const totalLines = size === 0 ? 0 : lastByte === 10 ? line - 1 : line;
      const view = capture.view();
      out.write(view.text);
      const cut = describeTruncation(view, "head");
      if (cut) out.write(`\n${cut}`);
      const shownTo = Math.min(last, totalLines);
      if (offset > totalLines) out.write(`[The file has ${totalLines} lines; offset ${offset} is past the end.]`);
      else if (shownTo < totalLines) out.write(`\n[Lines ${offset}–${shownTo} of ${totalLines}. Next: offset=${shownTo + 1}.]`);
    },
  };
}
