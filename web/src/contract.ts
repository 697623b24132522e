// The shapes the server publishes (the contract between `spool run --serve` / `spool serve` and this
// page), imported from the code that produces them. Only types: the page must not pull server code
// into the bundle.
import type { CallView, SessionSummary, SessionView } from "../../src/cli/session-view.js";

export type { BashDetails } from "../../src/harness/index.js";
export type { SessionStatus, SessionSummary } from "../../src/cli/session-view.js";

/** State `sessions`. */
export interface SessionsState {
  readonly sessions: readonly SessionSummary[];
}

/** One call of a session. */
export type SessionCall = Readonly<CallView>;

/** State `session:<id>`. */
export type SessionState = Readonly<SessionView>;

export const SESSIONS_STATE = "sessions";
export const sessionStateName = (id: string): string => `session:${id}`;
