// Load through the CLI: 100 SSE subscribers, half of them paused, on a
// `spool run --serve` whose command prints over 5 MB/s for 10 s. The run's peak RSS stays bounded and
// every reading subscriber converges on the final state; prints the figures. What reaches subscribers
// is the run's bounded view as its publisher paces it (far less than 5 MB/s each); the wire pushed at
// over 5 MB/s per subscriber is test/wire/load.test.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { subscribe, type Subscription } from "../../src/wire/index.js";
import { SPOOL_BIN } from "../support/cli.js";
import { until } from "../support/until.js";

const cwd = mkdtempSync(join(tmpdir(), "spool-load-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const peakRss = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

// 5.5 MB/s for 10 s by the clock (a late timer tick writes what the time since the last one produced),
// numbered 100-byte lines, then "done N" with the line count.
const PRODUCER = `
const line = (i) => String(i).padStart(8, "0") + " " + "x".repeat(90) + "\\n";
let i = 0;
const t0 = Date.now();
const timer = setInterval(() => {
  const elapsed = Math.min(10, (Date.now() - t0) / 1000);
  let chunk = "";
  while ((i + 1) * 100 <= 5_500_000 * elapsed) chunk += line(i++);
  process.stdout.write(chunk);
  if (elapsed >= 10) { clearInterval(timer); process.stdout.write("done " + i + "\\n"); }
}, 10);
`;

type View = { status: string; calls: { output?: { content: { text: string }[] } }[] };

describe("spool run --serve under load", () => {
  it("100 subscribers, half paused, on a run printing over 5 MB/s for 10 s: RSS bounded, readers converge", async () => {
    const child: ChildProcess = spawn(process.execPath, [SPOOL_BIN, "run", "--serve", "--", process.execPath, "-e", PRODUCER], {
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    });
    const [, base, token] = await until(() => /viewer at (http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+)/.exec(stderr), "the viewer URL");
    const names = ((await (await fetch(`${base}/v1/states?token=${token}`)).json()) as { states: string[] }).states;
    const stream = `${base}/v1/state/${encodeURIComponent(names.find((n) => n.startsWith("session:"))!)}`;

    // A paused subscriber that the server dropped sees its connection end (an error or a close);
    // one that was kept stays open.
    const paused: { res: IncomingMessage; ended: boolean }[] = [];
    for (let i = 0; i < 50; i++) {
      const req = request(stream, { headers: { authorization: `Bearer ${token}` } });
      cleanups.push(() => req.destroy());
      const p = await new Promise<{ res: IncomingMessage; ended: boolean }>((resolve) =>
        req.on("response", (res) => (res.pause(), resolve({ res, ended: false }))).end(),
      );
      const ended = () => void (p.ended = true);
      req.on("error", ended).on("close", ended);
      p.res.on("error", ended).on("close", ended).on("end", ended).on("aborted", ended);
      paused.push(p);
    }
    const readers: Subscription<View>[] = Array.from({ length: 50 }, () => subscribe<View>(stream, { token: token! }));
    cleanups.push(() => readers.forEach((r) => r.close()));

    const started = performance.now();
    const done = await until(() => /done (\d+)/.exec(stderr), "the command to finish", 120_000);
    const seconds = (performance.now() - started) / 1000;
    const lines = Number(done[1]);
    await until(
      () => readers.every((r) => r.value?.status === "succeeded" && r.value.calls[0]?.output?.content[0]?.text.includes(`done ${lines}`)),
      "every reader to converge",
      60_000,
    );

    // Every reader comes to hold exactly what a fresh subscriber gets once the run has settled.
    await new Promise((r) => setTimeout(r, 500));
    const fresh = subscribe<View>(stream, { token: token! });
    await until(() => fresh.value !== undefined, "a fresh base");
    const final = fresh.value;
    fresh.close();
    // Equal as values (key order may differ: a replica adds keys in the order the ops arrived).
    await until(() => readers.every((r) => isDeepStrictEqual(r.value, final)), "every reader to hold the final state", 30_000).catch(() => {});
    const same = readers.filter((r) => isDeepStrictEqual(r.value, final)).length;

    // Reading what a paused subscriber was left lets a dropped one see its end.
    for (const p of paused) p.res.resume();
    await new Promise((r) => setTimeout(r, 3000));
    const droppedPaused = paused.filter((p) => p.ended).length;
    const readerReconnects = readers.reduce((n, r) => n + r.connects - 1, 0);
    const rss = peakRss(child.pid!);
    console.log(
      `load: ${((lines * 100) / 1e6 / 10).toFixed(1)} MB/s for 10 s (${((lines * 100) / 1e6).toFixed(0)} MB in ${seconds.toFixed(1)} s), 50 paused + 50 reading: ` +
        `peak RSS ${(rss / 2 ** 20).toFixed(0)} MiB, paused dropped ${droppedPaused}/50, reader reconnects ${readerReconnects}, converged ${same}/50`,
    );
    expect(lines * 100).toBeGreaterThanOrEqual(50_000_000);
    expect(same).toBe(50);
    expect(rss).toBeLessThan(300 * 2 ** 20);
    child.kill("SIGINT");
    await exited;
  }, 240_000);
});
