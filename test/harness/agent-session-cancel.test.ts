// A call cancelled after its command was handed over as a background process: the caller never learns
// the processId (a cancelled MCP request gets no response), so the process is stopped with the call.
// Real processes, a real session on disk.
import { afterAll, describe, expect, it } from "vitest";
import { openAgentSession } from "../../dist/harness/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

describe("an agent session's cancelled call", () => {
  it("a background bash call cancelled once its command was handed over stops that process; one not cancelled keeps running", async () => {
    const dir = tempDir("spool-agent-cancel-");
    const session = await openAgentSession({ root: dir, label: "cancel", tools: { cwd: dir } });
    try {
      // The cancel lands as the call's end is recorded: after the hand-over, before the caller has the result.
      const abort = new AbortController();
      session.onCallRecord((_id, record) => {
        if (record.endedAt !== null && record.command === "echo cancelled; sleep 60") abort.abort();
      });
      const cancelled = await session.call("bash", { command: "echo cancelled; sleep 60", background: true }, { signal: abort.signal });
      expect(abort.signal.aborted).toBe(true);
      const kept = await session.call("bash", { command: "echo kept; sleep 60", background: true });
      const status = (text: string) => session.harness.processes.list().find((p) => p.processId === /proc-\w+/.exec(text)![0])?.status.state;
      expect(status(cancelled.text)).toBe("killed");
      expect(status(kept.text)).toBe("running");
    } finally {
      await session.close();
    }
  });
  it("a process_output or process_write call cancelled as its end is recorded leaves the process it read running", async () => {
    // Their details name the process they read (processId) too: the stop meant for bash's hand-over
    // killed the process a cancelled read or write only looked at.
    const dir = tempDir("spool-agent-cancel-");
    const session = await openAgentSession({ root: dir, label: "cancel", tools: { cwd: dir } });
    try {
      const started = await session.call("bash", { command: "cat; sleep 60", background: true });
      const processId = /proc-\w+/.exec(started.text)![0];
      let armed: AbortController | undefined;
      session.onCallRecord((_id, record) => {
        if (record.endedAt !== null) armed?.abort();
      });
      for (const [tool, args] of [
        ["process_output", { processId }],
        ["process_write", { processId, input: "hi\n", waitSeconds: 0 }],
      ] as const) {
        armed = new AbortController();
        await session.call(tool, args, { signal: armed.signal });
        expect(armed.signal.aborted).toBe(true);
        armed = undefined;
        expect(session.harness.processes.list().find((p) => p.processId === processId)?.status.state).toBe("running");
      }
    } finally {
      await session.close();
    }
  });
});
