// The pipe path on Linux gives the command real pipes: it can reopen /dev/stdout, /dev/stderr and
// /dev/stdin (on Node's socketpairs each of these failed with ENXIO), stdout and stderr arrive in the
// true order of the writes, and nothing of the FIFOs the pipes are made from is left in the tmpdir.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { exec, start, type ExecOptions } from "../../src/capture/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const work = tempDir("spool-real-pipe-");
afterAll(removeTempDirs);
const distCapture = fileURLToPath(new URL("../../dist/capture/index.js", import.meta.url));
const linux = process.platform === "linux";
const hasPython = spawnSync("python3", ["-c", ""], { stdio: "ignore" }).status === 0;
const hasPerl = spawnSync("perl", ["-e", ""], { stdio: "ignore" }).status === 0;
// Prints the size of the command's stdout pipe (F_GETPIPE_SZ) once it is at least `least`, or after 5 s.
const pipeSize = (least: number): string =>
  `perl -e 'for (1..100) { $s = fcntl(STDOUT, 1032, 0); last if $s >= ${least}; select(undef, undef, undef, 0.05) } print "size=$s\\n"'`;

// Every way onto the pipe path with a spill or without; as root a spill takes it by default.
const ways: [string, () => ExecOptions][] = [
  ["no spill", () => ({})],
  ["spill.direct: false", () => ({ capture: { spill: { dir: tempDir("spool-real-pipe-spill-"), direct: false } } })],
];
if (process.geteuid?.() === 0) ways.push(["root with a spill", () => ({ capture: { spill: { dir: tempDir("spool-real-pipe-spill-") } } })]);

describe.skipIf(!linux).each(ways)("the pipe path (%s)", (_, options) => {
  it("echo b > /dev/stderr between two lines: all three, in order", async () => {
    const r = await exec("echo a; echo b > /dev/stderr; echo c", options());
    expect(r.text).toBe("a\nb\nc\n");
    expect(r.exitCode).toBe(0);
  });

  it("> /dev/stdout, 2>/dev/stdout and tee /dev/stderr deliver their text", async () => {
    const r = await exec("echo one > /dev/stdout; ls /no-such-path-here 2>/dev/stdout | sed 's/.*/listed/'; echo two | tee /dev/stderr", options());
    expect(r.text).toBe("one\nlisted\ntwo\ntwo\n");
  });

  it.skipIf(!hasPython)("Python's open('/dev/stdout', 'w') writes", async () => {
    const r = await exec(`echo before; python3 -c "f = open('/dev/stdout', 'w'); f.write('from python\\n'); f.close()"; echo after`, options());
    expect(r.text).toBe("before\nfrom python\nafter\n");
    expect(r.exitCode).toBe(0);
  });

  it.skipIf(!hasPerl)("a pipe that carried a MiB grows to 1 MiB; a quiet command's stays at 64 KiB", async () => {
    const busy = await exec(`seq 1 300000; ${pipeSize(1024 * 1024)}`, options());
    expect(busy.text.endsWith("size=1048576\n")).toBe(true);
    const quiet = await exec(`echo hi; ${pipeSize(0)}`, options());
    expect(quiet.text).toBe("hi\nsize=65536\n");
  });

  it.skipIf(!hasPerl)("the event loop runs while a grown pipe is quiet: a timeout fires, timers keep their time", async () => {
    // 2 MiB grows the pipe; then bursts of exactly one read buffer (256 KiB), each read filling it and
    // the next finding the pipe empty. Growing the pipe once left spool's end blocking: that next read
    // held the event loop until the command wrote again (gaps of 2.5 s; this timeout fired after 10 s).
    let last = Date.now();
    let gap = 0;
    const timer = setInterval(() => {
      gap = Math.max(gap, Date.now() - last);
      last = Date.now();
    }, 20);
    const started = Date.now();
    try {
      const r = await exec("head -c 2097152 /dev/zero; for i in 1 2 3; do sleep 0.3; dd if=/dev/zero bs=256K count=1 status=none; done; sleep 10", {
        ...options(),
        timeoutMs: 2500,
      });
      expect(r.timedOut).toBe(true);
    } finally {
      clearInterval(timer);
    }
    expect(Date.now() - started).toBeLessThan(7000);
    // With the blocking end the last read held the loop through most of `sleep 10`; 1 s leaves room
    // for a loaded machine's pauses (a 250 ms bound is closer to a scheduler's hiccup than to the bug).
    expect(gap).toBeLessThan(1000);
  });

  it("a set -e script's usage on /dev/stderr is shown, and its exit code is kept", async () => {
    const r = await exec("set -e; echo usage: tool FILE >/dev/stderr; exit 2", options());
    expect(r.text).toBe("usage: tool FILE\n");
    expect(r.exitCode).toBe(2);
  });

  it("stdout and stderr interleave in the order of the writes", async () => {
    const r = await exec("for i in $(seq 1 300); do echo o$i; echo e$i >&2; done", options());
    const expected = Array.from({ length: 300 }, (_, i) => `o${i + 1}\ne${i + 1}\n`).join("");
    expect(r.text).toBe(expected);
  });

  it("a command reading /dev/stdin gets what the caller writes", async () => {
    const handle = start("head -n 1 /dev/stdin; echo done", { ...options(), stdin: "pipe" });
    handle.write("hello\n");
    const r = await handle.result;
    expect(r.text).toBe("hello\ndone\n");
    expect(r.exitCode).toBe(0);
  });
});

describe.skipIf(!linux)("the file path (the command writes its spill)", () => {
  it("a command reading /dev/stdin gets what the caller writes: its stdin is a real pipe too", async () => {
    const handle = start("head -n 1 /dev/stdin; echo done", { stdin: "pipe", capture: { spill: { dir: tempDir("spool-real-pipe-spill-"), direct: true } } });
    handle.write("hello\n");
    const r = await handle.result;
    expect(r.text).toBe("hello\ndone\n");
    expect(r.exitCode).toBe(0);
  });
});

/** Runs `body` (module code with `exec` and `start` imported from dist) in a node process with this tmpdir. */
function runNode(tmp: string, body: string, env: NodeJS.ProcessEnv = {}): ReturnType<typeof spawn> {
  const script = join(work, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(script, `import { exec, prepareExec, start } from ${JSON.stringify(distCapture)};\n${body}`);
  return spawn(process.execPath, [script], { env: { ...process.env, TMPDIR: tmp, ...env }, stdio: ["ignore", "pipe", "inherit"] });
}

async function output(child: ReturnType<typeof spawn>): Promise<{ code: number | null; text: string }> {
  let text = "";
  child.stdout?.on("data", (d: Buffer) => (text += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, text };
}

describe.skipIf(!linux)("the FIFOs real pipes are made from", () => {
  it("leave nothing in the tmpdir after many commands, with stdin and without", async () => {
    const tmp = tempDir("spool-real-pipe-tmp-");
    const { code, text } = await output(
      runNode(
        tmp,
        `let ok = 0;
         for (let i = 0; i < 40; i++) {
           if (i % 2) {
             const h = start("head -n 1 /dev/stdin > /dev/stderr", { stdin: "pipe" });
             h.write("in" + i + "\\n");
             if ((await h.result).text === "in" + i + "\\n") ok++;
           } else if ((await exec("echo out" + i + " > /dev/stdout")).text === "out" + i + "\\n") ok++;
         }
         process.stdout.write(String(ok));`,
      ),
    );
    expect(code).toBe(0);
    expect(text).toBe("40");
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("close spool's end of a command's stdin when the command exits: no descriptor is left open per command", async () => {
    const spill = { capture: { spill: { dir: tempDir("spool-real-pipe-spill-"), direct: true } } };
    const open = (): number => readdirSync("/proc/self/fd").length;
    for (const opts of [{}, spill] as ExecOptions[]) {
      await exec("true", { ...opts, stdin: "pipe" });
      const before = open();
      // The pool of ready pipes holds at most 16 descriptors, whatever its level now.
      for (let i = 0; i < 60; i++) await exec("exit 0", { ...opts, stdin: "pipe" });
      expect(open() - before).toBeLessThan(17);
    }
  });

  it("a batch directory left by a SIGKILLed process is removed by the next one once it is a minute old; a young one is kept", async () => {
    const tmp = tempDir("spool-real-pipe-tmp-");
    const looping = runNode(tmp, `for (let i = 0; ; i++) { await exec("true"); if (i === 20) process.stdout.write("running\\n"); }`);
    await new Promise<void>((resolve) => looping.stdout?.once("data", () => resolve()));
    looping.kill("SIGKILL");
    await new Promise((resolve) => looping.once("exit", resolve));
    // Whatever the kill left (a batch in flight, if it landed in those milliseconds), and a stand-in
    // for one it surely did: all aged past the minute. Plus a young one, as a live process's would be.
    const stale = join(tmp, "spool-pipes-stale");
    mkdirSync(stale);
    expect(spawnSync("mkfifo", [join(stale, "0")]).status).toBe(0);
    const old = new Date(Date.now() - 5 * 60_000);
    for (const name of readdirSync(tmp)) utimesSync(join(tmp, name), old, old);
    mkdirSync(join(tmp, "spool-pipes-young"));
    const { code, text } = await output(runNode(tmp, `process.stdout.write((await exec("echo x > /dev/stderr")).text);`));
    expect(code).toBe(0);
    expect(text).toBe("x\n");
    expect(readdirSync(tmp)).toEqual(["spool-pipes-young"]);
  });

  it("prepareExec makes the first batch in the background: the first command takes its pipes from it, at once or once made, and mkfifo runs once", async () => {
    // A mkfifo first on PATH that notes each run, then is the real one.
    const bin = tempDir("spool-real-pipe-bin-");
    const log = join(bin, "runs");
    writeFileSync(join(bin, "mkfifo"), `#!/bin/sh\necho run >> ${log}\nexec /usr/bin/mkfifo "$@"\n`, { mode: 0o755 });
    const env = { PATH: `${bin}:${process.env.PATH}` };
    for (const [name, gap] of [
      ["right after prepareExec (it waits for the batch)", ""],
      ["after other work", "await new Promise((r) => setTimeout(r, 200));"],
    ]) {
      const tmp = tempDir("spool-real-pipe-tmp-");
      writeFileSync(log, "");
      const { code, text } = await output(
        runNode(tmp, `prepareExec(); ${gap} const r = await exec("echo a; echo b > /dev/stderr"); process.stdout.write(r.text);`, env),
      );
      expect(code, name).toBe(0);
      expect(text, name).toBe("a\nb\n");
      expect(readFileSync(log, "utf8"), name).toBe("run\n");
      expect(readdirSync(tmp), name).toEqual([]);
    }
  });

  it("where no FIFO can be made (no mkfifo) the command runs on socketpairs, silently, and leaves nothing", async () => {
    const tmp = tempDir("spool-real-pipe-tmp-");
    const { code, text } = await output(
      runNode(tmp, `const r = await exec("echo a; echo b >&2; echo c > /dev/stderr"); process.stdout.write(JSON.stringify([r.text, r.exitCode]));`, {
        PATH: "/nonexistent",
      }),
    );
    expect(code).toBe(0);
    const [shown, exitCode] = JSON.parse(text) as [string, number];
    expect(shown).toContain("a\n");
    expect(shown).toContain("b\n");
    // The socketpair's reopen failure: the path the command takes without real pipes.
    expect(shown).toMatch(/No such device or address/);
    expect(exitCode).toBe(1);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("where perl is missing a busy pipe keeps its size: every line arrives, nothing is reported, twice in a row", async () => {
    // A PATH with what the command and the pipes need, and no perl (pipe-size.ts grows pipes with it).
    const bin = tempDir("spool-real-pipe-bin-");
    for (const tool of ["mkfifo", "seq", "tail"]) {
      const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      symlinkSync(found, join(bin, tool));
    }
    const { code, text } = await output(
      runNode(
        tempDir("spool-real-pipe-tmp-"),
        `const out = []; for (const n of [400000, 500000]) { const r = await exec("seq 1 " + n + " | tail -c 2000000"); out.push([r.text.slice(-7), r.exitCode, r.rawBytes]); } process.stdout.write(JSON.stringify(out));`,
        { PATH: bin },
      ),
    );
    expect(code).toBe(0);
    expect(JSON.parse(text)).toEqual([
      ["400000\n", 0, 2_000_000],
      ["500000\n", 0, 2_000_000],
    ]);
  });
});
