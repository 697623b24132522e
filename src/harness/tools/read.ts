// read: a file by line offset/limit — by default only inside the session workspace (spill files, saved
// results); an agent surface that also runs bash (MCP, AI SDK) opens it to any file, since its bash can
// `cat` them anyway and a bounded, paged read is the better way. Cleaned like command output (ANSI, CR
// frames, control characters, binary detection). The file is
// streamed, so paging through a 1 GB spill costs one pass and a bounded window of memory.
import { createReadStream, existsSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, OutputCapture, describeTruncation, formatBytes, resolveLimits } from "../../capture/index.js";
import { isWholeNumberIn, wholeNumberRange } from "../../errors/index.js";
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
  if (!isWholeNumberIn(v, 1)) throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `read "${name}" must be ${wholeNumberRange(1)}, got ${JSON.stringify(v)}`);
  return v;
}

export interface ReadToolOptions {
  /** Read any file, not only the session workspace's (default false). */
  readonly anyFile?: boolean;
  /** With anyFile: what relative paths are relative to (default: the process's working directory). */
  readonly cwd?: string;
}

/** A readable regular file, or a model-facing reason why not. */
function checkFile(path: string, given: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new HarnessError(
      "SPOOL_HARNESS_BAD_CALL",
      code === "ENOENT" ? `read: no file ${given} (resolved to ${path})` : `read: cannot open ${given}: ${(err as Error).message}`,
    );
  }
  if (!isFile) throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `read: ${given} is not a regular file; list a directory with bash (ls)`);
}

export function createReadTool(options: ReadToolOptions = {}): ToolDefinition<ReadArgs> {
  const output = { retain: "head", maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_LIMIT } as const;
  return {
    name: "read",
    description: options.anyFile
      ? "Read a text file by line offset and limit — any file, including the spill files named in cut bash output. The answer is bounded like any tool result and says which lines it shows and how to get the next ones (offset=N)."
      : "Read a text file saved in the session workspace (spill files of cut command output, saved tool results) by line offset and limit. The answer says which lines it shows and how to get the next ones.",
    parameters: {
      type: "object",
      properties: {
        path: {
          type: "string",
          description: options.anyFile
            ? "Path of the file (absolute, or relative to the working directory)."
            : "Path of the file (absolute, or relative to the session directory).",
        },
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
      const base = options.anyFile ? (options.cwd ?? process.cwd()) : ctx.workspace.dir;
      const asked = isAbsolute(args.path) ? args.path : resolve(base, args.path);
      if (dirname(resolve(asked)) === ctx.workspace.resultsDir && !existsSync(asked)) {
        // a preview named it, then the session's limits on saved output removed it: say so, not "no file"
        throw new HarnessError(
          "SPOOL_HARNESS_BAD_CALL",
          `read: ${args.path} is no longer saved — saved results are removed when they are old or the session's saved output is over its size limit. Run the command again to see its output.`,
        );
      }
      // Inside the workspace, the file is opened by its resolved path: what was judged inside is what is read.
      const path = options.anyFile ? asked : ctx.workspace.resolveReadable(asked);
      if (path === undefined) {
        throw new HarnessError(
          "SPOOL_HARNESS_BAD_CALL",
          `read is limited to the session workspace ${ctx.workspace.dir}; ${args.path} is outside it (or does not exist)`,
        );
      }
      // A FIFO or device would block the stream: only regular files are read.
      checkFile(path, args.path);
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
      if (view.binary) {
        // No page of it would show anything: say so once instead of offering the next line forever.
        out.footer(`[${args.path} looks binary (${formatBytes(size)}); read shows text files only.]`);
        return;
      }
      out.write(view.text);
      // Notes go in the footer, outside the window: written into it, a page cut at the line limit
      // would lose exactly the sentence saying where to continue.
      const notes: string[] = [];
      const cut = describeTruncation(view, "head");
      if (cut) notes.push(cut.replace(/ The full output was not kept\.\]$/, "]")); // the file itself is the full output
      let shownTo = Math.min(last, totalLines);
      const t = view.truncation;
      if (t.truncated && t.truncatedBy !== "line-length") {
        // Cut before `last`: continue after the last whole line shown (past an over-long first line).
        shownTo = Math.min(shownTo, Math.max(offset, offset + t.outputLines - 1 - (t.lastLinePartial ? 1 : 0)));
      }
      if (offset > totalLines) notes.push(`[The file has ${totalLines} lines; offset ${offset} is past the end.]`);
      else if (shownTo < totalLines) notes.push(`[Lines ${offset}–${shownTo} of ${totalLines}. Next: offset=${shownTo + 1}.]`);
      if (notes.length > 0) out.footer(`${view.text === "" ? "" : view.text.endsWith("\n") ? "\n" : "\n\n"}${notes.join("\n")}`);
    },
  };
}
