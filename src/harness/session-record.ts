// What a session is, as `spool sessions` lists it: the command or surface that records it, the
// recording process, and how it ended. `spool run`, `spool mcp` and `createSpool` all write this one
// value, so every kind of session shows up the same way in the catalog and the viewer.
import type { ToolOutputState } from "../output/index.js";
import { value } from "../store/index.js";

export type SessionStatus = "running" | "succeeded" | "failed" | "timed out" | "interrupted";

export interface SessionRecord {
  command: string;
  cwd: string;
  pid: number;
  /** Where and when `pid` ran: its host, boot id, PID namespace and start time (absent in older records). */
  host?: string;
  boot?: string;
  pidns?: string;
  start?: number;
  startedAt: string;
  endedAt: string | null;
  status: SessionStatus;
  /**
   * Why the session ended so, when its caller said (createSpool's close({ error }): the error's name
   * and message): one printable line of at most 300 chars (endReason). Absent in older records and
   * when no reason was given.
   */
  reason?: string;
  exitCode: number | null;
  /** The tool output's truncation and details at the end (the transcript holds only the text). */
  truncation?: ToolOutputState["truncation"];
  details?: Record<string, unknown>;
}

export const SESSION_RECORD = value<SessionRecord>("spool", "run");

/**
 * One call's own record beside the session's: what it ran, when it started and ended, how it ended. A
 * session of many calls (`spool mcp`, `createSpool`, `spool run --session`) keeps one per call, so a
 * call never overwrites another's and `spool inspect` and the viewer can time each one.
 */
export const callRecord = (toolCallId: string) => value<SessionRecord>("spool", `run:${toolCallId}`);
