// The list of sessions (newest first) and the choice of which one to show when the reader has not
// picked one: the most recently started running session, else the most recent one.
import type { SessionSummary } from "./contract.js";
import { el } from "./dom.js";
import { formatBytes, formatTime } from "./format.js";

export function newestFirst(sessions: readonly SessionSummary[]): SessionSummary[] {
  return [...sessions].sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt) || (a.id < b.id ? 1 : -1));
}

export function autoPick(sessions: readonly SessionSummary[]): SessionSummary | undefined {
  const sorted = newestFirst(sessions);
  return sorted.find((s) => s.status === "running") ?? sorted[0];
}

export function renderSessionList(root: HTMLElement, sessions: readonly SessionSummary[], selected: string | undefined, onPick: (id: string) => void): void {
  if (sessions.length === 0) {
    root.replaceChildren(el("li", { class: "muted" }, "No sessions yet."));
    return;
  }
  root.replaceChildren(
    ...newestFirst(sessions).map((s) => {
      const exit = s.exitCode === null ? "" : ` · exit ${s.exitCode}`;
      const item = el(
        "li",
        // Why it ended so, when its run said (createSpool's close({ error })): one line, at most 300 chars.
        { "data-session": s.id, "data-status": s.status, tabindex: "0", title: s.reason === undefined ? s.id : `${s.id}\n${s.status}: ${s.reason}` },
        el("div", { class: "command" }, s.command),
        el("div", { class: "meta" }, el("span", { class: `dot ${s.status}` }), `${s.status}${exit} · ${formatBytes(s.bytes)} · ${formatTime(s.startedAt)}`),
      );
      if (s.id === selected) item.setAttribute("aria-current", "true");
      item.addEventListener("click", () => onPick(s.id));
      item.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") onPick(s.id);
      });
      return item;
    }),
  );
}
