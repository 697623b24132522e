// The status line of the selected session and call: state / exit code, elapsed, bytes, lines, whether
// the window is truncated, and a link to the spill file that holds the full output.
import type { BashDetails, SessionCall, SessionState, SessionStatus } from "./contract.js";
import { countOf } from "../../src/errors/plural.js";
import { byId } from "./dom.js";
import { elapsedMs, formatBytes, formatElapsed } from "./format.js";

export interface StatusBar {
  show(session: SessionState, call: SessionCall | undefined): void;
  /** Re-render the elapsed time (ticks while the session runs). */
  tick(): void;
  clear(): void;
}

/** What the bar describes: the session, or the shown call when the session holds several. */
interface Shown {
  readonly status: SessionStatus;
  readonly exitCode: number | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
}

/**
 * A session of one call (`spool run`) ends as its call does, so the session's record speaks for it. In a
 * session of many calls (`spool mcp`, `run --session`) the session stays running between calls, so the
 * shown call speaks for itself: its own state, exit code and times (unknown times show as "–").
 */
function shownState(s: SessionState, call: SessionCall | undefined): Shown {
  if (call === undefined || s.calls.length < 2) return s;
  const d = (call.output?.details ?? {}) as BashDetails;
  // A live call is known from its events; a stored one also has its own record (times, status).
  const derived: SessionStatus = !call.ended
    ? "running"
    : d.timedOut === true
      ? "timed out"
      : d.aborted === true
        ? "interrupted"
        : call.isError
          ? "failed"
          : "succeeded";
  const status = call.ended && call.run ? call.run.status : derived;
  const exitCode = call.run?.exitCode ?? (typeof d.exitCode === "number" ? d.exitCode : null);
  return { status, exitCode, startedAt: call.run?.startedAt ?? "", endedAt: call.run?.endedAt ?? (call.ended ? "" : null) };
}

function stateLabel(s: Shown): string {
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
  let current: Shown | undefined;

  const renderElapsed = (): void => {
    const ms = current ? elapsedMs(current.startedAt, current.endedAt, Date.now()) : undefined;
    elapsed.textContent = ms === undefined ? "–" : formatElapsed(ms);
  };

  return {
    show(session, call) {
      current = shownState(session, call);
      state.textContent = stateLabel(current);
      state.dataset.status = current.status;
      renderElapsed();
      // A session replayed from an old log may lack the counters; show what is known.
      const raw = call?.output?.truncation;
      const t = raw && typeof raw.totalBytes === "number" && typeof raw.totalLines === "number" ? raw : undefined;
      bytes.textContent = t ? formatBytes(t.totalBytes) : "–";
      bytes.title = t ? `${countOf(t.totalBytes, "byte")} of cleaned text, ${t.outputBytes} shown` : "";
      lines.textContent = t ? countOf(t.totalLines, "line") : "–";
      truncated.textContent = t ? (t.truncated ? `truncated: yes (${t.outputLines} of ${countOf(t.totalLines, "line")} shown)` : "truncated: no") : "–";
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
