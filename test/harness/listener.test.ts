import { afterAll, describe, expect, it } from "vitest";
import { createWorkspace } from "../../src/context/index.js";
import { createBashTool, createHarness, readDurableOutput, type HarnessEvent } from "../../src/harness/index.js";
import type { ToolOutputState } from "../../src/output/index.js";
import { openSessionRepo } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

describe("harness listeners", () => {
  it("a listener that throws on a tool_update neither skips the durable batch nor fails or strands the call; other listeners still get every event", async () => {
    const root = tempDir("spool-listener-");
    const { store, dir } = await openSessionRepo(root, { backend: "jsonl" }).create();
    const reported: [unknown, HarnessEvent][] = [];
    const harness = createHarness({
      store,
      workspace: createWorkspace({ dir, keep: true }),
      tools: [createBashTool()],
      minIntervalMs: 5,
      onListenerError: (err, event) => reported.push([err, event]),
    });
    let n = 0;
    harness.on((e) => {
      if (e.type === "tool_update" && n++ === 0) throw new Error("ui bug");
    });
    const seen: HarnessEvent["type"][] = [];
    let durable: ToolOutputState | undefined;
    harness.on((e) => {
      seen.push(e.type);
      if (e.type === "tool_end") durable = readDurableOutput(store, "op", "c").output;
    });
    const [r] = await harness.runTools("op", [{ toolCallId: "c", toolName: "bash", args: { command: "for i in 1 2 3 4 5; do echo $i; sleep 0.05; done" } }]);
    expect(r!.isError).toBe(false);
    expect((r!.content[0] as { text: string }).text).toBe("1\n2\n3\n4\n5\n");
    expect(durable!.content[0].text).toBe("1\n2\n3\n4\n5\n");
    expect(reported).toHaveLength(1);
    expect((reported[0]![0] as Error).message).toBe("ui bug");
    expect(reported[0]![1].type).toBe("tool_update");
    expect(seen[0]).toBe("operation_start");
    expect(seen.at(-1)).toBe("operation_end");
    expect(seen.filter((t) => t === "tool_update").length).toBe(n);
    expect(harness.recover()).toEqual([]);
    await store.close();
  });
});
