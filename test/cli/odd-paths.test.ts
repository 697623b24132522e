// Odd paths through the built binary, found by a user test: an empty or non-directory --root (and the
// other directory options), something other than a file in place of a session's log, a file in place
// of a session directory, an empty SESSION. Each is one line saying what is wrong, with the CLI's exit
// code, and nothing is written.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

/** The binary with a deadline: before the fix, `serve` served and a FIFO log blocked `sessions` for ever. */
function spool(args: readonly string[], cwd: string) {
  const r = spawnSync(process.execPath, [SPOOL_BIN, ...args], { cwd, encoding: "utf8", input: "", timeout: 20_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Everything under `dir`, as relative paths: what a command must leave as it found it. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

/** Every command that takes --root, with what else it needs to get as far as the root. */
const ROOT_COMMANDS: readonly (readonly string[])[] = [
  ["run", "--", "touch", "ran"],
  ["mcp"],
  ["serve", "--port", "0"],
  ["sessions"],
  ["inspect", "some-id"],
  ["gc", "--older-than", "0d"],
  ["compact", "-"],
  ["recall", "0123456789abcdef"],
  ["repair", "some-id"],
];
const withRoot = (args: readonly string[], root: string): string[] => [args[0]!, "--root", root, ...args.slice(1)];

describe("--root and the other directory options", () => {
  it("an empty --root is refused by every command that takes it (run wrote to ./sessions): exit 2, nothing written", () => {
    const dir = tempDir("spool-odd-empty-");
    for (const args of ROOT_COMMANDS) {
      const r = spool(withRoot(args, ""), dir);
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toBe(
        `spool ${args[0]}: --root is empty; pass a directory, or leave --root out for its default\nRun 'spool ${args[0]} --help' for usage.\n`,
      );
      expect(r.stdout).toBe("");
    }
    expect(tree(dir)).toEqual([]);
  }, 60_000);

  it("an empty --workspace or --cwd is refused the same way (mcp ran in the current directory and recorded a session there)", () => {
    const dir = tempDir("spool-odd-empty-dirs-");
    for (const args of [
      ["compact", "--workspace", "", "-"],
      ["recall", "--workspace", "", "0123456789abcdef"],
      ["mcp", "--cwd", ""],
    ]) {
      const r = spool(args, dir);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.split("\n")[0]).toBe(`spool ${args[0]}: ${args[1]} is empty; pass a directory, or leave ${args[1]} out for its default`);
    }
    expect(tree(dir)).toEqual([]);
  }, 30_000);

  it("a --root that is a file, lies under a file, or holds a file for sessions/ is refused alike by every command (sessions said 'No sessions')", () => {
    const dir = tempDir("spool-odd-file-root-");
    writeFileSync(join(dir, "plain"), "not a directory\n");
    mkdirSync(join(dir, "blocked"));
    writeFileSync(join(dir, "blocked", "sessions"), "");
    const before = tree(dir);
    const cases: [string, string][] = [
      ["plain", `--root: "plain" is not a directory; pass a directory`],
      ["plain/below", `--root: "plain/below" is under ${JSON.stringify(join(dir, "plain"))}, which is not a directory; pass a directory`],
      [
        "blocked",
        `--root: ${JSON.stringify(join(dir, "blocked", "sessions"))} is not a directory, and --root needs it to be one; move it aside, or pass another --root`,
      ],
    ];
    for (const [root, message] of cases) {
      for (const args of ROOT_COMMANDS) {
        const r = spool(withRoot(args, root), dir);
        expect(r.status, `${args[0]} --root ${root}: ${r.stderr}`).toBe(2);
        expect(r.stderr.split("\n")[0]).toBe(`spool ${args[0]}: ${message}`);
        expect(r.stdout).toBe("");
      }
    }
    expect(tree(dir)).toEqual(before);
  }, 120_000);

  it("a --workspace or --cwd that is a file is refused with the same line", () => {
    const dir = tempDir("spool-odd-file-dirs-");
    writeFileSync(join(dir, "plain"), "");
    for (const args of [
      ["compact", "--workspace", "plain", "-"],
      ["recall", "--workspace", "plain", "0123456789abcdef"],
      ["mcp", "--cwd", "plain"],
    ]) {
      const r = spool(args, dir);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.split("\n")[0]).toBe(`spool ${args[0]}: ${args[1]}: "plain" is not a directory; pass a directory`);
    }
    expect(tree(dir)).toEqual(["plain"]);
  }, 30_000);
});

describe("a session directory holding the wrong kind of thing", () => {
  const ID = "20260101-000000-odd01";
  const message = (path: string, kind: string, what = "log") =>
    `${path}:0: the ${what} is ${kind}, not a regular file. This is damage a crash cannot cause, so the session was not opened; restore the file from a backup or move it aside (spool never rewrites a corrupt log).`;

  it("a directory named session.jsonl is named with its path by every reader and by run --session (a bare EISDIR), and nothing is written", () => {
    const dir = tempDir("spool-odd-log-dir-");
    const log = join(dir, ".spool/sessions", ID, "session.jsonl");
    mkdirSync(log, { recursive: true });
    const before = tree(dir);
    const line = message(log, "a directory");
    for (const args of [
      ["inspect", ID],
      ["repair", ID],
      ["run", "--session", ID, "--", "touch", "ran"],
    ]) {
      const r = spool(args, dir);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toBe(`spool ${args[0]}: ${line}\n`);
    }
    for (const args of [["sessions"], ["gc", "--older-than", "0d"]]) {
      const r = spool(args, dir);
      expect(r.status).toBe(0);
      const count = args[0] === "sessions" ? "spool sessions: skipped 1 session directory it could not list (each said above); 0 listed\n" : "";
      expect(r.stderr).toBe(`spool ${args[0]}: skipping ${ID}: ${line}\n${count}`);
    }
    expect(tree(dir)).toEqual(before);
  }, 60_000);

  it("a FIFO named session.jsonl is refused at once (sessions and inspect blocked for ever opening it)", () => {
    const dir = tempDir("spool-odd-log-fifo-");
    mkdirSync(join(dir, ".spool/sessions", ID), { recursive: true });
    const log = join(dir, ".spool/sessions", ID, "session.jsonl");
    expect(spawnSync("mkfifo", [log]).status).toBe(0);
    const listed = spool(["sessions"], dir);
    expect(listed.signal).toBeNull();
    expect(listed.stderr).toBe(
      `spool sessions: skipping ${ID}: ${message(log, "a FIFO (named pipe)")}\nspool sessions: skipped 1 session directory it could not list (each said above); 0 listed\n`,
    );
    const inspected = spool(["inspect", ID], dir);
    expect(inspected.status).toBe(1);
    expect(inspected.stderr).toBe(`spool inspect: ${message(log, "a FIFO (named pipe)")}\n`);
  }, 60_000);

  it("a directory named session.sqlite is named as such (it read 'session not found')", () => {
    const dir = tempDir("spool-odd-db-dir-");
    const db = join(dir, ".spool/sessions", ID, "session.sqlite");
    mkdirSync(db, { recursive: true });
    const r = spool(["inspect", ID], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`spool inspect: ${message(db, "a directory", "database")}\n`);
  }, 30_000);

  it("a file in place of a session directory: run --session says so (a bare ENOTDIR from scandir)", () => {
    const dir = tempDir("spool-odd-session-file-");
    mkdirSync(join(dir, ".spool/sessions"), { recursive: true });
    const path = join(dir, ".spool/sessions", ID);
    writeFileSync(path, "");
    const r = spool(["run", "--session", ID, "--", "touch", "ran"], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`spool run: cannot create ${path}: ${path} is not a directory. Choose a writable directory (e.g. --root DIR).\n`);
    expect(existsSync(join(dir, "ran"))).toBe(false);
  }, 30_000);

  it("an empty SESSION is refused by inspect and repair: it picked the only session there was", () => {
    const dir = tempDir("spool-odd-empty-session-");
    expect(spool(["run", "-q", "--", "true"], dir).status).toBe(0);
    for (const command of ["inspect", "repair"]) {
      const r = spool([command, ""], dir);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`spool ${command}: SESSION is empty; give a session id (or a unique prefix of one) from \`spool sessions\`\n`);
      expect(r.stdout).toBe("");
    }
  }, 30_000);

  it("an empty FILE is refused by compact and fold, named as empty (the message showed a blank name)", () => {
    const dir = tempDir("spool-odd-empty-file-");
    for (const [command, rest] of [
      ["compact", "pass a path to a transcript, or - for stdin"],
      ["fold", "pass a path to a JSON-lines file of wire batches, or - (or nothing) for stdin"],
    ]) {
      const r = spool([command!, ""], dir);
      expect(r.status).toBe(2);
      expect(r.stderr.split("\n")[0]).toBe(`spool ${command}: FILE is empty; ${rest}`);
    }
    expect(readdirSync(dir)).toEqual([]);
  }, 30_000);
});
