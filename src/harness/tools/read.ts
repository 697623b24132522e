// read: a file by line offset/limit — by default only inside the session workspace (spill files, saved
// results); an agent surface that also runs bash (MCP, AI SDK) opens it to any file, since its bash can
// `cat` them anyway and a bounded, paged read is the better way. Cleaned like command output (ANSI, CR
// frames, control characters, binary detection). The file is streamed (read-page.ts), so paging
// through a 1 GB spill costs one pass and a bounded window of memory. A line too long for one answer
// (minified JSON, a 5 MB line of curl output) comes in slices, each footer naming the exact next call
// (offset=N column=C), so following the footers reaches every byte. A line is too long by what it
// shows: one of `\r` progress frames (200 KB raw, one 80-char frame cleaned) is shown whole, as its
// last frame, with the lines around it (it took a call per 50 KB of frames before). The footer
// follows the shown text after exactly one newline (a blank line when the text ends with one), so the
// text is recoverable exactly: a slice ends without a newline, a page of whole lines with one.
import { existsSync, statSync, type Stats } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, describeTruncation, formatBytes, resolveLimits } from "../../capture/index.js";
import { describeLinePart } from "../../context/index.js";
import { countOf, givenValue, isWholeNumberIn, wholeNumberRange } from "../../errors/index.js";
import { HarnessError, type ToolDefinition } from "../tool.js";
import { readPage } from "./read-page.js";

export interface ReadArgs {
  readonly path: string;
  /** First line, 1-based (default 1). */
  readonly offset?: number;
  /** First character of the line at offset, 1-based (default 1): reads on inside a line too long for one answer. */
  readonly column?: number;
  /** Lines to show (default 2000). */
  readonly limit?: number;
}

const DEFAULT_LIMIT = DEFAULT_MAX_LINES;

function positive(name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (!isWholeNumberIn(v, 1)) throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `read "${name}" must be ${wholeNumberRange(1)}, got ${givenValue(v)}`);
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
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // The OS's message repeats the whole path: a 100,000-char path from a model came back twice (200 KB).
    if (code === "ENAMETOOLONG") {
      throw new HarnessError(
        "SPOOL_HARNESS_BAD_CALL",
        `read: the path ${givenValue(given)} (${given.length} characters) is too long to be a file's: a path holds at most 4095 bytes and each name in it 255 (ENAMETOOLONG)`,
      );
    }
    throw new HarnessError(
      "SPOOL_HARNESS_BAD_CALL",
      code === "ENOENT" ? `read: no file ${given} (resolved to ${path})` : `read: cannot open ${given}: ${(err as Error).message}`,
    );
  }
  if (stats.isFile()) return;
  // A FIFO or a device never ends (or blocks): it is no page of text, and the hint differs from a directory's.
  const what = stats.isDirectory()
    ? "a directory; list it with bash (ls)"
    : `${stats.isFIFO() ? "a FIFO (named pipe)" : stats.isSocket() ? "a socket" : "a device"}, not a regular file; read reads files only (bash can read it, with a timeout)`;
  throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `read: ${given} is ${what}`);
}

/** A read that failed after the open, as one sentence naming the file (the OS's alone said "EIO: i/o error, read"). */
function readFailure(err: unknown, given: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== "string" || !code.startsWith("E")) return err;
  if (code === "EAGAIN") {
    return new HarnessError(
      "SPOOL_HARNESS_BAD_CALL",
      `read: ${given} has nothing to read now, and reading it would wait for more (a stream such as /proc/kmsg, not a file); read it with bash and a timeout: timeout 5 cat ${given}`,
    );
  }
  return new HarnessError("SPOOL_HARNESS_BAD_CALL", `read: cannot read ${given}: ${(err as Error).message}`);
}

export function createReadTool(options: ReadToolOptions = {}): ToolDefinition<ReadArgs> {
  const output = { retain: "head", maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_LIMIT } as const;
  // A line up to the whole window is shown whole (a longer one comes in slices), not cut at the
  // 4 KiB that suits command output.
  const limits = resolveLimits({ ...output, maxLineBytes: output.maxBytes });
  return {
    name: "read",
    description: options.anyFile
      ? `Read a text file by line offset and limit — any file, including the spill files named in cut bash output. An answer holds at most ${DEFAULT_LIMIT} lines or ${formatBytes(output.maxBytes)} and says which lines it shows and how to get the next ones (offset=N; a line too long for one answer comes in parts, and column=N reads on inside it). Binary files, directories and devices are refused with what they are.`
      : "Read a text file saved in the session workspace (spill files of cut command output, saved tool results) by line offset and limit. The answer says which lines it shows and how to get the next ones (a line too long for one answer comes in parts, and column=N reads on inside it).",
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
        column: { type: "integer", minimum: 1, description: "First character of the line at offset to show (for a line too long for one answer)." },
        limit: { type: "integer", minimum: 1, description: `Number of lines (default ${DEFAULT_LIMIT}).` },
      },
      required: ["path"],
    },
    output,
    kind: "read",
    replaySafe: true,
    async execute(_id, args, signal, out, ctx) {
      if (typeof args?.path !== "string" || args.path === "") throw new HarnessError("SPOOL_HARNESS_BAD_CALL", 'read needs a "path" string argument');
      // The OS refuses it with a message about Node's arguments; say what is wrong with the path.
      if (args.path.includes("\0"))
        throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `read: the path ${givenValue(args.path)} contains a NUL character (\\u0000); no file has one`);
      const offset = positive("offset", args.offset) ?? 1;
      const column = positive("column", args.column) ?? 1;
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
      const page = await readPage(path, { offset, column, limit, limits, signal }).catch((err: unknown) => {
        throw signal.aborted ? err : readFailure(err, args.path);
      });
      const { view, totalLines } = page;
      if (view.binary) {
        // No page of it would show anything: say so once instead of offering the next line forever.
        out.footer(`[${args.path} looks binary (${formatBytes(page.size)}); read shows text files only.]`);
        return;
      }
      out.write(view.text);
      // Notes go in the footer, outside the window: written into it, a page cut at the line limit
      // would lose exactly the sentence saying where to continue.
      const notes: string[] = [];
      const last = offset + limit - 1;
      let shownTo = Math.min(last, totalLines);
      const t = view.truncation;
      if (page.nextColumn === undefined && t.truncated && t.truncatedBy !== "line-length") {
        // A line over the window is never shown cut (the first one comes as a slice, a later one on the
        // next page): "an over-long line was cut" would describe a line this page does not show.
        const cut = describeTruncation({ ...view, truncation: { ...t, cutLines: 0 } }, "head");
        if (cut) notes.push(cut.replace(/ The full output was not kept\.\]$/, "]")); // the file itself is the full output
        // Cut before `last`: continue after the last whole line shown.
        shownTo = Math.min(shownTo, Math.max(offset, offset + t.outputLines - 1 - (t.lastLinePartial ? 1 : 0)));
      }
      if (totalLines === 0) notes.push("[The file is empty.]");
      else if (offset > totalLines) notes.push(`[The file has ${countOf(totalLines, "line")}; offset ${offset} is past the end.]`);
      else if (page.column > page.lineChars + 1) notes.push(`[Line ${offset} has ${countOf(page.lineChars, "char")}; column ${page.column} is past its end.]`);
      else if (page.nextColumn !== undefined) {
        const part = describeLinePart(offset, page.lineChars, page.column, page.nextColumn);
        notes.push(`[Lines ${offset}–${offset} of ${totalLines}; ${part}. Next: offset=${offset} column=${page.nextColumn}.]`);
      } else {
        const from = page.column > 1 ? `; ${describeLinePart(offset, page.lineChars, page.column)}` : "";
        if (shownTo < totalLines) notes.push(`[Lines ${offset}–${shownTo} of ${totalLines}${from}. Next: offset=${shownTo + 1}.]`);
        else if (from !== "") notes.push(`[Lines ${offset}–${shownTo} of ${totalLines}${from}.]`);
      }
      if (notes.length > 0) out.footer(`${view.text === "" ? "" : "\n"}${notes.join("\n")}`);
    },
  };
}
