// `spool inspect` names its two sizes for what they are: a run whose one line of 101 bytes was cut at
// a 40-byte cap said "75 B written" beside a spill of 101 B, read as output gone missing. The call's
// figure is the cleaned text (cut lines counted as cut); the spill's is every byte the command wrote.
import { afterAll, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

it("a cut line: the call's size is the cleaned text's, the spill's the raw bytes, and neither reads as 'written'", () => {
  const cwd = tempDir("spool-inspect-sizes-");
  const run = runSpool(["run", "--root", cwd, "-q", "--max-bytes", "40", "--", "node -e \"process.stdout.write('x'.repeat(100)+'\\n')\""], {
    cwd,
    input: "",
  });
  expect(run.status).toBe(0);
  const session = /^Session: \S+\/(\S+)$/m.exec(run.stdout)![1]!;
  const inspect = runSpool(["inspect", "--root", cwd, session], { cwd });
  expect(inspect.status).toBe(0);
  expect(inspect.stdout).toContain(", 1 line / 75 B of cleaned text (1 over-long line cut), truncated by bytes\n");
  expect(inspect.stdout).toMatch(/\n {2}spill: \S+\/spill\/call-1\.log \(101 B raw\)\n/);
  expect(inspect.stdout).not.toContain("written");
});
