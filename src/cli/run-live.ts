// What `spool run` shows while the command runs, on stderr (stdout is kept for the result). It is fed
// the same tool_update batches as any other consumer, folded into the tool's output state.
// A terminal gets a live region — the last lines of the bounded view and a status line — redrawn in
// place by log-update (it erases exactly what it drew, wrapped lines included); anything else gets the
// appended text as it arrives.
import cliTruncate from "cli-truncate";
import { createLogUpdate } from "log-update";
import { formatBytes } from "../capture/index.js";
import type { Op } from "../delta/index.js";
import type { ToolOutputState } from "../output/index.js";

export interface LiveDisplay {
  update(ops: readonly Op[], state: ToolOutputState): void;
  stop(): void;
}

const REGION_LINES = 10;
const TEXT_PATH = '["content",0,"text"]';

function status(state: ToolOutputState | undefined, startedAt: number): string {
  const elapsed = ((performance.now() - startedAt) / 1000).toFixed(1);
  if (!state) return `⏵ ${elapsed}s · waiting for output`;
  const t = state.truncation;
  const parts = [`⏵ ${elapsed}s`, formatBytes(t.totalBytes), `${t.totalLines} line${t.totalLines === 1 ? "" : "s"}`];
  if (state.details.binary) parts.push("binary");
  else if (t.truncated) parts.push(`truncated (${t.truncatedBy})`);
  if (typeof state.details.spillPath === "string") parts.push(`spill: ${state.details.spillPath}`);
  return parts.join(" · ");
}

export function createLiveDisplay(stream: NodeJS.WriteStream): LiveDisplay {
  const startedAt = performance.now();
  let state: ToolOutputState | undefined;
  if (stream.isTTY) {
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
      update(_ops, s) {
        state = s;
        draw();
      },
      stop() {
        clearInterval(tick);
        region.clear();
      },
    };
  }
  let shownAny = false;
  return {
    update(ops, s) {
      for (const op of ops) {
        if (op[0] === "r") {
          const text = (op[1] as ToolOutputState).content[0].text;
          if (text) stream.write(text);
          shownAny ||= text !== "";
        } else if (op[0] === "a" && JSON.stringify(op[1]) === TEXT_PATH) {
          stream.write(op[2]);
          shownAny = true;
        } else if (op[0] === "s" && JSON.stringify(op[1]) === TEXT_PATH) {
          if (shownAny) stream.write("\n[… output moved on faster than shown …]\n");
          stream.write(op[2] as string);
          shownAny = true;
        }
      }
      state = s;
    },
    stop() {
      const text = state?.content[0].text ?? "";
      if (shownAny && text !== "" && !text.endsWith("\n")) stream.write("\n");
    },
  };
}
