// Counts agree with their noun where a one-line output is described: the result's footer said
// "Showing all 1 lines" and `spool inspect` "1 lines / 195.3 KB written".
import { afterAll, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

it("a one-line output whose line was cut: 'Showing all 1 line', and inspect's '1 line / …'", () => {
  const cwd = tempDir("spool-plural-");
  const run = runSpool(["run", "--root", cwd, "-q", "--", 'printf "%0200000d\\n" 0'], { cwd, input: "" });
  expect(run.status).toBe(0);
  expect(run.stdout).toContain("\n[Showing all 1 line; 1 over-long line was cut. Full output: ");
  const session = /^Session: \S+\/(\S+)$/m.exec(run.stdout)![1]!;
  const inspect = runSpool(["inspect", "--root", cwd, session], { cwd });
  expect(inspect.stdout).toMatch(/, 1 line \/ [\d.]+ KB of cleaned text \(1 over-long line cut\)/);
  expect(run.stdout + inspect.stdout).not.toMatch(/\b1 lines\b/);
});
