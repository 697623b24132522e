// A runaway command (`yes`, a log in a loop) is stopped before its spill passes spill.maxBytes or
// leaves less than spill.minFreeBytes on the disk, on both spill paths (the command writing the file
// itself, and the pipes). What it printed up to then stays in the spill, and nothing is left running.
// Real processes, a real file system.
import { readdirSync, statSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidOptionsError, SpillLimitError, exec, start } from "../../src/capture/index.js";
import { groupMembers } from "../support/process-group.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const work = tempDir("spool-spill-limit-");
afterAll(removeTempDirs);
let n = 0;
const fresh = (name: string) => join(work, `${name}-${++n}`);
const MiB = 1024 * 1024;

function spillFileOf(dir: string): string {
  const files = readdirSync(join(dir, "spill"));
  expect(files).toHaveLength(1);
  return join(dir, "spill", files[0]!);
}

async function failureOf(p: Promise<unknown>): Promise<SpillLimitError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SpillLimitError);
  return err as SpillLimitError;
}

describe("the spill-limit message", () => {
  it("says '1 byte' for a limit of one byte (--max-spill 1) and groups the digits of a larger one", () => {
    expect(new SpillLimitError("/s/call-1.log", { maxBytes: 1 }).message).toMatch(/^the command printed more than 1 byte, the most its spill may keep /);
    expect(new SpillLimitError("/s/call-1.log", { maxBytes: 8 * MiB }).message).toContain("more than 8,388,608 bytes, the most");
  });
});

describe.each([
  { path: "the command writing its spill", direct: true },
  { path: "the pipes", direct: false },
])("a runaway command on $path", ({ direct }) => {
  it("is stopped past spill.maxBytes, with what it printed kept and its group gone", async () => {
    const dir = fresh("max");
    const running = start("yes 'a line of runaway output' & wait", { capture: { spill: { dir, direct, maxBytes: 8 * MiB } } });
    const err = await failureOf(running.result);
    expect(err.code).toBe("SPOOL_CAPTURE_SPILL_LIMIT");
    expect(err.message).toMatch(/printed more than 8,388,608 bytes, the most its spill may keep \(spill\.maxBytes, --max-spill\)/);
    const file = spillFileOf(dir);
    expect(err.message).toContain(JSON.stringify(file));
    // Kept up to the limit, and past it what the command wrote before spool read it and the kill
    // landed: a reader's lag (≤ 64 MiB) and a few ms of `yes` at disk speed. Bounded; `yes` alone never stops.
    const size = statSync(file).size;
    expect(size).toBeGreaterThanOrEqual(8 * MiB);
    expect(size).toBeLessThan(8 * MiB + 512 * MiB);
    expect(err.view?.text).toContain("a line of runaway output\n");
    expect(err.view?.spillPath).toBe(file);
    // SIGKILL went to the group as exec settled; nothing in it outlives that.
    await until(() => groupMembers(running.pid!).length === 0, "the process group to be gone", 2000);
  });

  it("is stopped before the disk is left with less than spill.minFreeBytes", async () => {
    const dir = fresh("free");
    const fs = statfsSync(work);
    const free = fs.bavail * fs.bsize;
    // A reserve 48 MiB under today's free space: the command reaches it after ~48 MiB (sooner if
    // something else on this machine writes meanwhile), far before the 4 GiB it would print.
    const minFreeBytes = free - 48 * MiB;
    const err = await failureOf(exec("yes 'filling the disk' | head -c 4G", { capture: { spill: { dir, direct, minFreeBytes } } }));
    expect(err.message).toMatch(
      /^the disk holding ".*" is down to .* free \(spool leaves .*: spill\.minFreeBytes, --min-free\), so the command's process group was killed/,
    );
    expect(statSync(spillFileOf(dir)).size).toBeLessThan(1024 * MiB);
  });

  // Root may write into the blocks reserved for it, and the floor counted them (statfs bfree): on
  // this machine's disk, ~150 GiB more than any other program can use. The floor is for those
  // programs, so it counts what every user may take (bavail), root or not.
  it.skipIf(process.getuid?.() !== 0)("as root, does not count root's reserved blocks as free", async (ctx) => {
    const fs = statfsSync(work);
    const reserve = (fs.bfree - fs.bavail) * fs.bsize;
    if (reserve < 8 * 1024 * MiB) {
      ctx.skip(); // no reserve worth the name here (a tmpfs, or one set to 0): nothing to tell apart
      return;
    }
    const dir = fresh("reserve");
    // Halfway into root's reserve: the disk is below it for everyone but root, whatever else writes meanwhile.
    const minFreeBytes = fs.bavail * fs.bsize + Math.floor(reserve / 2);
    // 400 MB: the floor is looked at every 16 MiB, and a command writing its spill itself can write
    // 40 MB before the first look lands (it did, once, in a full run).
    const err = await failureOf(exec("yes 'into the reserve' | head -c 400000000", { capture: { spill: { dir, direct, minFreeBytes } } }));
    expect(err.message).toMatch(/^the disk holding ".*" is down to .* free \(spool leaves .*: spill\.minFreeBytes, --min-free\)/);
    expect(statSync(spillFileOf(dir)).size).toBeLessThan(400_000_000);
  });

  it("runs to the end when the output stays within both", async () => {
    const dir = fresh("within");
    const r = await exec("yes 'ok' | head -c 20000000", { capture: { spill: { dir, direct, maxBytes: 20_000_000, minFreeBytes: MiB } } });
    expect(r.exitCode).toBe(0);
    expect(statSync(spillFileOf(dir)).size).toBe(20_000_000);
  });
});

describe("spill room options", () => {
  it.each([
    [{ maxBytes: 0 }, /spill\.maxBytes must be a whole number of bytes above 0, got 0/],
    [{ maxBytes: 1.5 }, /spill\.maxBytes must be a whole number of bytes above 0, got 1\.5/],
    [{ minFreeBytes: -1 }, /spill\.minFreeBytes must be a whole number of bytes, got -1/],
    [{ minFreeBytes: "1" }, /spill\.minFreeBytes must be a whole number of bytes, got "1"/],
  ])("%j is refused before anything runs", (extra, message) => {
    expect(() => start("echo never", { capture: { spill: { dir: fresh("bad"), ...(extra as object) } } })).toThrow(InvalidOptionsError);
    expect(() => start("echo never", { capture: { spill: { dir: fresh("bad"), ...(extra as object) } } })).toThrow(message);
  });
});
