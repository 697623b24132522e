// Sessions through the built binary: run (with and without --serve), sessions, inspect (including a
// run SIGKILLed mid-command), gc, serve, and the error cases.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { RunInfo } from "../../src/cli/session-view.js";
import { SESSION_RECORD } from "../../src/harness/index.js";
import { openSessionRepo, sessionsDir, setValue } from "../../src/store/index.js";
import { acquireLock } from "../../src/store/jsonl/lock.js";
import { killStarted, runSpool, SPOOL_BIN, startServing, startSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const cwd = tempDir("spool-sessions-");
afterAll(removeTempDirs);
afterEach(killStarted);
const spool = (args: string[], dir = cwd) => runSpool(args, { cwd: dir });
const start = (args: string[], dir = cwd) => startSpool(args, { cwd: dir });

const sessionOf = (stdout: string): string => /Session: \.spool\/sessions\/(\S+)/.exec(stdout)![1]!;

describe("spool sessions / inspect / gc", () => {
  it("every run is recorded; sessions lists id, start, last activity, status, size and command", () => {
    const dir = tempDir("spool-sessions-list-");
    const ok = spool(["run", "-q", "--", "echo", "hello"], dir);
    const bad = spool(["run", "-q", "--", "sh", "-c", "exit 4"], dir);
    const ids = [sessionOf(ok.stdout), sessionOf(bad.stdout)];
    expect(existsSync(join(dir, ".spool/sessions", ids[0]!, "session.jsonl"))).toBe(true);
    const table = spool(["sessions"], dir);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`${ids[0]}\\s+\\S+ \\S+\\s+\\S+ \\S+\\s+succeeded\\s+\\S+ \\S+\\s+echo hello`));
    expect(table.stdout).toMatch(new RegExp(`${ids[1]}.*failed \\(4\\)`));
    const json = JSON.parse(spool(["sessions", "--json"], dir).stdout) as { id: string; status: string; bytes: number }[];
    expect(json.map((s) => s.id)).toEqual(ids);
    expect(json[0]!.bytes).toBeGreaterThan(0);
  });

  it("a command with newlines, terminal escapes and bidi overrides is one printable line in sessions and inspect; --json keeps it as run", () => {
    // Printed raw, its ESC sequences drove the reader's terminal and each newline started a row of its own.
    const dir = tempDir("spool-sessions-hostile-command-");
    const command = "true \x1b]0;pwned\x07\x1b[2J\nsecond \u202eline\r" + "x".repeat(100);
    const id = sessionOf(spool(["run", "-q", "--", command], dir).stdout);
    const table = spool(["sessions"], dir)
      .stdout.split("\n")
      .filter((l) => l !== "");
    expect(table).toHaveLength(2);
    expect(table[1]).toMatch(new RegExp(`^${id} .*  true \\\\x1b\\]0;pwned\\\\x07\\\\x1b\\[2J second \\\\u202eline x+…$`));
    expect(table[1]!.slice(table[1]!.indexOf("true \\x1b")).length).toBe(60);
    const report = spool(["inspect", id], dir).stdout;
    expect(report).not.toMatch(/[\x00-\x09\x0b-\x1f\u202e]/);
    expect(report).toContain(`  command:   true \\x1b]0;pwned\\x07\\x1b[2J second \\u202eline ${"x".repeat(100)}\n`);
    expect(report).toContain(`    $ true \\x1b]0;pwned\\x07\\x1b[2J second \\u202eline ${"x".repeat(100)}   started `);
    expect((JSON.parse(spool(["sessions", "--json"], dir).stdout) as { command: string }[])[0]!.command).toBe(command);
  });

  it("a record whose command is not a string (another program wrote it) shows ? in sessions and inspect, not a crash", async () => {
    const dir = tempDir("spool-sessions-odd-command-");
    const repo = openSessionRepo(sessionsDir(join(dir, ".spool")), { backend: "jsonl" });
    for (const [id, command] of [
      ["num", 42],
      ["nul", null],
      ["missing", undefined],
    ] as const) {
      const s = await repo.create({ id });
      const at = "2026-01-01T00:00:00.000Z";
      const record = { cwd: "/", pid: 1, startedAt: at, endedAt: at, status: "succeeded", exitCode: 0, ...(command !== undefined ? { command } : {}) };
      await s.store.commit([setValue(SESSION_RECORD, record as unknown as RunInfo)]);
      await s.store.close();
    }
    const table = spool(["sessions"], dir);
    expect(table.stderr).toBe("");
    expect(table.stdout.split("\n").filter((l) => / \?$/.test(l))).toHaveLength(3);
    for (const id of ["num", "nul", "missing"]) expect(spool(["inspect", id], dir).stdout).toContain("\n  command:   ?\n");
  });

  it("--store sqlite records the session in SQLite, and inspect reads it", () => {
    const dir = tempDir("spool-sessions-sqlite-");
    const r = spool(["run", "-q", "--store", "sqlite", "--", "seq", "3"], dir);
    expect(r.status).toBe(0);
    const id = sessionOf(r.stdout);
    expect(existsSync(join(dir, ".spool/sessions", id, "session.sqlite"))).toBe(true);
    const report = JSON.parse(spool(["inspect", id, "--json"], dir).stdout) as { backend: string; calls: { settled: boolean }[]; status: string };
    expect(report.backend).toBe("sqlite");
    expect(report.status).toBe("succeeded");
    expect(report.calls[0]!.settled).toBe(true);
  });

  it("inspect on a run SIGKILLed mid-command shows the output recovered from its last durable flush", async () => {
    const dir = tempDir("spool-sessions-kill-");
    const run = start(["run", "--", "sh", "-c", "for i in $(seq 1 100); do echo tick $i; sleep 0.05; done"], dir);
    await until(() => run.err().includes("tick 20"), "tick 20 on stderr");
    run.child.kill("SIGKILL");
    await run.exited; // a killed process writes nothing more: what is on disk now is all there is
    const listed = JSON.parse(spool(["sessions", "--json"], dir).stdout) as { id: string; status: string }[];
    expect(listed[0]!.status).toBe("interrupted");
    const text = spool(["inspect", listed[0]!.id], dir).stdout;
    expect(text).toContain("UNSETTLED");
    expect(text).toMatch(/recovered output \(last durable flush/);
    expect(text).toMatch(/\| tick \d+/);
    const report = JSON.parse(spool(["inspect", listed[0]!.id, "--json"], dir).stdout) as { openScopes: string[]; calls: { recoveredOutput: string }[] };
    expect(report.openScopes).toHaveLength(1);
    const recovered = report.calls[0]!.recoveredOutput;
    expect(recovered.startsWith("tick 1\ntick 2\n")).toBe(true);
    expect(recovered.split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(10);
  }, 30_000);

  it("inspect on a run SIGKILLed before it saved any output says so, with no empty output line for what follows to be read into", async () => {
    const dir = tempDir("spool-sessions-kill-quiet-");
    const run = start(["run", "--session", "quiet", "--", "sleep 30"], dir);
    await until(() => (JSON.parse(spool(["sessions", "--json"], dir).stdout) as unknown[]).length === 1, "the session to be listed");
    await until(() => /UNSETTLED/.test(spool(["inspect", "quiet"], dir).stdout), "the call to start");
    run.child.kill("SIGKILL");
    await run.exited;
    const text = spool(["inspect", "quiet"], dir).stdout;
    expect(text).toMatch(
      /  call call-1 \(bash\): UNSETTLED, 0 chars shown\n    \$ sleep 30   started \S+\n    recovered output \(last durable flush\): none, nothing of its output was saved\n$/,
    );
  }, 30_000);

  it("gc removes sessions older than the cutoff, keeps running ones, and reports what it freed", async () => {
    const dir = tempDir("spool-sessions-gc-");
    spool(["run", "-q", "--", "seq", "1000"], dir);
    spool(["run", "-q", "--", "seq", "10"], dir);
    const live = start(["run", "-q", "--", "sleep", "20"], dir);
    await until(() => (JSON.parse(spool(["sessions", "--json"], dir).stdout) as unknown[]).length === 3, "three sessions listed");
    await new Promise((r) => setTimeout(r, 1100)); // on purpose: the finished sessions grow older than the 1s cutoff
    const dry = spool(["gc", "--older-than", "1s", "--dry-run"], dir);
    expect(dry.stdout).toMatch(/Would free \S+ \S+ from 2 sessions; kept 1/);
    expect((JSON.parse(spool(["sessions", "--json"], dir).stdout) as unknown[]).length).toBe(3);
    const gc = spool(["gc", "--older-than", "1s"], dir);
    expect(gc.status).toBe(0);
    expect(gc.stdout).toMatch(/Freed \S+ \S+ from 2 sessions; kept 1/);
    const left = JSON.parse(spool(["sessions", "--json"], dir).stdout) as { status: string }[];
    expect(left.map((s) => s.status)).toEqual(["running"]);
    live.child.kill("SIGTERM");
  }, 30_000);
});

describe("spool gc when a removal fails", () => {
  it("reports the session it could not remove, goes on with the others, and leaves that one listed for the next gc", (ctx) => {
    const dir = tempDir("spool-sessions-gc-fail-");
    for (const id of ["gc-a", "gc-b", "gc-c"]) spool(["run", "-q", "--session", id, "--", "seq", "1000"], dir);
    const spill = join(dir, ".spool", "sessions", "gc-a", "spill");
    // A mount point inside the session cannot be removed (EBUSY), even by root.
    const probe = spawnSync("unshare", ["-m", "sh", "-c", `mount -t tmpfs tmpfs ${spill} && echo ok`], { encoding: "utf8" });
    if (probe.stdout?.trim() !== "ok") return ctx.skip();
    const gc = spawnSync("unshare", ["-m", "sh", "-c", `mount -t tmpfs tmpfs ${spill} && exec "${process.execPath}" "${SPOOL_BIN}" gc --older-than 0s`], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(gc.status).toBe(1);
    expect(gc.stderr).toMatch(/^spool gc: could not remove gc-a: .*; it is still listed, and the next gc tries again\n$/);
    expect(gc.stdout).toMatch(/removed gc-b[\s\S]*removed gc-c[\s\S]*Freed \S+ \S+ from 2 sessions; kept 1/);
    expect((JSON.parse(spool(["sessions", "--json"], dir).stdout) as { id: string }[]).map((s) => s.id)).toEqual(["gc-a"]);
    const again = spool(["gc", "--older-than", "0s"], dir);
    expect(again.status).toBe(0);
    expect(readdirSync(join(dir, ".spool", "sessions"))).toEqual([]);
  });
});

describe("spool gc and sessions that never got a first record", () => {
  it("removes a 0-byte log or database older than the cutoff (every reader skips it, so it stayed for ever), keeps a recent one and a damaged one", () => {
    const dir = tempDir("spool-sessions-gc-empty-");
    const sessions = join(dir, ".spool", "sessions");
    const make = (id: string, file: string, text: string, ageS: number) => {
      mkdirSync(join(sessions, id), { recursive: true });
      writeFileSync(join(sessions, id, file), text);
      const t = Date.now() / 1000 - ageS;
      utimesSync(join(sessions, id, file), t, t);
    };
    make("old-jsonl", "session.jsonl", "", 3600);
    make("old-sqlite", "session.sqlite", "", 3600);
    make("new-sqlite", "session.sqlite", "", 0);
    make("damaged", "session.jsonl", "garbage, not a header\n", 3600);
    const gc = spool(["gc", "--older-than", "10m"], dir);
    expect(gc.status).toBe(0);
    expect(gc.stdout).toMatch(/^removed old-jsonl \(\S+ \S+, empty\)\nremoved old-sqlite \(\S+ \S+, empty\)\nFreed \S+ \S+ from 2 sessions; kept 2 /);
    expect(gc.stderr).toMatch(/skipping damaged: [\s\S]*skipping new-sqlite: /);
    expect(readdirSync(sessions).sort()).toEqual(["damaged", "new-sqlite"]);
  });
});

describe("spool gc and a 0-byte session whose writer holds its lock", () => {
  it.each(["session.sqlite", "session.jsonl"])(
    "%s: kept while a live process holds the lock (a writer before its first record), removed once it is released",
    (file) => {
      const dir = tempDir("spool-sessions-gc-held-");
      const log = join(dir, ".spool", "sessions", "starting", file);
      mkdirSync(dirname(log), { recursive: true });
      writeFileSync(log, "");
      const t = Date.now() / 1000 - 3600;
      utimesSync(log, t, t);
      const release = acquireLock(`${log}.lock`, log); // held by this test's process, alive
      try {
        const gc = spool(["gc", "--older-than", "0s"], dir);
        expect(gc.status).toBe(0);
        expect(gc.stderr).toBe("");
        expect(gc.stdout).toMatch(/^Freed \S+ \S+ from 0 sessions; kept 1 /);
        expect(existsSync(log)).toBe(true);
      } finally {
        release();
      }
      const gc = spool(["gc", "--older-than", "0s"], dir);
      expect(gc.stdout).toMatch(/^removed starting \(\S+ \S+, empty\)\nFreed \S+ \S+ from 1 session; kept 0 /);
      expect(existsSync(dirname(log))).toBe(false);
    },
  );
});

describe("spool inspect on odd files", () => {
  it("a spill entry it cannot read is a warning, not the end of the report; a damaged header does not send the user to repair", () => {
    const dir = tempDir("spool-inspect-odd-");
    spool(["run", "-q", "--session", "odd-spill", "--", "echo hi"], dir);
    symlinkSync(join(dir, "no-such-file"), join(dir, ".spool", "sessions", "odd-spill", "spill", "gone.log"));
    const r = spool(["inspect", "odd-spill"], dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("echo hi");
    expect(r.stderr).toMatch(/^spool inspect: warning: cannot read spill file \S+gone\.log: ENOENT/);
    spool(["run", "-q", "--session", "odd-head", "--", "echo hi"], dir);
    writeFileSync(join(dir, ".spool", "sessions", "odd-head", "session.jsonl"), "garbage, not a header\n");
    const damaged = spool(["inspect", "odd-head"], dir);
    expect(damaged.status).toBe(1);
    expect(damaged.stderr).toContain("session.jsonl:1: ");
    expect(damaged.stderr).toContain("restore the file from a backup or move it aside");
    expect(damaged.stderr).not.toContain("spool repair");
  });
});

describe("session directories spool cannot list", () => {
  it("a symbolic link in place of a session directory is a warning from sessions and gc, not silence", () => {
    const dir = tempDir("spool-sessions-link-");
    spool(["run", "-q", "--session", "real-one", "--", "echo hi"], dir);
    const sessions = join(dir, ".spool", "sessions");
    symlinkSync(join(sessions, "real-one"), join(sessions, "linked-one"));
    const listed = spool(["sessions"], dir);
    expect(listed.status).toBe(0);
    expect(listed.stderr).toMatch(/^spool sessions: warning: linked-one: \S+linked-one is a symbolic link, which spool does not follow/);
    const gc = spool(["gc", "--older-than", "1d"], dir);
    expect(gc.stderr).toContain("spool gc: warning: linked-one: ");
  });

  it("run --session through a symbolic link is refused before the command runs, in JSONL and SQLite: nothing is written where the link points", () => {
    // It followed the link: the session went outside the root, where sessions and inspect said "no session".
    const dir = tempDir("spool-sessions-link-run-");
    const outside = tempDir("spool-sessions-link-target-");
    const sessions = join(dir, ".spool", "sessions");
    mkdirSync(sessions, { recursive: true });
    symlinkSync(outside, join(sessions, "linked"));
    for (const store of ["jsonl", "sqlite"]) {
      const r = spool(["run", "-q", "--store", store, "--session", "linked", "--", "touch ran"], dir);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^spool run: cannot create \S+linked: it is a symbolic link, which spool does not follow/);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(existsSync(join(dir, "ran"))).toBe(false);
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe("spool run --serve and spool serve", () => {
  it("run --serve prints the viewer URL before the command starts and streams the session state", async () => {
    const dir = tempDir("spool-sessions-serve-");
    const run = await startServing(["run", "--serve", "--exit", "--", "sh", "-c", "sleep 0.5; for i in 1 2 3 4 5; do echo step $i; sleep 0.3; done"], {
      cwd: dir,
    });
    expect(run.err().indexOf("viewer at")).toBeLessThan(Math.max(0, run.err().indexOf("step 1")) || Infinity);
    const [base, token] = [run.origin, run.token];
    const states = (await (await fetch(`${base}/v1/states?token=${token}`)).json()) as { states: string[] };
    expect(states.states).toContain("sessions");
    const name = states.states.find((s) => s.startsWith("session:"))!;
    const res = await fetch(`${base}/v1/state/${encodeURIComponent(name)}?token=${token}`);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("step 3")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    await reader.cancel();
    expect(seen).toMatch(/^id: 0\nevent: ops\ndata: \[\["r",/);
    expect(seen).toContain("step 3");
    expect(await run.exited).toBe(0);
  }, 30_000);

  it("a port in use is a clear error", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const before = existsSync(join(cwd, ".spool/sessions")) ? readdirSync(join(cwd, ".spool/sessions")).length : 0;
      const r = spool(["run", `--serve=${port}`, "--exit", "--", "touch ran-anyway"]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is already in use by another program; pick another with --serve=PORT`);
      // The command never ran, so no session was recorded for it.
      expect(existsSync(join(cwd, "ran-anyway"))).toBe(false);
      expect(existsSync(join(cwd, ".spool/sessions")) ? readdirSync(join(cwd, ".spool/sessions")).length : 0).toBe(before);
    } finally {
      blocker.close();
    }
  });

  it("serve replays finished sessions from their logs", async () => {
    const dir = tempDir("spool-sessions-replay-");
    const id = sessionOf(spool(["run", "-q", "--", "sh", "-c", "echo replayed-line; exit 2"], dir).stdout);
    const serve = await startServing(["serve", "--port", "0"], { cwd: dir });
    const res = await fetch(`${serve.origin}/v1/state/${encodeURIComponent(`session:${id}`)}?token=${serve.token}`);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const { value } = await reader.read();
    await reader.cancel();
    const base = JSON.parse(/data: (.*)\n/.exec(value!)![1]!) as [
      ["r", { status: string; exitCode: number; calls: { output: { content: { text: string }[] } }[] }],
    ];
    expect(base[0][1].status).toBe("failed");
    expect(base[0][1].exitCode).toBe(2);
    expect(base[0][1].calls[0]!.output.content[0]!.text).toContain("replayed-line");
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
  }, 30_000);
});

describe("CLI errors", () => {
  it("an unknown session is a clear error", () => {
    const r = spool(["inspect", "no-such-session"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no session "no-such-session"');
    expect(r.stderr).toContain("spool sessions");
    // The argument's escape sequences are shown, not played to the terminal (a title change, a clear).
    const hostile = spool(["inspect", "x\u001b]0;owned\u0007\u001b[2J"]);
    expect(hostile.status).toBe(2);
    expect(hostile.stderr).toContain('no session "x\\u001b]0;owned\\u0007\\u001b[2J"');
    expect(hostile.stderr).not.toContain("\u001b");
  });

  it("a session open in another process is refused with its pid", async () => {
    const dir = tempDir("spool-sessions-lock-");
    const first = start(["run", "--", "sh", "-c", "echo started; sleep 20"], dir);
    await until(() => first.err().includes("started"), "the command to start");
    const id = (JSON.parse(spool(["sessions", "--json"], dir).stdout) as { id: string }[])[0]!.id;
    const second = spool(["run", "--session", id, "--", "true"], dir);
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`is open in process ${first.child.pid}`);
    first.child.kill("SIGTERM");
    await first.exited;
  }, 30_000);

  it("gc without --older-than refuses to guess", () => {
    const r = spool(["gc"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--older-than AGE is required");
  });
});
