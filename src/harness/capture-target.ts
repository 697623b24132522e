// A capture update onto a sink: append → write, anything else → replace of the bounded view; the
// truncation totals and the spill path ride along as plain mutation. Shared by the bash call and the
// background process that takes its command over.
import type { CaptureUpdate, CaptureView } from "../capture/index.js";
import type { ToolOutput } from "../output/index.js";

/** `view` is the view after `u` was applied to `previous`. */
export function mirrorUpdate(out: ToolOutput, previous: CaptureView | undefined, view: CaptureView, u: CaptureUpdate): void {
  const before = previous?.text.length;
  // One batch: the text and its totals are published together.
  out.batch(() => {
    if (u.kind === "append") out.write(u.text);
    // A slide of the text the sink holds is two explicit ops; anything else is a replacement.
    else if (u.kind === "slide" && out.state.content[0].text.length === before) out.slide(u.drop, u.text);
    else out.replace(view.text);
    out.capture(view);
    if (view.spillPath !== undefined && out.details.spillPath !== view.spillPath) out.details.spillPath = view.spillPath;
  });
}
