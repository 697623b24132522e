// What a session is, as `spool sessions` lists it: the command or surface that records it, the
// recording process, and how it ended. `spool run`, `spool mcp` and `createSpool` all write this one
// value, so every kind of session shows up the same way in the catalog and the viewer.
import type { ToolOutputState } from "../output/index.js";
import { value } from "../store/index.js";

export type SessionStatus = "running" | "succeeded" | "failed" | "interrupted";

export interface SessionRecord {
  command: string;
  cwd: string;
  pid: number;
  startedAt: string;
  endedAt: string | null;
  status: SessionStatus;
  exitCode: number | null;
  /** The tool output's truncation and details at the end (the transcript holds only the text). */
  truncation?: ToolOutputState["truncation"];
  details?: Record<string, unknown>;
}

export const SESSION_RECORD = value<SessionRecord>("spool", "run");

/** Sortable and readable: `20261129-194012-123ab`. */
export function newSessionId(): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
  // Milliseconds keep sessions started within one second in start order; two random chars keep ids unique.
  return `${stamp}-${String(d.getMilliseconds()).padStart(3, "0")}${Math.random().toString(36).slice(2, 4)}`;
}
