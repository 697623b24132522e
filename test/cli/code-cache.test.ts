// The built CLI's own code cache (src/cli/bundle-loader.ts): written after a command really ran, never
// after --help or a usage error, and a damaged one — which V8 would crash on — is ignored and replaced.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

/** The spool cache files under a NODE_COMPILE_CACHE directory (Node adds one folder per version). */
function caches(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => /spool-.*\.v8cache$/.test(f))
    .map((f) => join(dir, f));
}

describe("the CLI's code cache", () => {
  const cwd = tempDir("spool-code-cache-");
  const run = (cache: string, args: string[]) => runSpool(args, { cwd, env: { ...process.env, NODE_COMPILE_CACHE: cache } });

  it("is written once a command has run, and not after --help or a usage error", () => {
    const cache = tempDir("spool-code-cache-dir-");
    expect(run(cache, ["run", "--help"]).status).toBe(0);
    expect(run(cache, ["run", "--max-bytes", "0", "--", "true"]).status).toBe(2);
    expect(caches(cache)).toEqual([]);
    expect(run(cache, ["run", "-q", "--", "true"]).status).toBe(0);
    const [file, ...more] = caches(cache);
    expect(more).toEqual([]);
    expect(file).toMatch(/spool-run-[0-9a-f]+\.cjs\.v8cache$/);
    // Used, not rewritten, by the next run.
    const written = readFileSync(file!);
    expect(run(cache, ["run", "-q", "--", "true"]).status).toBe(0);
    expect(readFileSync(file!).equals(written)).toBe(true);
  });

  it("a damaged cache of the right size is ignored and written again", () => {
    const cache = tempDir("spool-code-cache-dir-");
    expect(run(cache, ["run", "-q", "--", "true"]).status).toBe(0);
    const [file] = caches(cache);
    const bad = Buffer.from(readFileSync(file!));
    for (let i = 64; i < bad.length; i += 97) bad[i]! ^= 0x5a;
    writeFileSync(file!, bad);
    const r = run(cache, ["run", "-q", "--", "echo", "still fine"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("still fine");
    const rewritten = readFileSync(file!);
    expect(rewritten.equals(bad)).toBe(false);
    // …and the new one is good: the next run uses it as it is.
    expect(run(cache, ["run", "-q", "--", "true"]).status).toBe(0);
    expect(readFileSync(file!).equals(rewritten)).toBe(true);
  });
});
