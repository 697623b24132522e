// Copying a command's stderr pipe into its spill file (append-pipe.ts): every byte in order, the
// command held back while an append waits on the disk, a failed append reported, and the end taking
// what the pipe holds even when a writer keeps it open. Real processes and pipes.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appendPipe } from "../../src/capture/append-pipe.js";
import { readDescriptor } from "../../src/capture/pipe-reader.js";
import { realPipe } from "../../src/capture/real-pipe.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const work = tempDir("spool-append-pipe-");
afterAll(removeTempDirs);
let n = 0;
const fresh = () => join(work, `file-${++n}`);
const linux = process.platform === "linux";

/** A command whose stdout is the write end of `pipe` (spool's copy of that end is closed). */
function writer(command: string, pipe: { write: number }) {
  const child = spawn("sh", ["-c", command], { stdio: ["ignore", pipe.write, "inherit"] });
  closeSync(pipe.write);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited };
}

describe.skipIf(!linux)("appendPipe", () => {
  it("appends every byte, in order, after what the file held", async () => {
    const path = fresh();
    writeFileSync(path, "before\n");
    const pipe = realPipe()!;
    const { exited } = writer("seq 1 300000", pipe);
    const copy = appendPipe(pipe.read, openSync(path, "a"), (e) => {
      throw e;
    });
    expect(await exited).toBe(0);
    await copy.finish();
    const seq = Array.from({ length: 300000 }, (_, i) => `${i + 1}\n`).join("");
    expect(readFileSync(path, "utf8")).toBe(`before\n${seq}`);
  });

  it("a stalled disk holds the command back on its full pipe; nothing is buffered, nothing lost", async () => {
    // The "disk" is a pipe nobody reads yet: the first append blocks until it is read.
    const pipe = realPipe()!;
    const disk = realPipe()!;
    const { child, exited } = writer("head -c 4000000 /dev/zero", pipe);
    const copy = appendPipe(pipe.read, disk.write, (e) => {
      throw e;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(child.exitCode).toBeNull();
    let got = 0;
    readDescriptor(disk.read, Buffer.alloc(64 * 1024), (c) => (got += c.length));
    expect(await exited).toBe(0);
    await copy.finish();
    await until(() => got === 4_000_000, "every byte through the disk pipe", 5000);
  });

  it("a failed append is reported, and the pipe is read on so the command is never blocked", async () => {
    const path = fresh();
    writeFileSync(path, "");
    const pipe = realPipe()!;
    const { exited } = writer("head -c 3000000 /dev/zero", pipe);
    const errors: Error[] = [];
    // Open for reading: every write fails (EBADF).
    const copy = appendPipe(pipe.read, openSync(path, "r"), (e) => errors.push(e));
    expect(await exited).toBe(0);
    await copy.finish();
    expect(errors.length).toBeGreaterThan(0);
    expect((errors[0] as NodeJS.ErrnoException).code).toBe("EBADF");
  });

  it("at the end, a writer that keeps the pipe open: what it holds now is appended, and the copy ends", async () => {
    const path = fresh();
    const pipe = realPipe()!;
    writeSync(pipe.write, "held\n");
    const copy = appendPipe(pipe.read, openSync(path, "a"), (e) => {
      throw e;
    });
    await copy.finish();
    expect(readFileSync(path, "utf8")).toBe("held\n");
    closeSync(pipe.write);
  });

  it("at the end, a writer that never stops: the copy ends after a bounded amount", async () => {
    const path = fresh();
    const pipe = realPipe()!;
    const { child } = writer("yes", pipe);
    const copy = appendPipe(pipe.read, openSync(path, "a"), (e) => {
      throw e;
    });
    await until(() => statSync(path).size > 1_000_000, "yes to be copied");
    const started = Date.now();
    await copy.finish();
    expect(Date.now() - started).toBeLessThan(2000);
    child.kill("SIGKILL");
    const size = statSync(path).size;
    await new Promise((r) => setTimeout(r, 100));
    expect(statSync(path).size).toBe(size);
  });
});
