// The session's transcript: the model-facing tool results, one entry each, in order.
import type { ToolResultMessage } from "../../src/context/messages.js";
import { el } from "./dom.js";

function textOf(message: ToolResultMessage): string {
  const parts: string[] = [];
  for (const part of message.content) {
    if (part.type === "text") parts.push(part.text);
    else if (part.type === "image") parts.push("[image]");
    else parts.push(`[${part.type}]`);
  }
  return parts.join("\n");
}

export function renderTranscript(root: HTMLElement, transcript: readonly ToolResultMessage[]): void {
  if (transcript.length === 0) {
    root.replaceChildren(el("p", { class: "muted" }, "No tool results yet."));
    return;
  }
  root.replaceChildren(
    ...transcript.map((m) => {
      const head = el(
        "div",
        { class: "entry-head" },
        el("span", { class: "tool" }, m.toolName ?? "tool"),
        el("span", { class: "muted" }, m.toolCallId),
        el("span", { class: m.isError ? "badge error" : "badge ok" }, m.isError ? `error${m.errorCode ? ` (${m.errorCode})` : ""}` : "ok"),
      );
      if (m.spillPath) head.append(el("span", { class: "muted" }, `spill: ${m.spillPath}`));
      return el("article", { class: "entry", "data-call": m.toolCallId }, head, el("pre", { class: "entry-text" }, textOf(m)));
    }),
  );
  // A result's verdict (the error, the exit code) is at its end.
  root.querySelectorAll<HTMLElement>(".entry-text").forEach((pre) => {
    pre.scrollTop = pre.scrollHeight;
  });
}
