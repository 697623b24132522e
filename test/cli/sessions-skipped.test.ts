// `spool sessions` says how many session directories it left out of the listing, after the table:
// each one's line comes first, and in a long listing (a shared root) those lines scroll away, leaving a
// table that looked complete. With none listed it says "No readable sessions", not "No sessions".
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

function rootWithBadSessions(): string {
  const root = tempDir("spool-skipped-");
  mkdirSync(join(root, "sessions", "20261201-000000-aaaaa"), { recursive: true });
  writeFileSync(join(root, "sessions", "20261201-000000-aaaaa", "session.jsonl"), "not a log\n");
  mkdirSync(join(root, "elsewhere"));
  symlinkSync(join(root, "elsewhere"), join(root, "sessions", "20261201-000000-ccccc"));
  return root;
}

it("after the table: how many directories were skipped and how many listed", () => {
  const root = rootWithBadSessions();
  expect(runSpool(["run", "--root", root, "-q", "--", "true"], { cwd: root, input: "" }).status).toBe(0);
  const r = runSpool(["sessions", "--root", root], { cwd: root });
  expect(r.status).toBe(0);
  expect(r.stdout.split("\n")).toHaveLength(3);
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(3);
  expect(lines[2]).toBe("spool sessions: skipped 2 session directories it could not list (each said above); 1 listed");
  const json = runSpool(["sessions", "--root", root, "--json"], { cwd: root });
  expect(JSON.parse(json.stdout)).toHaveLength(1);
  expect(json.stderr).toMatch(/\nspool sessions: skipped 2 session directories it could not list \(each said above\); 1 listed\n$/);
});

it("none readable: 'No readable sessions', and the count", () => {
  const root = rootWithBadSessions();
  const r = runSpool(["sessions", "--root", root], { cwd: root });
  expect(r.stdout).toBe(`No readable sessions under ${join(root, "sessions")}. 'spool run -- COMMAND' records one.\n`);
  expect(r.stderr).toMatch(/\nspool sessions: skipped 2 session directories it could not list \(each said above\); 0 listed\n$/);
});
