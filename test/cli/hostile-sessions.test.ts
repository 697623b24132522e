// Issue 11 §3 through the built binary: one writer per session for SQLite, `--session` runs kept
// apart, damaged and orphaned session files reported, private session files. One test per defect.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";

const bin = new URL("../../dist/bin/main.js", import.meta.url).pathname;
const cwd = mkdtempSync(join(tmpdir(), "spool-hostile-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

function spool(args: string[], dir: string) {
  const r = spawnSync("node", [bin, ...args], { cwd: dir, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function start(args: string[], dir: string) {
  const child = spawn("node", [bin, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, err: () => stderr };
}

async function until(get: () => boolean, ms = 15_000): Promise<void> {
  const started = Date.now();
  while (!get()) {
    if (Date.now() - started > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const scratch = (name: string): string => mkdtempSync(join(cwd, `${name}-`));
const onlySession = (dir: string): string => (JSON.parse(spool(["sessions", "--json"], dir).stdout) as { id: string }[])[0]!.id;

describe("SQLite has no single-writer lock", () => {
  it("a second `run --store sqlite --session ID` is refused with a clear message, exit 1, and its command does not run", async () => {
    const dir = scratch("sqlite-lock");
    const first = start(["run", "--store", "sqlite", "--", "sh", "-c", "echo started; sleep 20"], dir);
    await until(() => first.err().includes("started"));
    const id = onlySession(dir);
    const second = spool(["run", "--store", "sqlite", "--session", id, "--", "touch", "second-ran"], dir);
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`is open in process ${first.child.pid}`);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(dir, "second-ran"))).toBe(false);
    first.child.kill("SIGTERM");
    await first.exited;
    // The lock goes with its holder: the session takes a new run afterwards.
    expect(spool(["run", "--store", "sqlite", "--session", id, "--", "true"], dir).status).toBe(0);
  }, 30_000);
});

describe("--session mixes up runs", () => {
  it.each(["jsonl", "sqlite"])(
    "%s: each call keeps its own command, times, counts and truncation; the session keeps its first start and names its latest command",
    (store) => {
      const dir = scratch(`mixup-${store}`);
      expect(spool(["run", "-q", "--store", store, "--", "seq 1 3000"], dir).status).toBe(0);
      const id = onlySession(dir);
      const before = (JSON.parse(spool(["sessions", "--json"], dir).stdout) as { startedAt: string; lastActivityAt: string }[])[0]!;
      expect(spool(["run", "-q", "--store", store, "--session", id, "--", "echo hi"], dir).status).toBe(0);
      const s = (JSON.parse(spool(["sessions", "--json"], dir).stdout) as { command: string; startedAt: string; lastActivityAt: string }[])[0]!;
      // The latest command, beside the latest status and exit code it goes with.
      expect(s.command).toBe("echo hi");
      expect(s.startedAt).toBe(before.startedAt);
      expect(Date.parse(s.lastActivityAt)).toBeGreaterThan(Date.parse(before.lastActivityAt));
      const report = JSON.parse(spool(["inspect", id, "--json"], dir).stdout) as {
        calls: {
          id: string;
          command: string;
          startedAt: string;
          endedAt: string;
          truncation: { totalLines: number; totalBytes: number; truncated: boolean };
        }[];
      };
      const [c1, c2] = report.calls;
      expect(c1).toMatchObject({ id: "call-1", command: "seq 1 3000", truncation: { totalLines: 3000, truncated: true } });
      expect(c2).toMatchObject({ id: "call-2", command: "echo hi", truncation: { totalLines: 1, totalBytes: 3, truncated: false } });
      expect(Date.parse(c2!.startedAt)).toBeGreaterThanOrEqual(Date.parse(c1!.endedAt));
    },
    30_000,
  );
});

describe("A complete last line with a bad checksum is dropped silently", () => {
  it("sessions and --session name the file and line; the log is not cut until `spool repair`", () => {
    const dir = scratch("checksum");
    spool(["run", "-q", "--", "echo one"], dir);
    const id = onlySession(dir);
    const log = join(dir, ".spool", "sessions", id, "session.jsonl");
    const text = readFileSync(log, "utf8");
    const lines = text.split("\n").length - 1;
    // Damage the last line's content, keep its newline: a complete line that fails its checksum.
    writeFileSync(log, text.replace(/"succeeded"(?=[^\n]*\n$)/, '"succeedex"'));
    const damaged = readFileSync(log);
    expect(spool(["sessions"], dir).stderr).toContain(`${log}:${lines}: the last line is complete`);
    const rerun = spool(["run", "-q", "--session", id, "--", "touch ran"], dir);
    expect(rerun.status).toBe(1);
    expect(rerun.stderr).toContain(`${log}:${lines}:`);
    expect(rerun.stderr).toContain("spool repair");
    expect(existsSync(join(dir, "ran"))).toBe(false);
    expect(readFileSync(log)).toEqual(damaged);
    const repaired = spool(["repair", id], dir);
    expect(repaired.status).toBe(0);
    expect(repaired.stdout).toContain(`cut at line ${lines}`);
    expect(spool(["run", "-q", "--session", id, "--", "echo two"], dir).status).toBe(0);
  }, 30_000);

  it("repair says '1 byte moved' when the damaged tail is one empty line", () => {
    const dir = scratch("one-byte");
    spool(["run", "-q", "--", "echo one"], dir);
    const id = onlySession(dir);
    const log = join(dir, ".spool", "sessions", id, "session.jsonl");
    writeFileSync(log, `${readFileSync(log, "utf8")}\n`);
    const repaired = spool(["repair", id], dir);
    expect(repaired.status).toBe(0);
    expect(repaired.stdout).toMatch(/; 1 byte moved to /);
  }, 30_000);

  it("repair of a damaged header says once what to do: exit 1, one line, the log untouched", () => {
    const dir = scratch("header");
    spool(["run", "-q", "--", "echo one"], dir);
    const id = onlySession(dir);
    const log = join(dir, ".spool", "sessions", id, "session.jsonl");
    const text = readFileSync(log, "utf8");
    writeFileSync(log, text.replace(/"version":1/, '"version":9'));
    const damaged = readFileSync(log);
    const r = spool(["repair", id], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^spool repair: ${log}:1: the session header itself is damaged, so there is no good line to cut back to\\. `));
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    // The advice came twice: "…; restore the file from a backup. This is damage … restore the file from a backup or move it aside".
    expect(r.stderr.match(/restore the file from a backup/g)).toHaveLength(1);
    expect(readFileSync(log)).toEqual(damaged);
  }, 30_000);
});

describe("orphaned sidecars and missing sidecars are silent", () => {
  it("a sidecar directory without its main log is listed with a warning", () => {
    const dir = scratch("orphan");
    const sdir = join(dir, ".spool", "sessions", "lost");
    mkdirSync(join(sdir, "session.jsonl.scopes"), { recursive: true });
    const r = spool(["sessions"], dir);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("warning: lost: sidecar directory");
    expect(r.stderr).toContain("has no main log");
  });

  it("an open operation whose sidecar is missing is listed with a warning", async () => {
    const dir = scratch("missing-sidecar");
    const run = start(["run", "--", "sh", "-c", "for i in $(seq 1 60); do echo tick $i; sleep 0.05; done"], dir);
    await until(() => run.err().includes("tick 10"));
    run.child.kill("SIGKILL");
    await run.exited;
    const id = onlySession(dir);
    rmSync(join(dir, ".spool", "sessions", id, "session.jsonl.scopes"), { recursive: true, force: true });
    const r = spool(["sessions"], dir);
    expect(r.stderr).toMatch(/warning: \S+: operation op-1 was still open when its run stopped, and its sidecar \S+ is missing/);
    expect(spool(["inspect", id], dir).stderr).toContain("is missing");
  }, 30_000);
});

describe("session directories and logs are created private", () => {
  it.each(["jsonl", "sqlite"])("%s: the session directory is 0700 and its log 0600", (store) => {
    const dir = scratch(`perms-${store}`);
    spool(["run", "-q", "--store", store, "--", "seq 1 10"], dir);
    const sdir = join(dir, ".spool", "sessions", onlySession(dir));
    expect(statSync(sdir).mode & 0o777).toBe(0o700);
    expect(statSync(join(sdir, store === "jsonl" ? "session.jsonl" : "session.sqlite")).mode & 0o777).toBe(0o600);
    expect(statSync(join(sdir, "archive")).mode & 0o777).toBe(0o700);
  });
});
