// The live viewer: follows the `sessions` state and the selected `session:<id>` state over SSE with the
// library's own subscribe() (decode + apply from spool/delta), and renders them with plain DOM.
import { subscribe, type Subscription, type SubscriptionStatus } from "../../src/wire/client.js";
import { SESSIONS_STATE, sessionStateName, type SessionCall, type SessionState, type SessionsState, type SessionSummary } from "./contract.js";
import { byId, el } from "./dom.js";
import { createOutputPane } from "./output-pane.js";
import { autoPick, renderSessionList } from "./session-list.js";
import { createStatusBar } from "./status-bar.js";
import { renderTranscript } from "./transcript.js";

const params = new URLSearchParams(location.search);
const token = params.get("token") ?? "";
const stateUrl = (name: string): string => `${location.origin}/v1/state/${encodeURIComponent(name)}`;

const conn = byId("conn");
const list = byId("sessions");
const tabs = byId("calls");
const title = byId("session-title");
const transcriptRoot = byId("transcript");
const pane = createOutputPane(byId("output-scroll"), byId("output"), byId<HTMLButtonElement>("jump"), byId("images"));
const status = createStatusBar(token);

let sessions: readonly SessionSummary[] = [];
let selected: string | undefined = params.get("session") ?? undefined;
// Once the reader picks a session (or the URL names one), a newer run no longer steals the view.
let readerPicked = selected !== undefined;
let sessionSub: Subscription<SessionState> | undefined;
let current: SessionState | undefined;
let pickedCall: string | undefined;
let transcriptShown = -1;

function showConnection(s: SubscriptionStatus, detail?: string): void {
  conn.textContent = s === "live" ? "live" : s === "closed" ? "disconnected" : s;
  conn.dataset.status = s;
  conn.title = detail ?? "";
}

function chooseCall(s: SessionState): SessionCall | undefined {
  if (pickedCall !== undefined) {
    const picked = s.calls.find((c) => c.id === pickedCall);
    if (picked) return picked;
  }
  // The running call if there is one, else the last: that is the output a reader came to watch.
  return [...s.calls].reverse().find((c) => !c.ended) ?? s.calls[s.calls.length - 1];
}

function renderCalls(s: SessionState, shown: SessionCall | undefined): void {
  if (s.calls.length < 2) {
    tabs.replaceChildren();
    return;
  }
  tabs.replaceChildren(
    ...s.calls.map((c) => {
      const b = el("button", { type: "button", "data-call": c.id, class: c.isError ? "error" : "" }, `${c.name} ${c.id}`);
      if (c === shown) b.setAttribute("aria-current", "true");
      b.addEventListener("click", () => {
        pickedCall = c.id;
        if (current) renderSession(current);
      });
      return b;
    }),
  );
}

function renderSession(s: SessionState): void {
  current = s;
  const call = chooseCall(s);
  title.textContent = s.command;
  document.title = `spool · ${s.command} · ${s.status}`;
  renderCalls(s, call);
  const content = call?.output?.content;
  if (content) {
    const [text, ...images] = content;
    pane.show(text.text, images);
  } else pane.show("", []);
  status.show(s, call);
  if (s.transcript.length !== transcriptShown) {
    transcriptShown = s.transcript.length;
    renderTranscript(transcriptRoot, s.transcript);
  }
}

function select(id: string): void {
  if (id === selected && sessionSub) return;
  selected = id;
  sessionSub?.close();
  current = undefined;
  pickedCall = undefined;
  transcriptShown = -1;
  pane.clear("waiting for output…");
  status.clear();
  transcriptRoot.replaceChildren();
  title.textContent = id;
  renderSessionList(list, sessions, selected, pick);
  sessionSub = undefined;
  let sub: Subscription<SessionState> | undefined;
  sub = subscribe<SessionState>(stateUrl(sessionStateName(id)), {
    token,
    onValue: renderSession,
    onStatus: (s, detail) => {
      if (s !== "closed" || sessionSub !== sub) return;
      // The server ends a session's stream when the session is gone (removed, or collected by gc): what
      // is on screen stays, marked, and picking the session again subscribes anew (it may be back).
      sessionSub = undefined;
      if (current) title.textContent = `${current.command} (removed)`;
      else if (detail) pane.clear(`session ${id} is not available: ${detail}`);
    },
  });
  sessionSub = sub;
}

function pick(id: string): void {
  readerPicked = true;
  const url = new URL(location.href);
  url.searchParams.set("session", id);
  history.replaceState(null, "", url);
  select(id);
}

if (!token) {
  showConnection("closed", "no token");
  pane.clear("This page needs the token spool printed: open the full URL (…/?token=…) from `spool run --serve` or `spool serve`.");
} else {
  if (selected !== undefined) select(selected);
  else pane.clear("waiting for a session…");
  subscribe<SessionsState>(stateUrl(SESSIONS_STATE), {
    token,
    onStatus: showConnection,
    onValue: (v) => {
      sessions = v.sessions;
      const best = readerPicked ? undefined : autoPick(sessions);
      // Follow the newest running session; when nothing runs, keep what is on screen.
      if (best && best.id !== selected && (selected === undefined || best.status === "running")) select(best.id);
      else renderSessionList(list, sessions, selected, pick);
    },
  });
  setInterval(() => {
    if (current?.status === "running") status.tick();
  }, 200);
}
