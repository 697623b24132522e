// `spool recall` through the built binary on a text that is one 3 MB line: without paging options it
// prints the original byte for byte (the way to export it), a grep match prints a window around the
// match instead of the line, and pages are bounded by --max-chars with --column reading on in the line.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_RECALL_MAX_CHARS, DiskArchive } from "../../src/context/index.js";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const cwd = tempDir("spool-cli-recall-");
afterAll(removeTempDirs);
const ws = join(cwd, "ws");
const line = `{"log":[${Array.from({ length: 180_000 }, (_, i) => `"event ${i} ok"`).join(",")},"event FAILED here"]}`;
const key = new DiskArchive({ dir: join(ws, "archive") }).put(line);
const spool = (...args: string[]) => runSpool(["recall", key, "--workspace", ws, ...args], { cwd });

describe("spool recall on a one-line 3 MB text (built binary)", () => {
  it("without paging options prints the whole text byte for byte", () => {
    expect(line.length).toBeGreaterThan(3_000_000);
    const r = spool();
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(line);
  });

  it("--grep prints a window around the match with the calls for the rest of the line, not the line", () => {
    const r = spool("--grep", "FAILED");
    expect(r.status).toBe(0);
    expect(r.stdout.length).toBeLessThan(2_000);
    const at = line.indexOf("FAILED");
    expect(r.stdout).toContain(`1: [line of ${line.length} chars, showing chars ${at + 1 - 200}-${line.length}`);
    expect(r.stdout).toContain(`whole line: recall <<ccr:${key}>> offset=1 limit=1`);
    expect(r.stdout.endsWith(line.slice(at - 200))).toBe(true);
  });

  it("a page is at most --max-chars (default 100,000) and --column reads on where it stopped", () => {
    const first = spool("--offset", "1");
    expect(first.stdout.length).toBeLessThanOrEqual(DEFAULT_RECALL_MAX_CHARS);
    const small = spool("--offset", "1", "--max-chars", "20000");
    expect(small.stdout.length).toBeLessThanOrEqual(20_000);
    const column = Number(/Next: recall <<ccr:[0-9a-f]{16}>> offset=1 column=(\d+)\./.exec(small.stdout)![1]);
    const next = spool("--offset", "1", "--column", String(column), "--max-chars", "20000");
    const body = (s: string): string => s.slice(s.indexOf("\n") + 1);
    expect(body(small.stdout) + body(next.stdout)).toBe(line.slice(0, column - 1 + body(next.stdout).length));
  });

  it("a --max-chars below the minimum or a bad --column is a usage error", () => {
    for (const args of [
      ["--max-chars", "100"],
      ["--column", "0"],
    ]) {
      const r = spool(...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^spool recall: --(max-chars|column) must be a whole number/);
    }
  });
});
