// What `spool run` shows while the command runs, on stderr (stdout is kept for the result). It is fed
// the same tool_update batches as any other consumer, folded into the tool's output state.
// A terminal gets a live region — the last lines of the bounded view and a status line — redrawn in
// place by log-update (it erases exactly what it drew, wrapped lines included); anything else gets
// each cleaned line once.
import { formatBytes, type Retain } from "../capture/index.js";
import { countOf } from "../errors/index.js";
import { bashDetails } from "../harness/index.js";
import type { ToolOutputState } from "../output/index.js";

export interface LiveDisplay {
  update(state: ToolOutputState): void;
  stop(): void;
  /** Lines went to the stream as they arrived (not a terminal region that is erased at the end). */
  readonly streamed: boolean;
  /** What of the final text was not streamed: the footer and status sentence. */
  rest(text: string): string;
}

const REGION_LINES = 10;

function status(state: ToolOutputState | undefined, startedAt: number): string {
  const elapsed = ((performance.now() - startedAt) / 1000).toFixed(1);
  if (!state) return `⏵ ${elapsed}s · waiting for output`;
  const t = state.truncation;
  const parts = [`⏵ ${elapsed}s`, formatBytes(t.totalBytes), countOf(t.totalLines, "line")];
  const d = bashDetails(state.details);
  if (d.binary) parts.push("binary");
  else if (t.truncated) parts.push(`truncated (${t.truncatedBy})`);
  if (d.spillPath !== undefined) parts.push(`spill: ${d.spillPath}`);
  return parts.join(" · ");
}

export async function createLiveDisplay(stream: NodeJS.WriteStream, retain: Retain): Promise<LiveDisplay> {
  if (!stream.isTTY) return lineStream(stream, retain);
  // Loaded only for a terminal: a piped run (an agent's) does not pay for them at startup.
  const [{ default: cliTruncate }, { createLogUpdate }] = await Promise.all([import("cli-truncate"), import("log-update")]);
  return terminalRegion(stream, cliTruncate, createLogUpdate);
}

function terminalRegion(
  stream: NodeJS.WriteStream,
  cliTruncate: typeof import("cli-truncate").default,
  createLogUpdate: typeof import("log-update").createLogUpdate,
): LiveDisplay {
  const startedAt = performance.now();
  let state: ToolOutputState | undefined;
  const region = createLogUpdate(stream);
  const draw = (): void => {
    const columns = Math.max(20, (stream.columns || 80) - 1);
    const lines = state ? state.content[0].text.replace(/\n$/, "").split("\n").slice(-REGION_LINES) : [];
    const shown = lines.filter((l, i) => l !== "" || i > 0).map((l) => cliTruncate(l, columns));
    region([...shown, cliTruncate(status(state, startedAt), columns)].join("\n"));
  };
  // The status line's clock keeps moving while a command is silent.
  const tick = setInterval(draw, 1000);
  tick.unref();
  draw();
  return {
    streamed: false,
    update(s) {
      state = s;
      draw();
    },
    stop() {
      clearInterval(tick);
      region.clear();
    },
    rest: (text) => text,
  };
}

/**
 * Not a terminal (a pipe, a log file, CI): every cleaned line is written once, in order, when it is
 * complete. Reprinting the window on every flush turned a 234 KB build into 685 KB of log. The window
 * is the first `outputLines` lines of the text (a footer and status sentence follow it and are not
 * counted), and the totals place it in the whole output: lines that left a tail window before they
 * were shown are summarised in one line, never lost (they are in the spill).
 */
function lineStream(stream: NodeJS.WriteStream, retain: Retain): LiveDisplay {
  let printed = 0;
  let windowLines = 0;
  const show = (state: ToolOutputState, final: boolean): void => {
    const t = state.truncation;
    const lines = state.content[0].text.split("\n");
    windowLines = Math.min(t.outputLines, lines.length);
    // The window's last line is complete when a newline follows it; at the end it is shown regardless.
    const complete = final || lines.length > windowLines ? windowLines : windowLines - 1;
    const endsOpen = lines.length <= windowLines && windowLines > 0;
    const before = retain === "head" ? 0 : Math.max(0, t.totalLines - (endsOpen ? 1 : 0) - complete);
    let out = "";
    if (printed < before) {
      const skipped = before - printed;
      out += `[… ${countOf(skipped, "line")} went by faster than shown; they are in the full output …]\n`;
      printed = before;
    }
    for (let i = printed - before; i < complete; i++) out += `${lines[i]}\n`;
    printed = Math.max(printed, before + complete);
    if (out !== "") stream.write(out);
  };
  let last: ToolOutputState | undefined;
  return {
    streamed: true,
    update(state) {
      last = state;
      show(state, false);
    },
    stop() {
      if (last) show(last, true);
    },
    rest: (text) => text.split("\n").slice(windowLines).join("\n"),
  };
}
