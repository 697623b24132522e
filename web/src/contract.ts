// The shapes the server publishes (issue 7's contract between `spool run --serve` / `spool serve` and
// this page). Only types: the page must not pull server code into the bundle.
import type { ToolResultMessage } from "../../src/context/messages.js";
import type { ToolOutputState } from "../../src/output/sink.js";

export type SessionStatus = "running" | "succeeded" | "failed" | "interrupted";

export interface SessionSummary {
  readonly id: string;
  readonly command: string;
  readonly status: SessionStatus;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly exitCode: number | null;
  readonly bytes: number;
}

/** State `sessions`. */
export interface SessionsState {
  readonly sessions: readonly SessionSummary[];
}

export interface SessionCall {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
  readonly output: ToolOutputState | undefined;
  readonly ended: boolean;
  readonly isError: boolean;
}

/** State `session:<id>`. */
export interface SessionState {
  readonly id: string;
  readonly command: string;
  readonly status: SessionStatus;
  readonly exitCode: number | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly calls: readonly SessionCall[];
  readonly transcript: readonly ToolResultMessage[];
}

export const SESSIONS_STATE = "sessions";
export const sessionStateName = (id: string): string => `session:${id}`;
