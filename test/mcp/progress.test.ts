// The progress pacer on its own: whatever the producer's rate, at most one notification per interval,
// the latest state winning, progress strictly growing, and nothing after stop(). A call that prints
// nothing gets heartbeats instead, so the SDK's client keeps a call alive that outlives its timeout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { openAgentSession } from "../../dist/harness/index.js";
import { createMcpServer, createProgressPacer, latestLine, type ProgressUpdate } from "../../dist/mcp/index.js";
import type { ToolOutputState } from "../../dist/output/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { textOf } from "./helpers.js";

afterAll(removeTempDirs);

const state = (text: string, totalBytes: number) => ({ content: [{ type: "text", text }], truncation: { totalBytes } }) as unknown as ToolOutputState;

describe("progress pacer", () => {
  it("sends at most 10 a second under a flood of updates, the latest one last, progress growing", async () => {
    const sent: (ProgressUpdate & { at: number })[] = [];
    const t0 = performance.now();
    const pacer = createProgressPacer((u) => sent.push({ ...u, at: performance.now() - t0 }), 100);
    let bytes = 0;
    while (performance.now() - t0 < 1000) {
      bytes += 10;
      pacer.update(state(`line ${bytes}\n`, bytes));
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 150)); // on purpose: past the last 100 ms interval
    // Timers may fire late on a busy machine (fewer sends), never early (more). The count is the rate
    // check; a single gap is read in the callback, so a process descheduled between the pacer's clock
    // and the callback's (seen: 17 ms at load 6 on 2 cores) shortens that gap: only a floor is checked.
    const elapsed = performance.now() - t0;
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(sent.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 1);
    for (let i = 1; i < sent.length; i++) {
      expect(sent[i]!.progress).toBeGreaterThan(sent[i - 1]!.progress);
      expect(sent[i]!.at - sent[i - 1]!.at).toBeGreaterThanOrEqual(50);
    }
    expect(sent.at(-1)).toMatchObject({ progress: bytes, message: `line ${bytes}` });
    pacer.stop();
  });

  it("never repeats a progress value: a redraw that adds no bytes counts one more, an unchanged state sends nothing", async () => {
    const sent: ProgressUpdate[] = [];
    const pacer = createProgressPacer((u) => sent.push(u), 10);
    const settle = () => new Promise((r) => setTimeout(r, 30)); // on purpose: past the 10 ms interval
    pacer.update(state("[#   ] 25%", 10));
    await settle();
    pacer.update(state("[##  ] 50%", 10)); // a `\r` frame of the same length
    await settle();
    pacer.update(state("[##  ] 50%", 10)); // nothing new
    await settle();
    pacer.update(state("[####] 100%\n", 12));
    await settle();
    pacer.update(state("[####] 100%\n\n", 13)); // a blank line: bytes grew, the same line
    await settle();
    expect(sent).toEqual([
      { progress: 10, message: "[#   ] 25%" },
      { progress: 11, message: "[##  ] 50%" },
      { progress: 12, message: "[####] 100%" },
      { progress: 13, message: "[####] 100%" },
    ]);
    pacer.stop();
  });

  it("sends nothing after stop, not even a pending update", async () => {
    const sent: ProgressUpdate[] = [];
    const pacer = createProgressPacer((u) => sent.push(u), 50);
    pacer.update(state("a\n", 5));
    pacer.update(state("a\nb\n", 9)); // pending: within the interval
    pacer.stop();
    await new Promise((r) => setTimeout(r, 100)); // on purpose: past the 50 ms interval the pending update was due in
    pacer.update(state("a\nb\nc\n", 12));
    expect(sent).toEqual([{ progress: 5, message: "a" }]);
  });

  it("the message is the latest non-empty line, shortened", () => {
    expect(latestLine("one\ntwo\n\n  \n")).toBe("two");
    expect(latestLine("")).toBe("");
    expect(latestLine(`${"x".repeat(500)}\n`)).toHaveLength(200);
  });

  it("a quiet call gets heartbeats, progress growing, saying how long it has run; none after stop", async () => {
    const sent: (ProgressUpdate & { at: number })[] = [];
    const t0 = performance.now();
    const pacer = createProgressPacer((u) => sent.push({ ...u, at: performance.now() - t0 }), 10, 100);
    await new Promise((r) => setTimeout(r, 350)); // on purpose: three heartbeat intervals
    pacer.update(state("compiling\n", 10));
    await new Promise((r) => setTimeout(r, 180)); // on purpose: past one more interval after the output
    pacer.stop();
    const count = sent.length;
    await new Promise((r) => setTimeout(r, 250)); // on purpose: two more intervals, with nothing sent
    expect(sent.length).toBe(count);
    // Timers fire late on a busy machine, never early: at least the three quiet beats, the output, one more beat.
    const beats = sent.filter((u) => u.message.startsWith("running "));
    expect(beats[0]).toMatchObject({ progress: 0, message: "running 0s, no output yet" });
    expect(beats[0]!.at).toBeGreaterThanOrEqual(95);
    expect(sent.some((u) => u.message === "compiling" && u.progress === 10)).toBe(true);
    expect(sent.at(-1)!.message).toBe("running 0s, no new output for 0s");
    expect(sent.at(-1)!.progress).toBe(11);
    for (let i = 1; i < sent.length; i++) expect(sent[i]!.progress).toBeGreaterThan(sent[i - 1]!.progress);
    expect(createProgressPacer(() => expect.unreachable(), 10, 0)).toBeDefined(); // 0: no heartbeat
  });

  it("a silent command outlives the client's request timeout with resetTimeoutOnProgress: true", async () => {
    const dir = tempDir("spool-mcp-heartbeat-");
    const session = await openAgentSession({ root: dir, label: "mcp", tools: { cwd: dir, recall: false } });
    const server = createMcpServer(session, { version: "0.0.0", progressHeartbeatMs: 300 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "spool-test", version: "1.0.0" });
    await client.connect(clientSide);
    // A progress notification after the result has no handler left: the SDK reports it here.
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    try {
      const beats: { progress: number; message?: string }[] = [];
      // 2.5 s of silence against a 1 s timeout: without heartbeats the call times out at 1 s (MCP error -32001).
      const result = await client.callTool({ name: "bash", arguments: { command: "sleep 2.5; echo done" } }, undefined, {
        timeout: 1000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => beats.push(p),
      });
      expect(textOf(result)).toContain("done");
      expect(result.structuredContent).toMatchObject({ exitCode: 0 });
      const quiet = beats.filter((p) => p.message?.startsWith("running "));
      expect(quiet.length).toBeGreaterThanOrEqual(3);
      expect(quiet[0]!.message).toBe("running 0s, no output yet");
      expect(quiet.at(-1)!.message).toMatch(/^running [12]s, no output yet$/);
      // Nothing comes after the result: the heartbeat ended with the call.
      const after = beats.length;
      await new Promise((r) => setTimeout(r, 700)); // on purpose: two heartbeat intervals
      expect(beats.length).toBe(after);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
      await session.close();
    }
  });
});
