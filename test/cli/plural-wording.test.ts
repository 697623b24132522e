// Counts agree with their noun where a one-line output is described: the result's footer said
// "Showing all 1 lines" and `spool inspect` "1 lines / 195.3 KB written"; a one-character output
// "1 chars shown".
import { afterAll, afterEach, expect, it } from "vitest";
import { killStarted, runSpool, startSpool, stopStarted } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

afterAll(removeTempDirs);
afterEach(killStarted);

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

it("inspect counts a one-character output as '1 char shown', and the same output recovered from a running call as '1 char'", async () => {
  const cwd = tempDir("spool-plural-char-");
  expect(runSpool(["run", "--root", cwd, "-q", "--session", "done", "--", "printf x"], { cwd, input: "" }).status).toBe(0);
  const done = runSpool(["inspect", "--root", cwd, "done"], { cwd }).stdout;
  expect(done).toContain("  call call-1 (bash): ok, 1 char shown, 1 line / 1 B of cleaned text\n");
  const running = startSpool(["run", "--root", cwd, "-q", "--session", "running", "--", "printf x; sleep 30"], { cwd });
  const text = await until(() => {
    const out = runSpool(["inspect", "--root", cwd, "running"], { cwd }).stdout;
    return out.includes("| x") && out;
  }, "the running call's output to be flushed");
  expect(text).toContain("  call call-1 (bash): UNSETTLED, 1 char shown");
  expect(text).toContain("    recovered output (last durable flush, 1 char; last lines):\n    | x\n");
  expect(text).not.toMatch(/\b1 chars\b/);
  await stopStarted(); // Ctrl-C: spool ends the command it started
  await running.exited;
}, 30_000);
