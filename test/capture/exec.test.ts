// exec against real processes: streams, limits, updates, timeouts and the cleaning cases that need a real pipe.
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  CallbackError,
  InvalidOptionsError,
  MissingCwdError,
  SpawnError,
  applyUpdate,
  describeTruncation,
  exec,
  start,
  type CaptureUpdate,
  type CaptureView,
} from "../../src/capture/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const work = tempDir("spool-capture-");
afterAll(removeTempDirs);

function collector() {
  const updates: CaptureUpdate[] = [];
  let folded: CaptureView | undefined;
  return {
    updates,
    onUpdate: (u: CaptureUpdate) => {
      updates.push(u);
      folded = applyUpdate(folded, u);
    },
    folded: () => folded,
  };
}

describe("exec", () => {
  it("yes | head -n 15000 with tail limits and spill: truncated view, readable spill with every line", async () => {
    const r = await exec("yes line | head -n 15000", {
      capture: { limits: { maxBytes: 50 * 1024, maxLines: 2000, retain: "tail" }, spill: { dir: work } },
    });
    expect(r.truncation.truncated).toBe(true);
    expect(r.spillPath).toBeDefined();
    const spilled = readFileSync(r.spillPath!, "utf8");
    expect(spilled.split("\n").length - 1).toBe(15000);
    expect(spilled.split("\n").length - 1).toBeGreaterThan(10_000);
    expect(r.text.length).toBeLessThan(spilled.length);
    expect(r.truncation).toMatchObject({ totalLines: 15000, outputLines: 2000, truncatedBy: "lines" });
    expect(r.exitCode).toBe(0);
  });

  it("waitingForInput: true while a pty command sits at a prompt or readline, false while it sleeps or without a pty", async () => {
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    for (const [command, pty, waiting] of [
      ["read -p 'name? ' a", true, true],
      ["PYTHON_BASIC_REPL=1 python3 -q", true, true],
      ["read -s pass < /dev/tty", true, true],
      ["sleep 30", true, false],
      ["read a", false, false],
    ] as const) {
      const running = start(command, { pty, ...(pty ? {} : { stdin: "pipe" as const }) });
      await pause(1500);
      expect([command, running.waitingForInput()]).toEqual([command, waiting]);
      running.kill();
      await running.result.catch(() => undefined);
      expect(running.waitingForInput()).toBe(false);
    }
  });

  it("stdout and stderr are one view in arrival order", async () => {
    const r = await exec("echo out1; sleep 0.05; echo err1 >&2; sleep 0.05; echo out2; sleep 0.05; echo err2 >&2");
    expect(r.text).toBe("out1\nerr1\nout2\nerr2\n");
  });

  it("returns the exit code, and 128 + signal number for a signal death", async () => {
    expect((await exec("exit 3")).exitCode).toBe(3);
    const killed = await exec("kill -9 $$");
    expect(killed.exitCode).toBe(137);
    expect(killed.signal).toBe("SIGKILL");
  });

  it("a missing working directory is an error before anything is spawned", async () => {
    const marker = join(work, "should-not-exist");
    const err = await exec(`touch ${marker}`, { cwd: join(work, "nope", "deeper") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingCwdError);
    expect((err as MissingCwdError).code).toBe("SPOOL_CAPTURE_CWD");
    expect(() => statSync(marker)).toThrow();
  });

  it("a shell that cannot be started is a SpawnError naming it", async () => {
    const err = await exec("true", { shell: join(work, "no-such-shell") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnError);
    expect((err as SpawnError).code).toBe("SPOOL_CAPTURE_SPAWN");
    expect((err as SpawnError).message).toContain("no-such-shell");
  });

  it("invalid limits are rejected with a message naming the option", async () => {
    await expect(exec("true", { capture: { limits: { maxLines: 0 } } })).rejects.toThrow(InvalidOptionsError);
    await expect(exec("true", { capture: { limits: { maxBytes: 1.5 } } })).rejects.toThrow(/maxBytes must be a whole number of 1 or more, got 1.5/);
    await expect(exec("true", { capture: { spill: { dir: work, id: "../escape" } } })).rejects.toThrow(/spill.id/);
  });

  it("sets NO_COLOR=1 and FORCE_COLOR=0 unless overridden, and closes stdin", async () => {
    expect((await exec('echo "$NO_COLOR/$FORCE_COLOR"')).text).toBe("1/0\n");
    expect((await exec('echo "$FORCE_COLOR"', { env: { FORCE_COLOR: "3" } })).text).toBe("3\n");
    const r = await exec('read line; echo "read exited $?"', { timeoutMs: 5000 });
    expect(r.text).toBe("read exited 1\n");
    expect(r.timedOut).toBe(false);
  });

  it("carriage-return frames from a real process collapse to the last frame", async () => {
    expect((await exec("printf 'a\\rb\\rc\\n'")).text).toBe("c\n");
  });

  it("an escape sequence split across two writes is stripped", async () => {
    const r = await exec("printf '\\033[3'; sleep 0.1; printf '1mred\\033[0m plain\\n'");
    expect(r.text).toBe("red plain\n");
  });

  it("backspaces from a real process move the cursor as on a terminal, and man-page overstrike is plain text", async () => {
    expect((await exec("printf 'abc\\b\\bX\\n'")).text).toBe("aXc\n");
    expect((await exec("printf '_\\bu_\\bn_\\bd_\\be_\\br B\\bBo\\bol\\bld\\bd\\n'")).text).toBe("under Bold\n");
  });

  it("a clear screen on a pipe keeps the lines before it (they used to vanish, untruncated)", async () => {
    const r = await exec("seq 1 5; printf '\\033[2J\\033[H'; echo after");
    expect(r.text).toBe("1\n2\n3\n4\n5\nafter\n");
    expect(r.truncation.truncated).toBe(false);
  });

  it("a UTF-8 character split across reads stays intact", async () => {
    const r = await exec("printf '\\342\\202'; sleep 0.1; printf '\\254 euro\\n'");
    expect(r.text).toBe("€ euro\n");
  });

  it("a 2 MB single line is cut with a marker and spilled whole", async () => {
    const r = await exec("head -c 2097152 /dev/zero | tr '\\0' 'x'; echo; echo tail-line", { capture: { spill: { dir: work } } });
    expect(r.text).toBe("x".repeat(4096) + ` [… ${2097152 - 4096} bytes cut from this line]\ntail-line\n`);
    expect(r.truncation.truncatedBy).toBe("line-length");
    expect(statSync(r.spillPath!).size).toBe(2097152 + 1 + 10);
  });

  it("an over-long last line without a newline is reported cut and spilled, on pipes, the command's own file and a pty, head or tail", async () => {
    const cases = [
      { direct: false, pty: false },
      { direct: true, pty: false },
      { direct: false, pty: true },
    ];
    for (const { direct, pty } of cases) {
      for (const retain of ["tail", "head"] as const) {
        const c = collector();
        const r = await exec("echo first; head -c 300000 /dev/zero | tr '\\0' a", {
          pty,
          onUpdate: c.onUpdate,
          capture: { limits: { retain }, spill: { dir: work, direct } },
        });
        const label = JSON.stringify({ direct, pty, retain });
        expect(r.text, label).toBe(`first\n${"a".repeat(4096)} [… ${300000 - 4096} bytes cut from this line]`);
        expect(r.truncation, label).toMatchObject({ truncated: true, truncatedBy: "line-length", cutLines: 1 });
        expect(r.spillPath, label).toBeDefined();
        expect(statSync(r.spillPath!).size, label).toBe(r.rawBytes);
        expect(describeTruncation(r, retain), label).toBe(`[Showing all 2 lines; 1 over-long line was cut. Full output: ${r.spillPath}]`);
        expect(c.folded()?.spillPath, label).toBe(r.spillPath);
      }
    }
  });

  it("an unterminated last line of non-ASCII text, or of more than the raw prefix, gets its footer", async () => {
    const euro = await exec(`node -e "process.stdout.write('€'.repeat(5000))"`, { capture: { spill: { dir: work, direct: false } } });
    expect(euro.truncation).toMatchObject({ truncatedBy: "line-length", cutLines: 1 });
    expect(readFileSync(euro.spillPath!, "utf8")).toBe("€".repeat(5000));
    const big = await exec("head -c 3000000 /dev/zero | tr '\\0' a", { capture: { spill: { dir: work, direct: false } } });
    expect(big.truncation).toMatchObject({ truncatedBy: "line-length", cutLines: 1 });
    expect(statSync(big.spillPath!).size).toBe(3000000);
    expect(describeTruncation(big)).toBe(`[Showing all 1 line; 1 over-long line was cut. Full output: ${big.spillPath}]`);
  });

  it("binary from /dev/urandom is reported as binary with its size, and spilled", async () => {
    const r = await exec("head -c 200000 /dev/urandom", { capture: { spill: { dir: work } } });
    expect(r.binary).toBe(true);
    expect(r.text).toBe("");
    expect(r.truncation.totalBytes).toBe(200000);
    expect(statSync(r.spillPath!).size).toBe(200000);
  });

  it("a program's lone NUL is text shown as U+2400; two in a row (a real binary) are binary", async () => {
    const text = await exec("printf 'a\\0b\\n'; seq 1 1000");
    expect(text.binary).toBe(false);
    expect(text.text.startsWith("a\u2400b\n1\n")).toBe(true);
    expect(text.text.endsWith("\n1000\n")).toBe(true);
    const elf = await exec(`head -c 3000 ${process.execPath}; seq 1 5`);
    expect(elf.binary).toBe(true);
  });

  it("head retention keeps the start, tail retention keeps the end", async () => {
    const head = await exec("seq 1 10000", { capture: { limits: { retain: "head", maxLines: 5 } } });
    expect(head.text).toBe("1\n2\n3\n4\n5\n");
    const tail = await exec("seq 1 10000", { capture: { limits: { retain: "tail", maxLines: 5 } } });
    expect(tail.text).toBe("9996\n9997\n9998\n9999\n10000\n");
    expect(head.truncation.totalLines).toBe(10000);
    expect(tail.truncation.totalLines).toBe(10000);
  });

  it("control characters are stripped from the view but kept byte-for-byte in the spill", async () => {
    const r = await exec("printf 'a\\001b\\033[31mc\\n'; seq 1 3000", { capture: { spill: { dir: work } } });
    expect(r.text).not.toMatch(/[\x01\x1b]/);
    expect(readFileSync(r.spillPath!).subarray(0, 10)).toEqual(Buffer.from("a\x01b\x1b[31mc\n"));
  });

  it("updates fold to the final view: an initial replace, then appends, then the forced final", async () => {
    const c = collector();
    const r = await exec("for i in 1 2 3 4 5; do echo step $i; sleep 0.03; done", { onUpdate: c.onUpdate });
    expect(c.updates[0]!.kind).toBe("replace");
    expect(c.updates.slice(1).every((u) => u.kind === "append" || u.kind === "metadata")).toBe(true);
    const { exitCode: _e, signal: _s, timedOut: _t, aborted: _a, durationMs: _d, spillPauses: _p, ...view } = r;
    expect(c.folded()).toEqual(view);
  });

  it("the spill path is force-published as metadata when the limits are crossed", async () => {
    const c = collector();
    const r = await exec("seq 1 100; sleep 0.2; seq 1 3000; sleep 0.3; echo end", {
      capture: { spill: { dir: work } },
      onUpdate: c.onUpdate,
    });
    const firstWithPath = c.updates.findIndex((u) => (u.kind === "replace" ? u.view.spillPath : u.metadata.spillPath) !== undefined);
    expect(firstWithPath).toBeGreaterThan(0);
    // Published at the crossing, long before the process ended.
    expect(c.updates.length - 1).toBeGreaterThan(firstWithPath);
    expect(c.folded()!.spillPath).toBe(r.spillPath);
  });

  it("spill writes are complete before the final update is published", async () => {
    let sizeAtLastUpdate = -1;
    let spillPath: string | undefined;
    const r = await exec("node -e \"process.stdout.write('z'.repeat(30*1024*1024))\"", {
      capture: { spill: { dir: work } },
      onUpdate: (u) => {
        spillPath ??= u.kind === "replace" ? u.view.spillPath : u.metadata.spillPath;
        if (spillPath) sizeAtLastUpdate = statSync(spillPath).size;
      },
    });
    expect(r.rawBytes).toBe(30 * 1024 * 1024);
    expect(sizeAtLastUpdate).toBe(30 * 1024 * 1024);
  });

  it("unpaced, the last update still comes after the spill is complete", async () => {
    // Every read is published: the one for the last read carries the final view while the spill still
    // has writes pending, so the final flush finds nothing new to say.
    let sizeAtLastUpdate = -1;
    let spillPath: string | undefined;
    let last: CaptureUpdate | undefined;
    const r = await exec("node -e \"process.stdout.write('y\\n'.repeat(8*1024*1024))\"", {
      capture: { spill: { dir: work } },
      minIntervalMs: 0,
      targetBytesPerSecond: Number.POSITIVE_INFINITY,
      onUpdate: (u) => {
        spillPath ??= u.kind === "replace" ? u.view.spillPath : u.metadata.spillPath;
        if (spillPath) sizeAtLastUpdate = statSync(spillPath).size;
        last = u;
      },
    });
    expect(r.rawBytes).toBe(16 * 1024 * 1024);
    expect(sizeAtLastUpdate).toBe(16 * 1024 * 1024);
    expect(last?.kind === "replace" ? last.view.truncation : last?.metadata.truncation).toEqual(r.truncation);
  });

  it("a throwing onUpdate kills the process group and fails with a clear error", async () => {
    const pidFile = join(work, "cb.pid");
    const started = Date.now();
    const err = await exec(`echo $$ > ${pidFile}; echo hello; sleep 30`, {
      onUpdate: () => {
        throw new Error("consumer broke");
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CallbackError);
    expect((err as CallbackError).code).toBe("SPOOL_CAPTURE_CALLBACK");
    expect((err as CallbackError).message).toContain("consumer broke");
    expect(Date.now() - started).toBeLessThan(10_000);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("a command that backgrounds a process holding the pipe still completes", async () => {
    const r = await exec("sleep 3 & echo started", { timeoutMs: 10_000 });
    expect(r.text).toBe("started\n");
    expect(r.durationMs).toBeLessThan(2500);
  });

  it("no output at all is an empty, untruncated view", async () => {
    const r = await exec("true", { capture: { spill: { dir: join(work, "never") } } });
    expect(r.text).toBe("");
    expect(r.truncation.truncated).toBe(false);
    expect(r.spillPath).toBeUndefined();
    expect(() => statSync(join(work, "never"))).toThrow();
  });

  it("writes nothing to the spill directory until the limits are crossed", async () => {
    const dir = join(work, "lazy");
    const r = await exec("seq 1 100", { capture: { spill: { dir } } });
    expect(r.spillPath).toBeUndefined();
    expect(() => statSync(dir)).toThrow();
  });

  it("never overwrites an existing spill file", async () => {
    const dir = join(work, "taken");
    await exec("true"); // nothing
    const first = await exec("seq 1 5000", { capture: { spill: { dir, id: "call_1" } } });
    writeFileSync(join(dir, "spill", "marker"), "");
    const second = await exec("seq 1 6000", { capture: { spill: { dir, id: "call_1" } } });
    expect(first.spillPath).toBe(join(dir, "spill", "call_1.log"));
    expect(second.spillPath).toBe(join(dir, "spill", "call_1-2.log"));
    expect(readFileSync(first.spillPath!, "utf8").split("\n").length - 1).toBe(5000);
  });
});
