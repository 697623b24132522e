// `--serve` takes its port after "=" only (a bare --serve picks a free one). `spool run --serve 8080
// -- cmd` read 8080 as the command: it ran "8080" (exit 127) with a viewer on a random port, serving
// until Ctrl-C. A number after a bare --serve is now refused with the two ways to say what was meant.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

const sessions = (root: string): string[] => (existsSync(join(root, "sessions")) ? readdirSync(join(root, "sessions")) : []);

it("spool run --serve 8080 -- cmd is refused in one line, exit 2, nothing run or recorded", () => {
  const cwd = tempDir("spool-serve-value-");
  const r = runSpool(["run", "--root", join(cwd, "r"), "--exit", "--serve", "8080", "--", "touch ran"], { cwd, input: "" });
  expect(r.stderr.split("\n")[0]).toBe(
    'spool run: --serve takes its port after "=": write --serve=8080 (a bare --serve picks any free port); to run a command named "8080", write --serve -- 8080',
  );
  expect(r.status).toBe(2);
  expect(existsSync(join(cwd, "ran"))).toBe(false);
  expect(sessions(join(cwd, "r"))).toEqual([]);
});

it("spool mcp --serve 8080 is refused the same way", () => {
  const cwd = tempDir("spool-serve-value-");
  const r = runSpool(["mcp", "--root", join(cwd, "r"), "--serve", "8080"], { cwd, input: "" });
  expect(r.stderr.split("\n")[0]).toBe('spool mcp: --serve takes its port after "=": write --serve=8080 (a bare --serve picks any free port)');
  expect(r.status).toBe(2);
  expect(sessions(join(cwd, "r"))).toEqual([]);
});

it("a number after the command's own --serve, or after --serve --, is the command's", () => {
  const cwd = tempDir("spool-serve-value-");
  const own = runSpool(["run", "--root", join(cwd, "r"), "-q", "echo", "--serve", "8080"], { cwd, input: "" });
  expect(own.status).toBe(0);
  expect(own.stdout).toMatch(/^--serve 8080\n/);
  const after = runSpool(["run", "--root", join(cwd, "r"), "-q", "--serve", "--exit", "--", "echo", "8080"], { cwd, input: "" });
  expect(after.status).toBe(0);
  expect(after.stdout).toMatch(/^8080\n/);
});
