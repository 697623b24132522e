// An AbortSignal already aborted when exec/start is called: nothing is spawned, the run settles as aborted.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InputClosedError, exec, start } from "../../src/capture/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function aborted(): AbortSignal {
  const ac = new AbortController();
  ac.abort();
  return ac.signal;
}

describe("an already-aborted signal", () => {
  // Before: the command was spawned and killed at once; `echo > f` created f 16 times in 20.
  for (const [name, options] of [
    ["pipes", {}],
    ["a terminal", { pty: true }],
    ["stdin piped", { stdin: "pipe" as const }],
  ] as const) {
    it(`spawns nothing (${name}): no pid, no side effect, settled as aborted`, async () => {
      const dir = tempDir("spool-preabort-");
      const marks = Array.from({ length: 5 }, (_, i) => join(dir, `made-${i}`));
      for (const mark of marks) {
        const handle = start(`echo hi > ${mark}; sleep 30`, { ...options, signal: aborted() });
        expect(handle.pid).toBeUndefined();
        const r = await handle.result;
        expect(r.aborted).toBe(true);
        expect(r.timedOut).toBe(false);
        expect(r.exitCode).toBe(143);
        expect(r.signal).toBeNull();
        expect(r.text).toBe("");
        expect(r.durationMs).toBeLessThan(1000);
      }
      // What a spawned shell would have written, given time to write it.
      await pause(300);
      for (const mark of marks) expect(existsSync(mark)).toBe(false);
    });
  }

  it("exec settles the same way", async () => {
    const dir = tempDir("spool-preabort-");
    const r = await exec(`touch ${join(dir, "made")}`, { signal: aborted() });
    expect(r).toMatchObject({ aborted: true, timedOut: false, exitCode: 143, signal: null, text: "" });
    await pause(200);
    expect(existsSync(join(dir, "made"))).toBe(false);
  });

  it("a signal that already timed out (AbortSignal.timeout) settles as timed out, not aborted", async () => {
    const signal = AbortSignal.timeout(1);
    await pause(20);
    const dir = tempDir("spool-preabort-");
    const r = await exec(`touch ${join(dir, "made")}`, { signal });
    expect(r).toMatchObject({ aborted: false, timedOut: true, exitCode: 143, signal: null });
    await pause(200);
    expect(existsSync(join(dir, "made"))).toBe(false);
  });

  it("opens no spill file, and the handle behaves as a finished command's", async () => {
    const dir = tempDir("spool-preabort-");
    const spillDir = join(dir, "spill");
    const handle = start("seq 100000", { signal: aborted(), stdin: "pipe", capture: { spill: { direct: true, dir: spillDir } } });
    let activity = 0;
    handle.onActivity(() => activity++);
    const r = await handle.result;
    expect(r.spillPath).toBeUndefined();
    expect(existsSync(spillDir) ? readdirSync(spillDir) : []).toEqual([]);
    expect(activity).toBe(1);
    expect(() => handle.write("x")).toThrow(InputClosedError);
    expect(() => handle.kill()).not.toThrow();
    expect(handle.view().text).toBe("");
    expect(handle.waitingForInput()).toBe(false);
  });

  it("still rejects invalid options first", () => {
    expect(() => start("true", { signal: aborted(), timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});
