// The commands that only read sessions — sessions, inspect, gc --dry-run, recall, serve — through the
// built binary, over sessions of every kind a root holds: finished and SIGKILLed JSONL runs, a SQLite
// run, and the 0-byte session.sqlite a run that stopped as it began leaves (sessions and inspect wrote
// SQLite's schema into it). Every file under the root is byte for byte, mode and mtime as it was.
// (Not tried here: a SQLite session whose writer was SIGKILLed, whose WAL SQLite folds into the
// database when a reader's connection, the last one, closes; no record changes. session-format.md.)
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { DiskArchive } from "../../src/context/index.js";
import { killStarted, runSpool, startServing, startSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

afterAll(removeTempDirs);
afterEach(killStarted);

/**
 * Each file and directory under `dir`: kind, mode, and for a file its size, mtime and content hash.
 * A directory's own mtime is left out: a SQLite reader's connection makes and removes the -wal and
 * -shm files beside the database (SQLite's own reader protocol; the database file is not written).
 */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      const st = lstatSync(path);
      const key = relative(dir, path);
      if (st.isDirectory()) {
        out[key] = `dir ${st.mode.toString(8)}`;
        walk(path);
      } else {
        const hash = st.isFile() ? createHash("sha256").update(readFileSync(path)).digest("hex").slice(0, 16) : "-";
        out[key] = `file ${st.mode.toString(8)} ${st.size} ${st.mtimeMs} ${hash}`;
      }
    }
  };
  walk(dir);
  return out;
}

const sessionOf = (stdout: string): string => /Session: \.spool\/sessions\/(\S+)/.exec(stdout)![1]!;

describe("read-only commands write nothing to a session", () => {
  it("sessions, inspect, gc --dry-run, recall and serve leave every session file as it was; a 0-byte session.sqlite is reported as holding no session", async () => {
    const cwd = tempDir("spool-read-only-");
    const spool = (args: readonly string[]) => runSpool(args, { cwd });
    const finished = sessionOf(spool(["run", "-q", "--max-lines", "2", "--", "seq", "1", "5000"]).stdout);
    const sqlite = sessionOf(spool(["run", "-q", "--store", "sqlite", "--", "seq", "3"]).stdout);
    const killed = startSpool(["run", "--", "sh", "-c", "for i in $(seq 1 100); do echo tick $i; sleep 0.05; done"], { cwd });
    await until(() => killed.err().includes("tick 10"), "tick 10 on stderr");
    killed.child.kill("SIGKILL");
    await killed.exited;
    const sessions = join(cwd, ".spool/sessions");
    const empty = "20260101-000000-empty";
    mkdirSync(join(sessions, empty));
    writeFileSync(join(sessions, empty, "session.sqlite"), "");
    const key = new DiskArchive({ dir: join(sessions, finished, "archive") }).put("the archived text\n");
    const before = snapshot(cwd);
    const emptyLine = `${join(sessions, empty, "session.sqlite")} holds no session: it is empty, as a process that stopped before its first write leaves it. It was left as it is; delete its directory if you do not need it.`;

    const listed = spool(["sessions", "--json"]);
    expect(listed.status).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id);
    expect(ids).toHaveLength(3); // the SIGKILLed run is the third
    expect(ids).toEqual(expect.arrayContaining([finished, sqlite]));
    expect(listed.stderr).toBe(
      `spool sessions: skipping ${empty}: ${emptyLine}\nspool sessions: skipped 1 session directory it could not list (each said above); 3 listed\n`,
    );
    expect(spool(["sessions"]).status).toBe(0);
    for (const id of [finished, sqlite]) {
      expect(spool(["inspect", id]).status).toBe(0);
      expect(spool(["inspect", id, "--json"]).status).toBe(0);
    }
    const inspected = spool(["inspect", empty]);
    expect(inspected.status).toBe(1);
    expect(inspected.stderr).toBe(`spool inspect: ${emptyLine}\n`);
    expect(spool(["gc", "--older-than", "0d", "--dry-run"]).status).toBe(0);
    const recalled = spool(["recall", key]);
    expect(recalled.stdout).toBe("the archived text\n");
    expect(spool(["recall", key, "--workspace", join(sessions, finished)]).stdout).toBe("the archived text\n");
    expect(spool(["recall", "0123456789abcdef"]).status).toBe(1);

    const serve = await startServing(["serve", "--port", "0", "--interval", "20"], { cwd });
    for (const id of [finished, sqlite]) {
      const res = await fetch(`${serve.origin}/v1/state/${encodeURIComponent(`session:${id}`)}?token=${serve.token}`);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      expect((await reader.read()).value).toMatch(/^(id|data|event)/m);
      await reader.cancel();
    }
    await new Promise((r) => setTimeout(r, 500)); // a few dozen looks at every session
    serve.child.kill("SIGINT");
    expect(await serve.exited).toBe(0);
    expect(serve.err()).toContain(`spool serve: skipping ${empty}: ${emptyLine}\n`);

    expect(snapshot(cwd)).toEqual(before);
  }, 60_000);
});
