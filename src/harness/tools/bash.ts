// bash: thin on purpose. The exec env captures with the tool's limits and spill; the tool maps each
// update onto its sink (append → write, anything else → replace of the bounded view) and records the
// spill path and truncation once, as plain mutation.
import { applyUpdate, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, describeTruncation, exec, type CaptureView } from "../../capture/index.js";
import { HarnessError, type ToolDefinition } from "../tool.js";

export interface BashArgs {
  readonly command: string;
  /** Seconds. */
  readonly timeout?: number;
}

/**
 * What bash records in its output's `details`, the contract every reader shares (`spool run`, the
 * session view, the viewer's status bar): how the command ended and where its full output is.
 */
export interface BashDetails {
  exitCode?: number;
  signal?: string;
  timedOut?: true;
  aborted?: true;
  binary?: true;
  /** Absolute path of the spill file, once the output outgrew the window. */
  spillPath?: string;
}

/** Reads bash's details from any tool output's details, keeping only well-typed fields. */
export function bashDetails(details: Readonly<Record<string, unknown>> | undefined): BashDetails {
  const d = details ?? {};
  const out: BashDetails = {};
  if (typeof d["exitCode"] === "number") out.exitCode = d["exitCode"];
  if (typeof d["signal"] === "string") out.signal = d["signal"];
  if (d["timedOut"] === true) out.timedOut = true;
  if (d["aborted"] === true) out.aborted = true;
  if (d["binary"] === true) out.binary = true;
  if (typeof d["spillPath"] === "string") out.spillPath = d["spillPath"];
  return out;
}

export interface BashToolOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly maxBytes?: number;
  readonly maxLines?: number;
  readonly retain?: "head" | "tail";
  /** Seconds, for calls that give no timeout of their own (default: none). */
  readonly timeout?: number;
}

// Node's timers hold at most 2^31-1 ms; a longer timeout would fire at once.
const MAX_TIMEOUT_SECONDS = 2_147_483;

export function createBashTool(options: BashToolOptions = {}): ToolDefinition<BashArgs> {
  const output = { retain: options.retain ?? "tail", maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES, maxLines: options.maxLines ?? DEFAULT_MAX_LINES } as const;
  return {
    name: "bash",
    description:
      "Run a shell command. Output (stdout and stderr interleaved) is cleaned and bounded; when it is cut, the result says what was kept and names a file with the full output that the read tool can page through.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line, run with bash -c." },
        timeout: { type: "number", description: "Seconds before the command's process group is killed." },
      },
      required: ["command"],
    },
    output,
    kind: "exec",
    async execute(toolCallId, args, signal, out, ctx) {
      if (typeof args?.command !== "string" || args.command.trim() === "") {
        throw new HarnessError("SPOOL_HARNESS_BAD_CALL", 'bash needs a non-empty "command" string argument');
      }
      if (args.timeout !== undefined && !(typeof args.timeout === "number" && args.timeout > 0 && args.timeout <= MAX_TIMEOUT_SECONDS)) {
        throw new HarnessError("SPOOL_HARNESS_BAD_CALL", `bash "timeout" must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, got ${JSON.stringify(args.timeout)}`);
      }
      const timeout = args.timeout ?? options.timeout;
      let view: CaptureView | undefined;
      const result = await exec(args.command, {
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        ...(options.env !== undefined ? { env: options.env } : {}),
        ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
        signal,
        capture: { limits: output, spill: { dir: ctx.workspace.dir, id: toolCallId } },
        onUpdate: (u) => {
          const before = view?.text.length;
          view = applyUpdate(view, u);
          const v = view;
          // One batch: the text and its totals are published together.
          out.batch(() => {
            if (u.kind === "append") out.write(u.text);
            // A slide of the text the sink holds is two explicit ops; anything else is a replacement.
            else if (u.kind === "slide" && out.state.content[0].text.length === before) out.slide(u.drop, u.text);
            else out.replace(v.text);
            out.capture(v);
            if (v.spillPath !== undefined && out.details.spillPath !== v.spillPath) out.details.spillPath = v.spillPath;
          });
        },
      });
      if (out.state.content[0].text !== result.text) out.replace(result.text);
      out.capture(result);
      if (result.spillPath !== undefined && out.details.spillPath !== result.spillPath) out.details.spillPath = result.spillPath;
      // How it ended, as plain details: a viewer shows it, and `spool run` exits with it.
      out.details.exitCode = result.exitCode;
      if (result.signal) out.details.signal = result.signal;
      if (result.timedOut) out.details.timedOut = true;
      if (result.aborted) out.details.aborted = true;
      if (result.binary) out.details.binary = true;
      const footer = describeTruncation(result, output.retain);
      if (footer) out.footer(`${result.text.endsWith("\n") || result.text === "" ? "" : "\n"}\n${footer}`);
      if (result.timedOut) throw new Error(`Command timed out after ${timeout}s; its process group was killed`);
      if (result.aborted) throw new Error(`Command aborted (exit ${result.exitCode})`);
      if (result.exitCode !== 0) throw new Error(`Command exited with code ${result.exitCode}`);
    },
  };
}
