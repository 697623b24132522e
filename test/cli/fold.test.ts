// `spool fold` through the built binary: a stream of wire batches folds to its value; whatever is
// wrong with the input is one line naming it, exit 2.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const cwd = tempDir("spool-cli-fold-");
afterAll(removeTempDirs);
const spool = (args: string[], input?: string) => runSpool(args, { cwd, ...(input !== undefined ? { input } : {}) });

describe("spool fold", () => {
  it("folds a stream with interning and short forms to its value", () => {
    const stream = [
      JSON.stringify([["r", { text: "a", n: 1 }]]),
      JSON.stringify([
        ["a", ["text"], "b"],
        ["#", 0, ["n"]],
        ["s", 0, 2],
      ]),
      JSON.stringify([
        ["s", 0, 3],
        ["a", ["text"], "c"],
      ]),
    ].join("\n");
    const r = spool(["fold"], `${stream}\n`);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "abc", n: 3 });
    // A byte order mark, as some editors write one, is read past.
    expect(JSON.parse(spool(["fold"], `\ufeff${stream}\n`).stdout)).toEqual({ text: "abc", n: 3 });
  });

  it("bad input is one line naming it, exit 2: a bad line, a directory, a value nested too deeply to print", () => {
    const badLine = spool(["fold"], `${JSON.stringify([["r", {}]])}\nnot json\n`);
    expect(badLine.status).toBe(2);
    expect(badLine.stderr).toMatch(/^spool fold: stdin:2: not JSON/);
    const dir = join(cwd, "a-directory");
    mkdirSync(dir, { recursive: true });
    const directory = spool(["fold", dir]);
    expect(directory.status).toBe(2);
    expect(directory.stderr).toContain(`${dir} is a directory; pass a path to a JSON-lines file of wire batches`);
    const depth = 10_000;
    const deep = join(cwd, "deep.jsonl");
    writeFileSync(deep, `[["r",${"[".repeat(depth)}${"]".repeat(depth)}]]\n`);
    const tooDeep = spool(["fold", deep]);
    expect(tooDeep.status).toBe(2);
    expect(tooDeep.stderr).toMatch(/^spool fold: \S+deep\.jsonl: the folded value is nested too deeply to print/);
    expect(tooDeep.stderr).not.toMatch(/\n\s+at /);
  });
});
