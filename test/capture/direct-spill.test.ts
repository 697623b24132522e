// The command writing its spill file itself (file-child.ts, file-tail.ts): the tail delivers exactly
// the bytes written, in any chunking and timing; the view equals the pipe path's for the same output;
// the file is the spill (byte-identical, kept only past the limits); the end, the kill and the crash
// rules hold for a file, which has no end of file of its own. Real processes.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FileTail } from "../../src/capture/file-tail.js";
import { GATHER_MS } from "../../src/capture/gather.js";
import {
  OutputCapture,
  SpawnError,
  SpillError,
  SpillLimitError,
  exec,
  resolveLimits,
  start,
  type CaptureView,
  type ExecResult,
} from "../../src/capture/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { OTHER_USER, otherUserCanRead } from "../support/other-user.js";
import { until } from "../support/until.js";
import { alive } from "../support/process-group.js";

const work = tempDir("spool-direct-spill-");
afterAll(removeTempDirs);
const gen = fileURLToPath(new URL("./fixtures/gen.mjs", import.meta.url));
const distCapture = fileURLToPath(new URL("../../dist/capture/index.js", import.meta.url));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;
const fresh = (name: string) => join(work, `${name}-${++n}`);

function viewOf(r: ExecResult): CaptureView {
  const { exitCode: _e, signal: _s, timedOut: _t, aborted: _a, durationMs: _d, spillPauses: _p, spillPath: _sp, ...view } = r;
  return view;
}

describe("FileTail", () => {
  it("delivers exactly the bytes appended, whatever the chunking and timing, and a capture of them equals one of the whole", async () => {
    // Whole sequences only (the tail's reads cut them anywhere): a CSI left open across a newline
    // (`ESC [` then LF) makes the terminal model's view depend on where the reads fall, whatever
    // feeds it — pipes included; see docs/performance-log.md §2.
    const piece = fc.oneof(
      fc.constantFrom("\n", "\r\n", "\r", "\x1b[31m", "\x1b[0m", "\x1b[2A", "é", "😀"),
      fc.stringMatching(/^[a-z ]{0,60}$/),
      fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a.map((b) => (b === 0x1b ? 0x1a : b))).toString("latin1")),
    );
    const write = fc.record({ text: fc.array(piece, { maxLength: 30 }), repeat: fc.integer({ min: 1, max: 300 }), delay: fc.constantFrom(0, 0, 1, 5) });
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (writes) => {
        const path = fresh("tail");
        const wfd = openSync(path, "ax", 0o600);
        const got: Buffer[] = [];
        const live = new OutputCapture(resolveLimits({ maxBytes: 2000, maxLines: 20, retain: "tail" }));
        const tail = new FileTail(path, openSync(path, "r"), Buffer.alloc(16 * 1024), {
          onChunk: (chunk) => {
            got.push(Buffer.from(chunk));
            live.push(chunk);
            chunk.fill(0xff); // the buffer is reused: nothing may keep a view of it
          },
          onBacklog: () => {},
          onTruncated: () => {},
        });
        const all: Buffer[] = [];
        for (const w of writes) {
          const bytes = Buffer.from(w.text.join("").repeat(w.repeat), "latin1");
          writeSync(wfd, bytes);
          all.push(bytes);
          if (w.delay > 0) await pause(w.delay);
        }
        closeSync(wfd);
        await tail.finish();
        const whole = Buffer.concat(all);
        expect(Buffer.concat(got).equals(whole)).toBe(true);
        live.end();
        const once = new OutputCapture(resolveLimits({ maxBytes: 2000, maxLines: 20, retain: "tail" }));
        once.push(whole);
        once.end();
        expect(live.view()).toEqual(once.view());
      }),
      {
        numRuns: 40,
        // Seed 133's counterexample (the terminal model took back a line cut by the window's
        // compaction, so the view depended on the reads: window.ts takeBack), kept as an example.
        examples: [
          [
            [
              { text: ["   ewrj ", "\u00aeA1\u00a6\u00ec", " ", "", "p     ", "\r", "h o h f", "i fb imfb ", "\u001b[0m"], repeat: 266, delay: 5 },
              { text: [" ", "%\u0007", "\u001b[0m", "\u001b[31m", " o", "{-\u0007r\t\u00d2v", "\u00a2<"], repeat: 111, delay: 1 },
              {
                text: ["w    ", "\u00121N:", "\u00be\u0015\u00d2\u00cf\u00b2", "", " cz", "\n", "\u0014\u001c\u00fd\u00d2\u001a\u00cc\u00aa"],
                repeat: 19,
                delay: 0,
              },
              { text: ["}", "q\u000f\u00c9^\u00b4A"], repeat: 113, delay: 5 },
              { text: ["", "D"], repeat: 222, delay: 1 },
              { text: [], repeat: 33, delay: 0 },
              { text: ["lcn  s  ", "\r\n", "\u001b[2A"], repeat: 36, delay: 5 },
              { text: ["\ud83d\ude00", "", "\u00e9", "(\u00b9\u00c5", "\ud83d\ude00", "-Q", "V\u000e\r", "\u00e9", "d "], repeat: 138, delay: 0 },
              { text: ["\ud83d\ude00", "\r\n", "h\u0007\u001c\u00f5", "4", "", "", "\u00e9", "u"], repeat: 82, delay: 0 },
            ],
          ],
        ],
        // A failure is shrunk on real files and real pauses: seed 133's took 330 s (225 shrinks) and
        // the test hit its 60 s timeout with no counterexample printed. Stopped at 30 s, it reports
        // the smallest failing input found by then (and a run that hangs fails with the seed).
        interruptAfterTimeLimit: 30_000,
        markInterruptAsFailure: true,
      },
    );
  });

  it("output that trickles in is read in gathered steps, not a read per line, and every byte arrives", async () => {
    // 150 lines 2 ms apart (≥ 300 ms): a read per change event gave ~150 chunks (and as many empty
    // reads); gathered, a read every GATHER_MS (50 ms) gives about 300 / 50 + 1.
    const path = fresh("trickle");
    const wfd = openSync(path, "ax", 0o600);
    const chunks: number[] = [];
    const tail = new FileTail(path, openSync(path, "r"), Buffer.alloc(16 * 1024), {
      onChunk: (c) => chunks.push(c.length),
      onBacklog: () => {},
      onTruncated: () => {},
    });
    let written = 0;
    const started = performance.now();
    for (let i = 0; i < 150; i++) {
      written += writeSync(wfd, `line ${i} of a server's log\n`);
      await pause(2);
    }
    const ms = performance.now() - started;
    closeSync(wfd);
    await tail.finish();
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(written);
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(ms / GATHER_MS) + 3);
  });

  it("reads up to the size the file has when finish is called, not what a writer adds later", async () => {
    const path = fresh("bounded");
    const wfd = openSync(path, "ax");
    writeSync(wfd, "a".repeat(100_000));
    let got = 0;
    const tail = new FileTail(path, openSync(path, "r"), Buffer.alloc(1024), { onChunk: (c) => (got += c.length), onBacklog: () => {}, onTruncated: () => {} });
    const done = tail.finish();
    writeSync(wfd, "b".repeat(100_000));
    await done;
    closeSync(wfd);
    expect(got).toBe(100_000);
  });

  it("a read in flight when finish is called delivers nothing past the end, and is no cut", async () => {
    // A writer outside the group (setsid) appending all along: the read under way when finish() took
    // the size could return bytes appended after it, past the end — seen as a cut below what was read
    // (a SpillError on a run whose spill was kept), about one run in four of such a writer.
    for (let round = 0; round < 40; round++) {
      const path = fresh("overshoot");
      writeFileSync(path, "");
      const writer = spawn("bash", ["-c", `exec >> '${path}'; while :; do echo overshoot-$RANDOM; done`], { stdio: "ignore" });
      await until(() => statSync(path).size > 0, "the writer's first line", 5000);
      let got = 0;
      let cut = false;
      const tail = new FileTail(path, openSync(path, "r"), Buffer.alloc(64 * 1024), {
        onChunk: (c) => (got += c.length),
        onBacklog: () => {},
        onTruncated: () => (cut = true),
      });
      await pause(round % 5);
      await tail.finish();
      writer.kill("SIGKILL");
      expect(cut).toBe(false);
      expect(got).toBe(tail.readTo);
    }
  });
});

describe("exec with the command writing its spill", () => {
  const outputs = [
    { seed: 1, size: 0, flags: [] },
    { seed: 2, size: 900, flags: ["ansi"] },
    { seed: 3, size: 300_000, flags: [] },
    { seed: 4, size: 2_000_000, flags: ["ansi", "cr"] },
    { seed: 5, size: 3_000_000, flags: ["invalid"] },
    { seed: 6, size: 500_000, flags: ["nul"] },
    { seed: 7, size: 6_000_000, flags: ["ansi", "cr", "invalid"] },
  ];
  it.each(outputs)("output $size bytes ($flags): the view equals the pipe path's, the spill is the output byte for byte", async ({ seed, size, flags }) => {
    const command = `node ${gen} ${seed} ${size} ${flags.join(" ")}`;
    const dir = fresh("same");
    const limits = { maxBytes: 4096, maxLines: 50, retain: "tail" as const };
    const direct = await exec(command, { capture: { limits, spill: { direct: true, dir } } });
    const piped = await exec(command, { capture: { limits, spill: { dir, direct: false } } });
    expect(viewOf(direct)).toEqual(viewOf(piped));
    expect(direct.spillPath === undefined).toBe(piped.spillPath === undefined);
    if (direct.spillPath !== undefined) {
      const full = execFileSync("sh", ["-c", command], { maxBuffer: 64 * 1024 * 1024 });
      expect(readFileSync(direct.spillPath).equals(full)).toBe(true);
      expect(readFileSync(piped.spillPath!).equals(full)).toBe(true);
      // Read-only while the command ran; the pipes' spill mode once kept.
      expect(statSync(direct.spillPath).mode & 0o777).toBe(0o600);
    }
  });

  it("the file exists while the command runs and is gone, with the directories made for it, when the limits were never crossed", async () => {
    const dir = fresh("small");
    const running = start("echo hello; sleep 0.3; echo bye", { capture: { spill: { direct: true, dir } } });
    await until(() => existsSync(join(dir, "spill")) && readdirSync(join(dir, "spill")).length === 1, "the spill file to be created");
    const r = await running.result;
    expect(r.text).toBe("hello\nbye\n");
    expect(r.spillPath).toBeUndefined();
    expect(existsSync(dir)).toBe(false);
  });

  it("stdout and stderr each keep their own order; the two interleave in the order they reach the file", async () => {
    for (let i = 0; i < 5; i++) {
      const r = await exec("echo out1; echo err1 >&2; echo out2; echo err2 >&2; printf a; printf b >&2; echo", {
        capture: { spill: { direct: true, dir: fresh("order") } },
      });
      const lines = r.text.replace("a", "").replace("b", "").split("\n");
      expect(lines.filter((l) => l.startsWith("out"))).toEqual(["out1", "out2"]);
      expect(lines.filter((l) => l.startsWith("err"))).toEqual(["err1", "err2"]);
      expect([...r.text].sort().join("")).toBe([..."out1\nerr1\nout2\nerr2\nab\n"].sort().join(""));
    }
  });

  it("a background job writing after the command exits, within the grace, is captured", async () => {
    // past the 100 ms read-out after the exit, well inside the 500 ms grace (0.25 s failed once under load)
    const r = await exec("(sleep 0.15; echo late) & echo early", { capture: { spill: { direct: true, dir: fresh("late") } } });
    expect(r.text).toBe("early\nlate\n");
    expect(r.exitCode).toBe(0);
  });

  it("a command that closes its stdout early, or both outputs, ends normally", async () => {
    const spill = { dir: fresh("closed") };
    const r = await exec("echo first; exec 1>&-; echo err >&2; sleep 0.05; echo more >&2", { capture: { spill } });
    expect(r.text).toBe("first\nerr\nmore\n");
    const silent = await exec("exec >&- 2>&-; sleep 0.1; exit 4", { capture: { spill } });
    expect(silent.text).toBe("");
    expect(silent.exitCode).toBe(4);
  });

  it("a command that empties its output file by reopening /dev/stdout: the view still has every byte when the cut is seen", async () => {
    // Running as root the reopen succeeds (O_TRUNC empties the file); otherwise it fails (the file is
    // read-only while the command runs). Either way nothing before it is lost.
    const command = "seq 1 500; sleep 0.3; echo out > /dev/stdout; sleep 0.3; echo after";
    const r = await exec(command, { capture: { spill: { direct: true, dir: fresh("cut") } } });
    const seq = Array.from({ length: 500 }, (_, i) => `${i + 1}\n`).join("");
    expect(r.text.startsWith(seq)).toBe(true);
    expect(r.text.endsWith("after\n")).toBe(true);
    if (process.getuid?.() === 0) expect(r.text).toBe(`${seq}out\nafter\n`);
    expect(r.spillPath).toBeUndefined();
  });

  it("past the limits, a spill that the command cut is a failure, not a lossy success", async () => {
    if (process.getuid?.() !== 0) return; // the reopen fails for other users: nothing is cut
    const err = await exec("seq 1 20000; sleep 0.3; echo out > /dev/stdout; sleep 0.3; echo after", {
      capture: { spill: { direct: true, dir: fresh("cut-big") } },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpillError);
    expect((err as SpillError).message).toContain("/dev/stdout");
    expect((err as SpillError).view?.text.endsWith("out\nafter\n")).toBe(true);
  });

  it("binary output: flagged, and the spill holds its bytes", async () => {
    const dir = fresh("binary");
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 256));
    const file = join(work, `binary-${n}.bin`);
    writeFileSync(file, bytes);
    const r = await exec(`cat ${file}`, { capture: { spill: { direct: true, dir } } });
    const piped = await exec(`cat ${file}`, { capture: { spill: { dir, direct: false } } });
    expect(r.binary).toBe(true);
    expect(viewOf(r)).toEqual(viewOf(piped));
    expect(readFileSync(r.spillPath!).equals(bytes)).toBe(true);
  });

  it("input through stdin reaches the command", async () => {
    const running = start("head -n 1", { stdin: "pipe", capture: { spill: { direct: true, dir: fresh("stdin") } } });
    running.write("hello\n");
    const r = await running.result;
    expect(r.text).toBe("hello\n");
  });

  it("a timeout ends the group, keeps what a SIGTERM handler prints, and reads the file to its end", async () => {
    const r = await exec("trap 'echo summary; exit 3' TERM; seq 1 20000; while :; do sleep 0.02; done", {
      timeoutMs: 400,
      capture: { limits: { maxLines: 100 }, spill: { direct: true, dir: fresh("timeout") } },
    });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(3);
    // bash reports the killed sleep ("Terminated") on stderr before running the trap; stderr is a pipe
    // that spool copies into the file, so the report may land after the summary.
    const withoutReport = (text: string) => text.replace(/^.*Terminated.*\n/m, "");
    expect(withoutReport(r.text).endsWith("\nsummary\n")).toBe(true);
    const spilled = readFileSync(r.spillPath!, "utf8");
    expect(spilled.startsWith(Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join(""))).toBe(true);
    expect(withoutReport(spilled).endsWith("summary\n")).toBe(true);
    expect(r.rawBytes).toBe(Buffer.byteLength(spilled));
    expect(r.truncation.totalLines).toBe(spilled.split("\n").length - 1);
  });

  it("an abort kills a grandchild that ignores SIGTERM, and the run ends", async () => {
    const ac = new AbortController();
    const started = Date.now();
    const pending = exec("sh -c 'trap \"\" TERM; echo $$; while :; do echo tick; sleep 0.01; done' & wait", {
      signal: ac.signal,
      killGraceMs: 300,
      capture: { spill: { direct: true, dir: fresh("abort") } },
    });
    await pause(300);
    ac.abort();
    const r = await pending;
    expect(r.aborted).toBe(true);
    const pid = Number(r.text.split("\n")[0]);
    expect(alive(pid)).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a writer far faster than the capture is held back: a timeout still ends the run soon, every byte read", async () => {
    // Cursor-up lines go through the terminal model (~25 MB/s here); yes writes ~1 GB/s, so unbounded
    // it would leave ~1.5 GB (a minute of reading) after the timeout. Bounded, what is left is the
    // lag bound plus what yes wrote while one read was being processed (the emulator's first read
    // takes ~100 ms): ~100 MB at most.
    const started = Date.now();
    const r = await exec("yes $'\\e[1Aline'", { timeoutMs: 1500, capture: { spill: { direct: true, dir: fresh("yes") } } });
    expect(r.timedOut).toBe(true);
    expect(r.spillPauses).toBeGreaterThan(0);
    expect(statSync(r.spillPath!).size).toBe(r.rawBytes);
    expect(r.rawBytes).toBeLessThan(400_000_000);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("plain yes under a timeout: every byte written is read, and the run ends soon", async () => {
    const started = Date.now();
    const r = await exec("yes", { timeoutMs: 1000, capture: { spill: { direct: true, dir: fresh("yes-plain") } } });
    expect(r.timedOut).toBe(true);
    expect(statSync(r.spillPath!).size).toBe(r.rawBytes);
    expect(r.truncation.totalLines).toBe(r.rawBytes / 2);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it("memory stays bounded on a fast generator", () => {
    const script = join(work, "rss.mjs");
    writeFileSync(
      script,
      `import { exec } from ${JSON.stringify(distCapture)};
       const r = await exec("node ${gen} 9 300000000", { capture: { limits: { retain: "tail" }, spill: { direct: true, dir: ${JSON.stringify(fresh("rss"))} } } });
       console.log(JSON.stringify({ raw: r.rawBytes, rssMB: process.resourceUsage().maxRSS / 1024 }));`,
    );
    const out = JSON.parse(execFileSync("node", [script], { encoding: "utf8" })) as { raw: number; rssMB: number };
    expect(out.raw).toBe(300_000_000);
    expect(out.rssMB).toBeLessThan(150);
  });
});

describe("which path a spill takes by default", () => {
  // `[ -f /dev/stdout ]`: a regular file when the command writes its spill, a socket on the pipes.
  const probe = "if [ -f /dev/stdout ]; then echo file; else echo pipe; fi; echo usage; echo error > /dev/stderr";
  const root = process.geteuid?.() === 0;

  it.runIf(root)("as root, the pipes: reopening /dev/stderr cannot empty what the command wrote before", async () => {
    const r = await exec(probe, { capture: { spill: { dir: fresh("root-default") } } });
    const text = r.text;
    expect(text.startsWith("pipe\nusage\n")).toBe(true);
    // Asked for, root gets the file, and the reopen is its own to answer for.
    const asked = await exec("if [ -f /dev/stdout ]; then echo file; else echo pipe; fi", { capture: { spill: { direct: true, dir: fresh("root-asked") } } });
    expect(asked.text).toBe("file\n");
  });

  it.runIf(otherUserCanRead(distCapture))("as another user, the file: a reopen of /dev/stderr reaches its pipe, and nothing is lost", async () => {
    // Run as that user: as root, the capturing process becomes `nobody` (uid 65534) in a child.
    // Not under the suite's private (0700) temp directory: that user must reach it.
    const dir = mkdtempSync(join(tmpdir(), "spool-user-default-"));
    chmodSync(dir, 0o777);
    const script = join(dir, "probe.mjs");
    writeFileSync(
      script,
      `import { exec } from ${JSON.stringify(distCapture)};
       const r = await exec(${JSON.stringify(probe)}, { capture: { spill: { dir: ${JSON.stringify(dir)} } } });
       process.stdout.write(JSON.stringify({ uid: process.geteuid(), text: r.text }));`,
    );
    chmodSync(script, 0o644);
    const out = JSON.parse(execFileSync(process.execPath, [script], { encoding: "utf8", ...OTHER_USER })) as {
      uid: number;
      text: string;
    };
    rmSync(dir, { recursive: true, force: true });
    expect(out.uid).not.toBe(0);
    expect(out.text).toBe("file\nusage\nerror\n");
  });
});

describe("stderr on the file path is a pipe that spool appends to the spill", () => {
  // Each "as another user" test runs the build as that user, who must be able to reach it.
  const reachable = otherUserCanRead(distCapture);
  const gen20 = `node ${gen} 21 20000000`;
  const expected20 = () => execFileSync("sh", ["-c", gen20], { maxBuffer: 64 * 1024 * 1024 });
  type Outcome = { uid: number; text: string; exitCode: number; rawBytes: number; spillPath?: string; spillBytes?: number; spillSha?: string; code?: string };
  const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

  /**
   * exec as a user that is not root (as root, the capturing process becomes `nobody` in a child):
   * the default path for a spill is then the file, and the spill is read-only while the command runs.
   */
  function asAnotherUser(command: string, limits?: object): Outcome {
    // Not under the suite's private (0700) temp directory: that user must reach it.
    const dir = mkdtempSync(join(tmpdir(), "spool-user-stderr-"));
    chmodSync(dir, 0o777);
    const script = join(dir, "run.mjs");
    writeFileSync(
      script,
      `import { createHash } from "node:crypto";
       import { readFileSync } from "node:fs";
       import { exec } from ${JSON.stringify(distCapture)};
       const report = (r, code) => {
         const spill = r.spillPath ? readFileSync(r.spillPath) : undefined;
         process.stdout.write(JSON.stringify({ uid: process.geteuid(), text: r.text, exitCode: r.exitCode, rawBytes: r.rawBytes, spillPath: r.spillPath,
           spillBytes: spill?.length, spillSha: spill && createHash("sha256").update(spill).digest("hex"), code }));
       };
       try {
         report(await exec(${JSON.stringify(command)}, { capture: { limits: ${JSON.stringify(limits ?? {})}, spill: { dir: ${JSON.stringify(dir)} } } }));
       } catch (e) {
         report(e.view ?? {}, e.code);
       }`,
    );
    chmodSync(script, 0o644);
    try {
      const out = execFileSync(process.execPath, [script], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...OTHER_USER });
      const outcome = JSON.parse(out) as Outcome;
      expect(outcome.uid).not.toBe(0);
      return outcome;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it.runIf(reachable)("as another user, `echo x > /dev/stderr` writes its line: stdout is the file, stderr a pipe", () => {
    const r = asAnotherUser("[ -f /dev/stdout ] && [ -p /dev/stderr ] && echo 'file and pipe'; echo error: bad > /dev/stderr; sleep 0.3; echo after");
    expect(r.code).toBeUndefined();
    expect(r.text).toBe("file and pipe\nerror: bad\nafter\n");
    expect(r.exitCode).toBe(0);
  });

  it.runIf(reachable)("as another user, `tee /dev/stderr` writes both copies", () => {
    const r = asAnotherUser("echo twice | tee /dev/stderr");
    expect(r.text).toBe("twice\ntwice\n");
    expect(r.exitCode).toBe(0);
  });

  it.runIf(reachable)("as another user, a set -e script's `echo usage >/dev/stderr; exit 2` shows its usage and keeps its exit code", () => {
    const r = asAnotherUser("set -e; echo usage: tool FILE >/dev/stderr; exit 2");
    expect(r.text).toBe("usage: tool FILE\n");
    expect(r.exitCode).toBe(2);
  });

  it.runIf(reachable)("as another user, 20 MB written through /dev/stderr: the spill is the output byte for byte, the totals exact", () => {
    const r = asAnotherUser(`${gen20} > /dev/stderr`);
    const want = expected20();
    expect(r.code).toBeUndefined();
    expect(r.exitCode).toBe(0);
    expect(r.rawBytes).toBe(want.length);
    expect(r.spillBytes).toBe(want.length);
    expect(r.spillSha).toBe(sha(want));
  });

  it("20 MB on stderr (>&2): the spill is the output byte for byte, the totals exact", async () => {
    const r = await exec(`${gen20} >&2`, { capture: { spill: { direct: true, dir: fresh("stderr-20") } } });
    const want = expected20();
    expect(r.rawBytes).toBe(want.length);
    expect(readFileSync(r.spillPath!).equals(want)).toBe(true);
    expect(statSync(r.spillPath!).mode & 0o777).toBe(0o600);
  });

  it("2>&1 puts stderr on the file too: the true order of the writes", async () => {
    for (let i = 0; i < 5; i++) {
      const r = await exec("{ echo out1; echo err1 >&2; echo out2; echo err2 >&2; printf a; printf b >&2; echo; } 2>&1", {
        capture: { spill: { direct: true, dir: fresh("merged") } },
      });
      expect(r.text).toBe("out1\nerr1\nout2\nerr2\nab\n");
    }
  });

  it("as root, a reopen of /dev/stderr past the limits appends to the spill: no cut, every line kept", async () => {
    const r = await exec("seq 1 20000; echo err > /dev/stderr; sleep 0.3; echo after", { capture: { spill: { direct: true, dir: fresh("no-cut") } } });
    const seq = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join("");
    expect(readFileSync(r.spillPath!, "utf8")).toBe(`${seq}err\nafter\n`);
    expect(r.rawBytes).toBe(Buffer.byteLength(`${seq}err\nafter\n`));
  });

  it("a grandchild that leaves the group holding stderr does not hold up the end; what it wrote before is kept", async () => {
    const started = Date.now();
    const r = await exec("setsid sh -c 'echo bg $$ >&2; exec sleep 30' & sleep 0.2; echo done", {
      capture: { spill: { direct: true, dir: fresh("held") } },
    });
    const pid = Number(/bg (\d+)/.exec(r.text)?.[1]);
    if (pid > 0) process.kill(pid, "SIGKILL");
    expect(r.text).toMatch(/^bg \d+\ndone\n$/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("a runaway on stderr (`yes >&2`) is stopped at spill.maxBytes", async () => {
    const maxBytes = 30 * 1024 * 1024;
    const err = await exec("yes >&2", { capture: { spill: { direct: true, dir: fresh("yes-stderr"), maxBytes } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpillLimitError);
    const path = (err as SpillLimitError).view!.spillPath!;
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(maxBytes);
    expect(size).toBeLessThan(maxBytes + 80 * 1024 * 1024);
    expect(readFileSync(path, "latin1").slice(0, 1000)).toBe("y\n".repeat(500));
  });
});

describe("the spill written by the command, under failures", () => {
  it("a capturing process SIGKILLed mid-run leaves a spill with everything the command had written", async () => {
    const dir = fresh("crash");
    const script = join(work, "crash-direct.mjs");
    const count = join(work, "crash-direct.count");
    // The command records, after each write, how many bytes it has written in all.
    const writer = join(work, "crash-writer.mjs");
    writeFileSync(
      writer,
      `import { writeSync, writeFileSync } from "node:fs";
       let total = 0;
       for (let i = 0; ; i++) {
         const line = "line " + i + " " + "x".repeat(i % 300) + "\\n";
         total += writeSync(1, line);
         if (i % 50 === 0) writeFileSync(${JSON.stringify(count)}, String(total));
       }`,
    );
    writeFileSync(
      script,
      `import { exec } from ${JSON.stringify(distCapture)};
       await exec("node ${writer}", {
         capture: { spill: { direct: true, dir: ${JSON.stringify(dir)}, id: "crash" } },
         onUpdate: (u) => { if ((u.kind === "replace" ? u.view.spillPath : u.metadata.spillPath)) process.stdout.write("spilling\\n"); },
       });`,
    );
    const child = spawn("node", [script], { stdio: ["ignore", "pipe", "inherit"] });
    let said = "";
    child.stdout.on("data", (d: Buffer) => (said += d.toString()));
    await until(() => said.includes("spilling"), "the spill to be published", 20_000);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const spillPath = join(dir, "spill", "crash.log");
    // The orphan guard kills the command's group once the capturing process is gone.
    await until(() => {
      const a = statSync(spillPath).size;
      return new Promise<boolean>((r) => setTimeout(() => r(statSync(spillPath).size === a), 300));
    }, "the command to stop writing");
    const spilled = readFileSync(spillPath, "utf8");
    const recorded = Number(readFileSync(count, "utf8"));
    expect(Buffer.byteLength(spilled)).toBeGreaterThanOrEqual(recorded);
    const lines = spilled.split("\n");
    lines.pop(); // the last line may be cut by the kill
    lines.forEach((l, i) => expect(l).toBe(`line ${i} ${"x".repeat(i % 300)}`));
  });

  it("a disk that fills up under the command fails the run rather than return a lossy result", () => {
    // A 320 MiB tmpfs in a private mount namespace: enough for the command to write its spill itself
    // (64 MiB free at the start), too small for its 400 MB of output. First with the free-space check
    // off (spill.minFreeBytes 0): the disk fills; then as by default (256 MiB to leave free): the
    // command is stopped at the first check, 16 MiB in, with the command a reader's lag (≤ 64 MiB) and
    // the few ms the kill takes further on; then the first again, on stderr.
    const mnt = fresh("full");
    const script = join(work, "full.mjs");
    writeFileSync(
      script,
      `import { rmSync, statfsSync } from "node:fs";
       import { exec } from ${JSON.stringify(distCapture)};
       for (const [minFreeBytes, to] of [[0, ""], [undefined, ""], [0, ">&2"]]) {
         const spill = { direct: true, dir: ${JSON.stringify(mnt)}, ...(minFreeBytes === undefined ? {} : { minFreeBytes }) };
         try {
           const r = await exec("node ${gen} 11 400000000 " + to, { capture: { spill } });
           console.log(JSON.stringify({ ok: true, raw: r.rawBytes, exitCode: r.exitCode }));
         } catch (e) {
           const fs = statfsSync(${JSON.stringify(mnt)});
           console.log(JSON.stringify({ code: e.code, message: e.message, spillPath: e.view?.spillPath, free: fs.bfree * fs.bsize }));
         }
         rmSync(${JSON.stringify(join(mnt, "spill"))}, { recursive: true, force: true });
       }`,
    );
    const probe = spawnSync("unshare", ["-m", "sh", "-c", `mkdir -p ${mnt} && mount -t tmpfs -o size=320m tmpfs ${mnt} && echo ok`], { encoding: "utf8" });
    if (probe.stdout.trim() !== "ok") {
      console.warn("skipped: no private mount namespace for a small tmpfs here");
      return;
    }
    const out = execFileSync("unshare", ["-m", "sh", "-c", `mount -t tmpfs -o size=320m tmpfs ${mnt} && exec node ${script}`], { encoding: "utf8" });
    type Outcome = { ok?: boolean; code?: string; message?: string; spillPath?: string; free: number };
    const [full, stopped, fullOnStderr] = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Outcome);
    expect(full!.ok).toBeUndefined();
    expect(full!.code).toBe("SPOOL_CAPTURE_SPILL");
    expect(full!.message).toContain("ENOSPC");
    expect(full!.spillPath).toBeDefined();
    expect(stopped!.code).toBe("SPOOL_CAPTURE_SPILL_LIMIT");
    expect(stopped!.message).toMatch(/^the disk holding ".*" is down to .* free \(spool leaves 256\.0 MB: spill\.minFreeBytes, --min-free\)/);
    expect(stopped!.spillPath).toBeDefined();
    expect(stopped!.free).toBeGreaterThan(64 * 1024 * 1024);
    // On stderr, spool's own append is what fails: the same failure.
    expect(fullOnStderr!.ok).toBeUndefined();
    expect(fullOnStderr!.code).toBe("SPOOL_CAPTURE_SPILL");
    expect(fullOnStderr!.message).toContain("ENOSPC");
  });

  it("a shell that cannot be spawned: SpawnError, and no spill file or directory is left", async () => {
    const dir = fresh("nospawn");
    const err = await exec("echo hi", { shell: join(work, "no-such-shell"), capture: { spill: { direct: true, dir } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnError);
    await until(() => !existsSync(dir), "the spill directory to be removed", 2000);
  });

  it("a spill directory that cannot be created leaves the run on the pipes, which report it once the limits are crossed", async () => {
    const dir = fresh("blocked");
    execFileSync("sh", ["-c", `mkdir -p ${dir} && echo x > ${dir}/spill`]);
    const small = await exec("seq 1 10", { capture: { spill: { direct: true, dir } } });
    expect(small.text).toBe(Array.from({ length: 10 }, (_, i) => `${i + 1}\n`).join(""));
    const err = await exec("seq 1 100000", { capture: { spill: { direct: true, dir } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpillError);
  });
});
