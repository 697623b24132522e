import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { runSpool, SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
afterAll(removeTempDirs);

describe("spool CLI basics (built binary)", () => {
  const cwd = tempDir("spool-cli-basics-");
  it("--version prints the package version", () => {
    const r = runSpool(["--version"], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });
  it("--help lists usage and options", () => {
    const r = runSpool(["--help"], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage: spool <command>");
    expect(r.stdout).toContain("--version");
  });
  it("an unknown command exits 2 with a hint", () => {
    const r = runSpool(["frobnicate"], { cwd });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
    expect(r.stderr).toContain("spool --help");
  });
});

describe("spool CLI in pipes and with bad input", () => {
  const cwd = tempDir("spool-cli-edges-");

  it("a reader that closes stdout early (| head -1) ends the command quietly: no EPIPE, no stack trace", () => {
    for (let i = 0; i < 3; i++) expect(runSpool(["run", "-q", "--", `seq 1 ${i + 1}`], { cwd }).status).toBe(0);
    for (const cmd of ["sessions", "sessions --json", "gc --older-than 0s --dry-run", "recall --help", "--help", "run -q -- seq 1 100000"]) {
      // `true` exits without reading, so every write spool makes meets a closed pipe.
      const r = spawnSync("sh", ["-c", `{ node ${SPOOL_BIN} ${cmd}; echo "status=$?" >&2; } | true`], { cwd, encoding: "utf8" });
      expect(r.stderr, cmd).toBe("status=0\n");
    }
  });

  it("messages carry one 'spool <command>:' prefix, never a doubled one", () => {
    const r = runSpool(["recall", "0123456789abcdef", "--workspace", cwd], { cwd });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^spool recall: key "0123456789abcdef" not found/);
    expect(r.stderr).not.toMatch(/recall: recall:/);
  });

  it("every command answers --help with its usage (exit 0) and an unknown flag with exit 2 and a pointer to it", () => {
    for (const cmd of ["run", "serve", "sessions", "inspect", "gc", "compact", "recall", "fold"]) {
      const help = runSpool([cmd, "--help"], { cwd });
      expect(help.status, cmd).toBe(0);
      expect(help.stdout, cmd).toMatch(new RegExp(`^Usage: spool ${cmd} `));
      const bad = runSpool([cmd, "--no-such-flag"], { cwd });
      expect(bad.status, cmd).toBe(2);
      expect(bad.stderr, cmd).toBe(`spool ${cmd}: Unknown option --no-such-flag\nRun 'spool ${cmd} --help' for usage.\n`);
    }
  });

  it("compact without --workspace records a session that sessions lists and gc removes", () => {
    const dir = tempDir("spool-cli-compact-gc-");
    const big = "x".repeat(80_000);
    const convo = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: { command: "cat big" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: big }] },
    ];
    const r = runSpool(["compact", "-"], { cwd: dir, input: JSON.stringify(convo) });
    expect(r.status).toBe(0);
    const listed = JSON.parse(runSpool(["sessions", "--json"], { cwd: dir }).stdout) as { id: string; command: string; status: string }[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ command: "spool compact (stdin)", status: "succeeded" });
    const gc = runSpool(["gc", "--older-than", "0s"], { cwd: dir });
    expect(gc.stdout).toContain(`removed ${listed[0]!.id}`);
    expect(JSON.parse(runSpool(["sessions", "--json"], { cwd: dir }).stdout)).toEqual([]);
  });
});
