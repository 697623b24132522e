// A capture update onto a sink: append → write, anything else → replace of the bounded view; the
// truncation totals and the spill path ride along as plain mutation. Shared by the bash call and the
// background process that takes its command over.
import type { CaptureUpdate, CaptureView } from "../capture/index.js";
import type { ToolOutput } from "../output/index.js";

/** `view` is the view after `u` was applied. */
export function mirrorUpdate(out: ToolOutput, view: CaptureView, u: CaptureUpdate): void {
  // One batch: the text and its totals are published together.
  out.batch(() => {
    if (u.kind === "append") out.write(u.text);
    else out.replace(view.text);
    out.capture(view);
    if (view.spillPath !== undefined && out.details.spillPath !== view.spillPath) out.details.spillPath = view.spillPath;
  });
}
