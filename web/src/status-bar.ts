// The status line of the selected session and call: state / exit code, elapsed, bytes, lines, whether
// the window is truncated, and a link to the spill file that holds the full output.
import type { BashDetails, SessionCall, SessionState } from "./contract.js";
import { byId } from "./dom.js";
import { elapsedMs, formatBytes, formatElapsed } from "./format.js";

export interface StatusBar {
  show(session: SessionState, call: SessionCall | undefined): void;
  /** Re-render the elapsed time (ticks while the session runs). */
  tick(): void;
  clear(): void;
}

function stateLabel(s: SessionState): string {
  if (s.status === "running") return "running";
  const exit = s.exitCode === null ? "" : ` · exit ${s.exitCode}`;
  return `${s.status}${exit}`;
}

function basename(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return i < 0 ? path : path.slice(i + 1);
}

export function createStatusBar(token: string): StatusBar {
  const state = byId("status-state");
  const elapsed = byId("status-elapsed");
  const bytes = byId("status-bytes");
  const lines = byId("status-lines");
  const truncated = byId("status-truncated");
  const spill = byId<HTMLAnchorElement>("status-spill");
  let current: SessionState | undefined;

  const renderElapsed = (): void => {
    const ms = current ? elapsedMs(current.startedAt, current.endedAt, Date.now()) : undefined;
    elapsed.textContent = ms === undefined ? "–" : formatElapsed(ms);
  };

  return {
    show(session, call) {
      current = session;
      state.textContent = stateLabel(session);
      state.dataset.status = session.status;
      renderElapsed();
      // A session replayed from an old log may lack the counters; show what is known.
      const raw = call?.output?.truncation;
      const t = raw && typeof raw.totalBytes === "number" && typeof raw.totalLines === "number" ? raw : undefined;
      bytes.textContent = t ? formatBytes(t.totalBytes) : "–";
      bytes.title = t ? `${t.totalBytes} bytes written, ${t.outputBytes} shown` : "";
      lines.textContent = t ? `${t.totalLines} lines` : "–";
      truncated.textContent = t ? (t.truncated ? `truncated: yes (${t.outputLines} of ${t.totalLines} lines shown)` : "truncated: no") : "–";
      truncated.dataset.truncated = String(t?.truncated ?? false);
      const path = (call?.output?.details as BashDetails | undefined)?.spillPath;
      if (typeof path === "string" && path) {
        const name = basename(path);
        spill.href = `/files/${encodeURIComponent(session.id)}/spill/${encodeURIComponent(name)}?token=${encodeURIComponent(token)}`;
        spill.textContent = `full output: ${name}`;
        spill.hidden = false;
      } else {
        spill.removeAttribute("href");
        spill.hidden = true;
      }
    },
    tick: renderElapsed,
    clear() {
      current = undefined;
      for (const node of [state, bytes, lines, truncated]) node.textContent = "–";
      delete state.dataset.status;
      renderElapsed();
      spill.hidden = true;
    },
  };
}
