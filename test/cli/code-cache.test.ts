// The built CLI's own code cache (src/cli/bundle-loader.ts): written after a command really ran, never
// after --help or a usage error, and a damaged one — which V8 would crash on — is ignored and replaced;
// it lives in the user's cache directory (or NODE_COMPILE_CACHE's), never in the tmpdir, and old
// builds' caches of a command are removed as new ones are written.
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
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

  /** The environment of a user who set nothing about caches, with its cache and tmp directories given. */
  const plain = (xdg: string, tmp: string, more: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: xdg, TMPDIR: tmp, ...more };
    for (const k of ["NODE_COMPILE_CACHE", "NODE_DISABLE_COMPILE_CACHE"]) if (!(k in more)) delete env[k];
    return env;
  };
  /** Node's folder for this Node, architecture and V8 flags, under `dir`. */
  const nodeFolder = (dir: string) => new RegExp(`^${dir}/v${process.versions.node.replace(/\./g, "\\.")}-${process.arch}-[0-9a-f]+-[0-9]+/`);

  it("by default lives in the user's cache directory ($XDG_CACHE_HOME/spool), in Node's folder for this Node and its flags, and nothing goes to the tmpdir", () => {
    const xdg = tempDir("spool-code-cache-xdg-");
    const tmp = tempDir("spool-code-cache-tmp-");
    const r = runSpool(["run", "-q", "--", "true"], { cwd, env: plain(xdg, tmp) });
    expect(r.status).toBe(0);
    const [file, ...more] = caches(xdg);
    expect(more).toEqual([]);
    expect(file).toMatch(nodeFolder(join(xdg, "spool")));
    expect(file).toMatch(/\/spool-run-[0-9a-f]+\.cjs\.v8cache$/);
    expect(existsSync(join(tmp, "node-compile-cache"))).toBe(false);
    // NODE_DISABLE_COMPILE_CACHE: no cache at all.
    const off = tempDir("spool-code-cache-xdg-");
    expect(runSpool(["run", "-q", "--", "true"], { cwd, env: plain(off, tmp, { NODE_DISABLE_COMPILE_CACHE: "1" }) }).status).toBe(0);
    expect(caches(off)).toEqual([]);
  });

  it("makes no home: with the cache directory's parent missing (HOME=/nonexistent, a service user's) nothing is written", () => {
    const tmp = tempDir("spool-code-cache-tmp-");
    const missing = join(tempDir("spool-code-cache-home-"), "nonexistent");
    const env = plain("", tmp, { HOME: missing });
    delete env["XDG_CACHE_HOME"];
    expect(runSpool(["run", "-q", "--", "true"], { cwd, env }).status).toBe(0);
    expect(existsSync(missing)).toBe(false);
    const xdgUnder = join(missing, "cache");
    expect(runSpool(["run", "-q", "--", "true"], { cwd, env: plain(xdgUnder, tmp) }).status).toBe(0);
    expect(existsSync(missing)).toBe(false);
  });

  it("writing a command's cache removes all but the newest three of that command (older builds), and no other command's", () => {
    const xdg = tempDir("spool-code-cache-xdg-");
    const tmp = tempDir("spool-code-cache-tmp-");
    expect(runSpool(["run", "-q", "--", "true"], { cwd, env: plain(xdg, tmp) }).status).toBe(0);
    const [first] = caches(xdg);
    const dir = dirname(first!);
    // Five older builds of run, one of sessions: a day old and older.
    const old = ["0000000001", "0000000002", "0000000003", "0000000004", "0000000005"].map((h, i) => {
      const f = join(dir, `spool-run-${h}.cjs.v8cache`);
      writeFileSync(f, "old");
      const t = new Date(Date.now() - (i + 1) * 86_400_000);
      utimesSync(f, t, t);
      return f;
    });
    const other = join(dir, "spool-sessions-0000000009.cjs.v8cache");
    writeFileSync(other, "old");
    utimesSync(other, new Date(0), new Date(0));
    // This build's cache written again (as by its first run).
    rmSync(first!);
    expect(runSpool(["run", "-q", "--", "true"], { cwd, env: plain(xdg, tmp) }).status).toBe(0);
    const left = readdirSync(dir).filter((n) => n.startsWith("spool-run-"));
    expect(left.sort()).toEqual([basename(first!), "spool-run-0000000001.cjs.v8cache", "spool-run-0000000002.cjs.v8cache"].sort());
    for (const f of old.slice(2)) expect(existsSync(f)).toBe(false);
    expect(existsSync(other)).toBe(true);
  });
});
