// The spill: lazy, lossless (SHA-256 equal to a plain redirect), backpressured, and never a lossy success.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { SpillError, applyUpdate, exec, start, type CaptureView } from "../../src/capture/index.js";
import { GATHER_MS } from "../../src/capture/gather.js";
import { SpillWriter } from "../../src/capture/spill.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const work = tempDir("spool-spill-");
afterAll(removeTempDirs);
const gen = fileURLToPath(new URL("./fixtures/gen.mjs", import.meta.url));
const distCapture = fileURLToPath(new URL("../../dist/capture/index.js", import.meta.url));
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("spill fidelity", () => {
  // 20 generated outputs from 0 to 50 MB, with and without ANSI, CR and invalid UTF-8.
  const sizes = [0, 1, 700, 30_000, 60_000, 200_000, 500_000, 1e6, 1.5e6, 2e6, 3e6, 4e6, 5e6, 6e6, 8e6, 10e6, 12e6, 16e6, 24e6, 50e6];
  const flagSets = [[], ["ansi"], ["cr"], ["invalid"], ["ansi", "cr", "invalid"]];
  const cases = sizes.map((size, i) => ({ seed: i + 1, size, flags: flagSets[i % flagSets.length]! }));

  it.each(cases)("output $size bytes (seed $seed, $flags): spill SHA-256 equals a plain redirect", async ({ seed, size, flags }) => {
    const command = `node ${gen} ${seed} ${size} ${flags.join(" ")}`;
    const redirected = join(work, `redirect-${seed}.out`);
    execFileSync("sh", ["-c", `${command} > ${redirected}`]);
    const r = await exec(command, { capture: { spill: { dir: work, id: `fidelity-${seed}` } } });
    expect(r.rawBytes).toBe(size);
    if (r.truncation.truncated || r.spillPath !== undefined) {
      expect(r.spillPath).toBe(join(work, "spill", `fidelity-${seed}.log`));
      expect(sha(r.spillPath!)).toBe(sha(redirected));
      rmSync(r.spillPath!);
    } else {
      // Below the limits nothing is spilled: the view itself is the whole (cleaned) output.
      expect(r.truncation.totalBytes).toBe(r.truncation.outputBytes);
    }
    rmSync(redirected);
  });
});

describe("spill behaviour", () => {
  it("backpressure pauses and resumes the pipes, and the spill is still byte-identical", async () => {
    const command = `node ${gen} 99 20000000 ansi`;
    const redirected = join(work, "bp.out");
    execFileSync("sh", ["-c", `${command} > ${redirected}`]);
    const r = await exec(command, { capture: { spill: { dir: work, id: "bp", highWaterMark: 16 * 1024, direct: false } } });
    expect(r.spillPauses).toBeGreaterThan(0);
    expect(sha(r.spillPath!)).toBe(sha(redirected));
  });

  it("on the pipes, output that trickles in is spilled in gathered writes, not a write per line, and byte for byte", async () => {
    // 150 lines 2 ms apart past the limits: each line was its own write (the file grew after nearly
    // every line); gathered, a partly filled buffer waits GATHER_MS (50 ms) after the last one.
    const command = "exec 3<> <(:); for i in $(seq 1 150); do echo trickled line $i; read -t 0.002 -u 3; done";
    let spillPath: string | undefined;
    const run = start(command, {
      capture: { limits: { maxBytes: 100, maxLines: 5 }, spill: { dir: work, id: "trickle", direct: false } },
      onUpdate: (u) => (spillPath ??= u.kind === "replace" ? u.view.spillPath : u.metadata.spillPath),
    });
    const sizes = new Set<number>();
    let done = false;
    void run.result.finally(() => (done = true));
    const t0 = performance.now();
    while (!done) {
      if (spillPath !== undefined) sizes.add(statSync(spillPath).size);
      await new Promise((r) => setTimeout(r, 1));
    }
    const ms = performance.now() - t0;
    const r = await run.result;
    expect(readFileSync(r.spillPath!, "utf8")).toBe(Array.from({ length: 150 }, (_, i) => `trickled line ${i + 1}\n`).join(""));
    expect(sizes.size).toBeLessThanOrEqual(Math.ceil(ms / GATHER_MS) + 3);
  });

  it("flush() sends what a gathering step holds at once: a view that names the spill can be followed by a read of it", async () => {
    // The gathering timer never fires here (faked); only flush() can write the second chunk before close.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const writer = SpillWriter.create({ dir: work, id: "flush" }, (e) => {
        throw e;
      });
      const size = () => statSync(writer.path).size;
      const settle = async (want: number) => {
        for (let i = 0; i < 2000 && size() < want; i++) await new Promise((r) => setImmediate(r));
      };
      writer.write(Buffer.from("first line\n"));
      await settle(11);
      expect(size()).toBe(11);
      // Right after a partial write: this one waits for the gathering step.
      writer.write(Buffer.from("second line\n"));
      await settle(23);
      expect(size()).toBe(11);
      writer.flush();
      await settle(23);
      expect(readFileSync(writer.path, "utf8")).toBe("first line\nsecond line\n");
      await writer.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("the spill holds the raw bytes that preceded the crossing, then every later chunk", async () => {
    const r = await exec("printf 'early \\033[1mbold\\033[0m\\n'; sleep 0.1; seq 1 3000; sleep 0.1; echo late", {
      capture: { spill: { dir: work } },
    });
    expect(readFileSync(r.spillPath!, "utf8")).toBe("early \x1b[1mbold\x1b[0m\n" + Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("") + "late\n");
  });

  it("a spill that cannot be created kills the child and fails with 'could not preserve complete output'", async () => {
    const dir = join(work, "blocked");
    mkdirSync(dir);
    writeFileSync(join(dir, "spill"), "a file where the spill directory should be");
    const started = Date.now();
    let folded: CaptureView | undefined;
    const err = await exec("seq 1 100000; sleep 30", {
      capture: { spill: { dir } },
      onUpdate: (u) => (folded = applyUpdate(folded, u)),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpillError);
    // The latest bounded state is force-published before the failure settles.
    expect(folded).toEqual((err as SpillError).view);
    expect((err as SpillError).code).toBe("SPOOL_CAPTURE_SPILL");
    expect((err as SpillError).message).toContain("could not preserve complete output");
    expect((err as SpillError).view?.truncation.truncated).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a spill write failure (file size limit) kills the child and fails instead of returning lossy output", () => {
    // The capturing process itself must hit the limit, so it runs in a child with `ulimit -f`
    // (SIGXFSZ ignored, so the write fails with EFBIG instead of killing the process).
    const dir = join(work, "efbig");
    const script = join(work, "efbig.mjs");
    writeFileSync(
      script,
      `import { exec } from ${JSON.stringify(distCapture)};
       const started = Date.now();
       try {
         const r = await exec("seq 1 3000000; sleep 30", { capture: { spill: { dir: ${JSON.stringify(dir)} } } });
         console.log(JSON.stringify({ ok: true, spillPath: r.spillPath }));
       } catch (e) {
         console.log(JSON.stringify({ code: e.code, message: e.message, ms: Date.now() - started }));
       }`,
    );
    const out = execFileSync("bash", ["-c", `trap '' XFSZ; ulimit -f 1024; exec node ${script}`], { encoding: "utf8" });
    const result = JSON.parse(out) as { code?: string; message?: string; ms?: number };
    expect(result.code).toBe("SPOOL_CAPTURE_SPILL");
    expect(result.message).toContain("could not preserve complete output");
    expect(result.message).toContain("EFBIG");
    expect(result.ms).toBeLessThan(10_000);
  });

  it("noisy raw output that cleans down to little still starts a spill, so capture memory stays bounded", async () => {
    // 1.3 MB of progress frames on one line: the view is one short line, the raw output is far past
    // what is worth holding in memory until a limit is crossed.
    const r = await exec("for i in $(seq 1 80000); do printf 'progress %06d\\r' $i; done; echo done", {
      capture: { spill: { dir: work } },
    });
    expect(r.text).toBe("done\n");
    expect(r.truncation.truncated).toBe(false);
    expect(statSync(r.spillPath!).size).toBe(r.rawBytes);
  });
});

describe("spill under a crash of the capturing process", () => {
  it("a capturing process SIGKILLed mid-spill leaves a spill that is a byte-exact prefix of the output", async () => {
    const dir = join(work, "crash");
    const script = join(work, "crash.mjs");
    const size = 40_000_000;
    // The generator is slowed by a throttling pipe stage so the kill lands mid-output.
    writeFileSync(
      script,
      `import { exec } from ${JSON.stringify(distCapture)};
       await exec("node ${gen} 42 ${size} ansi | (while IFS= read -r l; do printf '%s\\\\n' \\"$l\\"; done)", {
         capture: { spill: { dir: ${JSON.stringify(dir)}, id: "crash" } },
         onUpdate: (u) => { if ((u.kind === "replace" ? u.view.spillPath : u.metadata.spillPath)) process.stdout.write("spilling\\n"); },
       });`,
    );
    const { spawn } = await import("node:child_process");
    const child = spawn("node", [script], { stdio: ["ignore", "pipe", "inherit"] });
    const spillPath = join(dir, "spill", "crash.log");
    const spillSize = () => {
      try {
        return statSync(spillPath).size;
      } catch {
        return 0; // not created yet
      }
    };
    await until(() => spillSize() > 200_000, "the spill to pass 200 KB", 20_000);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const spilled = readFileSync(spillPath);
    const full = execFileSync("sh", ["-c", `node ${gen} 42 ${size} ansi`], { maxBuffer: 64 * 1024 * 1024 });
    expect(spilled.length).toBeGreaterThan(200_000);
    expect(spilled.length).toBeLessThan(full.length);
    expect(spilled.equals(full.subarray(0, spilled.length))).toBe(true);
  });
});
