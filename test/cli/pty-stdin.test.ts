// `spool run --pty` with input on its stdin: the command's stdin is its terminal, so the input is not
// handed over (the docs said so; the CLI said nothing, and `cat answers | spool run --pty -- ./setup`
// waited at its prompt). One warning line says so and what to do; no warning where no input was given.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSpool, SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);
const cwd = tempDir("spool-pty-stdin-");
const WARNING =
  /^spool run: warning: under --pty the command's stdin is its terminal, so spool's piped stdin is not handed to it; drop --pty to pipe input to the command, or pipe inside the command \(spool run --pty -- 'printf "y\\n" \| CMD'\)$/m;

/** `spool run ARGS -- true` through sh, its stdin redirected as `stdin` says (`| …` or `< …`). */
function shell(args: string, stdin: string): { status: number | null; stderr: string } {
  const line = stdin.startsWith("|")
    ? `${stdin.slice(1)} | "${process.execPath}" "${SPOOL_BIN}" run -q ${args} -- true`
    : `"${process.execPath}" "${SPOOL_BIN}" run -q ${args} -- true ${stdin}`;
  const r = spawnSync("sh", ["-c", line], { cwd, encoding: "utf8", timeout: 20_000 });
  return { status: r.status, stderr: r.stderr };
}

describe("spool run --pty and its stdin", () => {
  writeFileSync(join(cwd, "answers.txt"), "y\n");
  writeFileSync(join(cwd, "empty.txt"), "");

  it("a pipe or a file with input: one warning line on stderr, and the run goes on", () => {
    for (const stdin of ["| printf 'y\\n'", "< answers.txt"]) {
      const r = shell("--pty", stdin);
      expect(r.status, stdin).toBe(0);
      expect(r.stderr, stdin).toMatch(WARNING);
      expect(r.stderr.match(/warning/g), stdin).toHaveLength(1);
    }
  });

  it("no warning without input (/dev/null, an empty file), with --no-stdin, or without --pty", () => {
    for (const [args, stdin] of [
      ["--pty", "< /dev/null"],
      ["--pty", "< empty.txt"],
      ["--pty --no-stdin", "| printf 'y\\n'"],
      ["", "| printf 'y\\n'"],
    ] as const) {
      const r = shell(args, stdin);
      expect(r.status, `${args} ${stdin}`).toBe(0);
      expect(r.stderr, `${args} ${stdin}`).not.toContain("warning");
    }
  });

  it("no warning on a terminal, nor on the socket Node's spawn hands a child", () => {
    const onTty = spawnSync("script", ["-qfc", `"${process.execPath}" "${SPOOL_BIN}" run -q --pty -- true; echo "rc=$?"`, "/dev/null"], {
      cwd,
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(onTty.stdout).toMatch(/rc=0/);
    expect(onTty.stdout).not.toContain("warning");
    const spawned = runSpool(["run", "-q", "--pty", "--", "true"], { cwd });
    expect(spawned.status).toBe(0);
    expect(spawned.stderr).not.toContain("warning");
  });
});
