// What `spool run` shows while the command runs, on stderr (stdout is kept for the result).
// A terminal gets a live region — the last lines of the bounded view and a status line — redrawn
// in place by log-update (it erases exactly what it drew, wrapped lines included); anything else
// gets the new text appended as it arrives.
import cliTruncate from "cli-truncate";
import { createLogUpdate } from "log-update";
import { applyUpdate, formatBytes, type CaptureUpdate, type CaptureView } from "../capture/index.js";

export interface LiveDisplay {
  update(update: CaptureUpdate): void;
  stop(): void;
}

const REGION_LINES = 10;

function status(view: CaptureView | undefined, startedAt: number): string {
  const elapsed = ((performance.now() - startedAt) / 1000).toFixed(1);
  if (!view) return `⏵ ${elapsed}s · waiting for output`;
  const t = view.truncation;
  const parts = [`⏵ ${elapsed}s`, formatBytes(view.rawBytes), `${t.totalLines} line${t.totalLines === 1 ? "" : "s"}`];
  if (view.binary) parts.push("binary");
  else if (t.truncated) parts.push(`truncated (${t.truncatedBy})`);
  if (view.spillPath) parts.push(`spill: ${view.spillPath}`);
  return parts.join(" · ");
}

export function createLiveDisplay(stream: NodeJS.WriteStream): LiveDisplay {
  const startedAt = performance.now();
  let view: CaptureView | undefined;
  if (stream.isTTY) {
    const region = createLogUpdate(stream);
    const draw = (): void => {
      const columns = Math.max(20, (stream.columns || 80) - 1);
      const lines = view ? view.text.replace(/\n$/, "").split("\n").slice(-REGION_LINES) : [];
      const shown = lines.filter((l, i) => l !== "" || i > 0).map((l) => cliTruncate(l, columns));
      region([...shown, cliTruncate(status(view, startedAt), columns)].join("\n"));
    };
    // The status line's clock keeps moving while a command is silent.
    const tick = setInterval(draw, 1000);
    tick.unref();
    draw();
    return {
      update(u) {
        view = applyUpdate(view, u);
        draw();
      },
      stop() {
        clearInterval(tick);
        region.clear();
      },
    };
  }
  return {
    update(u) {
      const before = view;
      view = applyUpdate(view, u);
      if (u.kind === "append" || u.kind === "slide") stream.write(u.text);
      else if (u.kind === "replace") {
        if (before !== undefined && before.text !== "") stream.write("\n[… output moved on faster than shown …]\n");
        stream.write(u.view.text);
      }
    },
    stop() {
      if (view && view.text !== "" && !view.text.endsWith("\n")) stream.write("\n");
    },
  };
}
