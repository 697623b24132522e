// The built `spool` binary, run the way a user runs it: `runSpool` waits for it, `startSpool` returns
// the live child with its output so far. Children a test started are killed by `killStarted`.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";

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

export function killStarted(): void {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
}
