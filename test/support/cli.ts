// The built `spool` binary, run the way a user runs it: `runSpool` waits for it, `startSpool` returns
// the live child with its output so far, `startServing` also waits for the viewer URL it prints.
// Children a test started are killed by `killStarted`, or stopped with Ctrl-C by `stopStarted` (which
// lets `spool run` end the command it started before it exits).
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { until } from "./until.js";

export const SPOOL_BIN = new URL("../../dist/bin/main.js", import.meta.url).pathname;

export interface SpoolResult {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

export function runSpool(args: readonly string[], options: { cwd: string; input?: string; env?: NodeJS.ProcessEnv }): SpoolResult {
  const started = Date.now();
  const r = spawnSync(process.execPath, [SPOOL_BIN, ...args], {
    cwd: options.cwd,
    encoding: "utf8",
    maxBuffer: 256 << 20,
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.env !== undefined ? { env: options.env } : {}),
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

export interface StartedSpool {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  out(): string;
  err(): string;
}

const started: ChildProcess[] = [];

export function startSpool(args: readonly string[], options: { cwd: string } & SpawnOptions): StartedSpool {
  const child = spawn(process.execPath, [SPOOL_BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], ...options });
  started.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d));
  child.stderr?.on("data", (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

export interface ServingSpool extends StartedSpool {
  /** The page URL as printed, with its token. */
  readonly url: string;
  /** `http://127.0.0.1:PORT`, for the API routes. */
  readonly origin: string;
  readonly token: string;
}

/** `startSpool` for `run --serve` and `serve`: resolves once the viewer URL is on stderr; fails if the child exits first. */
export async function startServing(args: readonly string[], options: { cwd: string } & SpawnOptions): Promise<ServingSpool> {
  const run = startSpool(args, options);
  const m = await until(
    () =>
      /((http:\/\/127\.0\.0\.1:\d+)\/\?token=([0-9a-f]+))/.exec(run.err()) ??
      (run.child.exitCode !== null && new Error(`spool exited ${run.child.exitCode}: ${run.err()}`)),
    "the viewer URL on stderr",
  );
  if (m instanceof Error) throw m;
  return { ...run, url: m[1]!, origin: m[2]!, token: m[3]! };
}

export function killStarted(): void {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
}

/** Ctrl-C to every child still running, then SIGKILL to any that has not exited 5 s later. */
export async function stopStarted(): Promise<void> {
  const running = started.splice(0).filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(
    running.map(async (c) => {
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.kill("SIGINT");
      const timer = setTimeout(() => c.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }),
  );
}
