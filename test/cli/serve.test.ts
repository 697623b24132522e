// `spool serve` while nobody is watching: a finished session is read once, a damaged one
// is reported once, an idle serve over large sessions costs almost no CPU, and a live session is
// followed as it grows. Through the built binary (npm test builds first).
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RunInfo } from "../../src/cli/session-view.js";
import type { ToolResultMessage } from "../../src/context/index.js";
import { TRANSCRIPT } from "../../src/harness/index.js";
import { appendList, openJsonlStore, setValue, value } from "../../src/store/index.js";
import { subscribe } from "../../src/wire/index.js";
import { killStarted, startSpool } from "../support/cli.js";
import { until } from "../support/until.js";

const cwd = mkdtempSync(join(tmpdir(), "spool-serve-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
afterEach(killStarted);

const start = (args: string[], dir: string) => startSpool(args, { cwd: dir });

const serving = (err: string) => /at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(err);

/** A finished session as `spool run` leaves one, with `results` tool results of `resultBytes` each. */
async function finishedSession(dir: string, id: string, results: number, resultBytes: number): Promise<string> {
  const sdir = join(dir, ".spool", "sessions", id);
  mkdirSync(sdir, { recursive: true });
  const file = join(sdir, "session.jsonl");
  const store = await openJsonlStore(file, { sessionId: id });
  const info: RunInfo = {
    command: "make all",
    cwd: dir,
    pid: 1,
    startedAt: "2026-11-30T10:00:00.000Z",
    endedAt: "2026-11-30T10:05:00.000Z",
    status: "succeeded",
    exitCode: 0,
  };
  await store.commit([setValue(value<RunInfo>("spool", "run"), info)]);
  const line = `${"compiling module ".repeat(5)}\n`;
  for (let i = 0; i < results; i++) {
    const text = `result ${i}\n${line.repeat(Math.ceil(resultBytes / line.length))}`.slice(0, resultBytes);
    const msg: ToolResultMessage = { role: "tool", toolCallId: `call-${i}`, toolName: "bash", isError: false, content: [{ type: "text", text }] };
    await store.commit([appendList(TRANSCRIPT, msg)]);
  }
  await store.close();
  return file;
}

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100 on Linux)
}

describe("spool serve while idle", () => {
  it("an idle serve over 5 sessions of 20 MB each uses under 10% of a core over 10 s more than an idle Node process", async () => {
    const dir = mkdtempSync(join(cwd, "idle-"));
    for (let i = 0; i < 5; i++) {
      const file = await finishedSession(dir, `s${i}`, 100, 200_000);
      expect(statSync(file).size).toBeGreaterThan(20_000_000);
    }
    const serve = start(["serve", "--port", "0"], dir);
    await until(() => serving(serve.err()), "serve to start");
    expect(serve.err()).toContain("serving 5 sessions");
    // Beside it, a Node process that wakes every 250 ms and does nothing: what an idle Node costs on
    // this machine is the floor. On this VM that alone measured 0.7-3% of a core in clock ticks, so
    // serve is judged by what it costs above it, over the same 10 s.
    const floor = spawn(process.execPath, ["-e", "setInterval(() => {}, 250)"], { stdio: "ignore" });
    try {
      // Let the start-up reads (100 MB) and their garbage collection settle: on a loaded machine the
      // collector's threads finish that work seconds later, and it is no cost of being idle.
      await new Promise((r) => setTimeout(r, 3000));
      const before = cpuSeconds(serve.child.pid!);
      const floorBefore = cpuSeconds(floor.pid!);
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, 10_000));
      const seconds = (performance.now() - t0) / 1000;
      const share = (cpuSeconds(serve.child.pid!) - before) / seconds;
      const floorShare = (cpuSeconds(floor.pid!) - floorBefore) / seconds;
      console.log(`idle serve, 5 × 20 MB sessions: ${(share * 100).toFixed(2)}% of a core over 10 s; an idle Node beside it ${(floorShare * 100).toFixed(2)}%`);
      // A guard against re-reading every session at every look (55% of a core, before), with room for
      // a loaded machine: looks every 250 ms measured 2.7-3.7% above the floor here alone, looks that
      // slow down while nothing changes 1.3-3.6% alone and 2.5-4.5% in full CI runs (other test
      // files running beside it slow serve more than the idle Node). A figure, not the guard: the
      // side-by-side runs in the closing notes are.
      expect(share - floorShare).toBeLessThan(0.1);
    } finally {
      floor.kill();
    }
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 90_000);

  it("a finished session is read once: damage written after the first read, mtime kept, goes unseen", async () => {
    const dir = mkdtempSync(join(cwd, "once-"));
    const file = await finishedSession(dir, "s0", 3, 1000);
    const whole = Math.floor(Date.now() / 1000) - 60; // a whole second, so it can be restored exactly
    utimesSync(file, whole, whole);
    const serve = start(["serve", "--port", "0", "--interval", "20"], dir);
    await until(() => serving(serve.err()), "serve to start");
    // Same inode, size and mtime: only a re-read could notice. serve is stopped meanwhile, so no look
    // falls between the write and the mtime put back (under load one did, and saw a change).
    process.kill(serve.child.pid!, "SIGSTOP");
    writeFileSync(file, readFileSync(file, "utf8").replace("result 1", "result X"));
    utimesSync(file, whole, whole);
    process.kill(serve.child.pid!, "SIGCONT");
    await new Promise((r) => setTimeout(r, 1000));
    expect(serve.err()).not.toContain("skipping");
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 30_000);

  it("a damaged session is reported once, not on every tick", async () => {
    const dir = mkdtempSync(join(cwd, "damaged-"));
    const file = await finishedSession(dir, "bad", 3, 1000);
    await finishedSession(dir, "good", 1, 100);
    writeFileSync(file, readFileSync(file, "utf8").replace("result 1", "result X"));
    const serve = start(["serve", "--port", "0", "--interval", "20"], dir);
    await until(() => serving(serve.err()), "serve to start");
    await new Promise((r) => setTimeout(r, 1500)); // about 75 ticks
    const skips = serve
      .err()
      .split("\n")
      .filter((l) => l.includes("skipping bad"));
    expect(skips).toHaveLength(1);
    expect(skips[0]).toMatch(/session\.jsonl:\d+: the line is damaged/);
    expect(serve.err()).toContain("serving 1 session");
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 30_000);

  it("a finished session whose last line is damaged, or whose log is empty, is skipped with the line sessions prints", async () => {
    const dir = mkdtempSync(join(cwd, "damaged-end-"));
    const tail = await finishedSession(dir, "tail-garbage", 1, 100);
    const empty = await finishedSession(dir, "empty", 1, 100);
    await finishedSession(dir, "good", 1, 100);
    appendFileSync(tail, "garbage garbage\n");
    writeFileSync(empty, "");
    const serve = start(["serve", "--port", "0", "--interval", "20"], dir);
    await until(() => serving(serve.err()), "serve to start");
    expect(serve.err()).toMatch(/skipping empty: \S+session\.jsonl:1: the session header is missing/);
    expect(serve.err()).toMatch(/skipping tail-garbage: \S+session\.jsonl:\d+: the last line is complete \(it ends in a newline\) but damaged/);
    expect(serve.err()).toContain("serving 1 session");
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 30_000);

  it("a live session is followed as it grows, and shows finished when its run ends", async () => {
    const dir = mkdtempSync(join(cwd, "live-"));
    const run = start(["run", "--", "sh", "-c", "for i in $(seq 1 30); do echo live line $i; sleep 0.1; done"], dir);
    await until(() => run.err().includes("live line 3"), "the run to print");
    const serve = start(["serve", "--port", "0", "--interval", "50"], dir);
    const [, base, token] = await until(() => serving(serve.err()), "serve to start");
    const names = ((await (await fetch(`${base}/v1/states?token=${token}`)).json()) as { states: string[] }).states;
    const name = names.find((n) => n.startsWith("session:"))!;
    const texts: string[] = [];
    const sub = subscribe<{ status: string; calls: { output?: { content: { text: string }[] } }[] }>(`${base}/v1/state/${encodeURIComponent(name)}`, {
      token: token!,
      onValue: (v) => texts.push(v.calls[0]?.output?.content[0]?.text ?? ""),
    });
    try {
      await until(() => sub.value?.status === "succeeded", "the session to finish", 30_000);
      expect(texts.some((t) => t.includes("live line") && !t.includes("live line 30"))).toBe(true);
      expect(sub.value!.calls[0]!.output!.content[0]!.text).toContain("live line 30");
      expect(await run.exited).toBe(0);
    } finally {
      sub.close();
    }
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 60_000);
});
