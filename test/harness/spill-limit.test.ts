// A runaway command under the agent tools: bash stops it at maxSpillBytes (spool run/mcp --max-spill)
// and says why, in the foreground and in the background, where process_output and process_list name
// the reason instead of a bare exit code. Real processes.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace } from "../../dist/context/index.js";
import { openAgentSession, type AgentSession } from "../../dist/harness/index.js";
import { createMemoryStore } from "../../dist/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

let session: AgentSession;
beforeAll(async () => {
  const dir = tempDir("spool-agent-spill-limit-");
  session = await openAgentSession({
    label: "spill-limit",
    store: createMemoryStore(),
    workspace: createWorkspace({ dir: join(dir, "ws"), keep: true }),
    tools: { cwd: dir, maxSpillBytes: 4_000_000 },
  });
});
afterAll(async () => {
  await session.close();
  removeTempDirs();
});

const STOPPED =
  /the command printed more than 4,000,000 bytes, the most its spill may keep \(spill\.maxBytes, --max-spill\), so its process group was killed\. What it printed up to then is in ".*\/spill\/call-\d+\.log"/;

describe("bash with maxSpillBytes", () => {
  it("stops a runaway foreground command with an error result that says why", async () => {
    const r = await session.call("bash", { command: "yes 'runaway output'" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("runaway output\n");
    expect(r.text).toMatch(STOPPED);
  });

  it("stops a runaway background process; process_output and process_list say why", async () => {
    const started = await session.call("bash", { command: "yes 'background output'", background: true });
    const processId = /proc-\w+/.exec(started.text)![0];
    let read = await session.call("process_output", { processId, waitSeconds: 1 });
    for (let i = 0; i < 50 && /still running/.test(read.text); i++) read = await session.call("process_output", { processId, waitSeconds: 1 });
    expect(read.text).toMatch(new RegExp(`\\[process ${processId} was stopped: ${STOPPED.source}`));
    expect(read.text).not.toMatch(/exited with code/);
    const list = await session.call("process_list", {});
    expect(list.text).toMatch(
      new RegExp(
        `${processId}  was stopped: the command printed more than 4,000,000 bytes, the most its spill may keep \\(spill\\.maxBytes, --max-spill\\), so its process group was killed  yes`,
      ),
    );
  });

  it("runs a command that stays within the limit to its end", async () => {
    const r = await session.call("bash", { command: "yes 'fine' | head -c 3000000" });
    expect(r.isError).toBe(false);
    expect(r.text).toMatch(/Full output: .*\/spill\/call-\d+\.log\]$/);
  });
});
