// How the built CLI loads a command. scripts/build-cli.mjs bundles each command into one CommonJS
// file, dist/bin/<name>-<content hash>.cjs, and points main.js's `import("./run.js")` at
// loadBundle("run-<hash>.cjs") instead (this file is bundled into main.js, so import.meta.url is
// main.js's). Run from source (dist/cli), nothing calls it.
//
// The bundle is compiled with vm.Script and a V8 code cache that is taken after the command ran, so it
// holds every function the command called. Node's own compile cache is taken right after compiling:
// it holds top-level code only, and each run compiled the rest again — a third of `spool run -q --
// true`'s CPU time (bundle as ES modules with Node's cache 103 ms, one CommonJS file 91 ms, with this
// cache 79 ms, `node -e 0` 32 ms; medians of 15 on a busy 2-core machine, task-clock).
//
// Node's compile cache on the bundle itself (module.enableCompileCache, a plain require) is the other
// way, and slower: `spool run -q -- true` 68 ms of CPU against 59 ms with this one (75 ms with none;
// medians of 30, interleaved). Node's cache is still on, for what a command requires at run time
// (node-pty, @xterm/headless: a run through the terminal model cost 3.8 ms more CPU without it).
//
// Where the caches live: the user's cache directory, $XDG_CACHE_HOME/spool or ~/.cache/spool, in
// the folder Node makes per Node version, architecture and V8 flags (Node checks and writes its own
// files there too); with NODE_COMPILE_CACHE set, in the directory it names; none with
// NODE_DISABLE_COMPILE_CACHE, without a home, or where the directory above the cache directory is missing. They were in Node's default, the shared tmpdir's
// node-compile-cache: there the first user's 0755 folder left every other user with no cache. Each
// file is named after its bundle (a new build never meets an old cache), and writing one removes all
// but the newest few of the same command: every build used to leave ~0.5 MB per command for good
// (204 files here). V8 checks little more than the source's length and crashes on a damaged cache of
// the right size, so each file carries a digest of its bytes (the first 16 bytes of its SHA-256) and
// one that does not match is ignored and written again. node:crypto is loaded by every command that
// opens a session anyway; a CRC-32 needed node:zlib, 3–4 ms of loading for nothing else.
import { Buffer } from "node:buffer";
import { readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import module, { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { writeFileAtomic } from "../store/index.js";

const MAGIC = 0x53504332; // "SPC2"
const DIGEST_BYTES = 16;
const HEADER_BYTES = 4 + DIGEST_BYTES;

type Hash = (algorithm: string, data: Uint8Array, encoding: "hex") => string;

/** The digest of a cache's data; undefined where no one-shot hash exists (then no cache is read or written). */
function digest(data: Uint8Array): Buffer | undefined {
  const hash = (process.getBuiltinModule?.("node:crypto") as { hash?: Hash } | undefined)?.hash;
  if (hash === undefined) return undefined;
  try {
    return Buffer.from(hash("sha256", data, "hex").slice(0, DIGEST_BYTES * 2), "hex");
  } catch {
    return undefined;
  }
}

/** Caches to write once the command has run (see saveCodeCaches). */
const unsaved: (() => void)[] = [];

/** Caches of one command kept in a folder: the newest few builds (two installed versions take turns). */
const KEEP_PER_COMMAND = 3;

/**
 * Turns on Node's compile cache in the user's cache directory, unless NODE_COMPILE_CACHE turned it on
 * already (then it stays where that says) or NODE_DISABLE_COMPILE_CACHE is set (Node then refuses).
 */
export function enableCodeCaches(): void {
  const m = module as { enableCompileCache?: (dir: string) => unknown; getCompileCacheDir?: () => string | undefined };
  if (m.getCompileCacheDir?.() !== undefined) return;
  const xdg = process.env.XDG_CACHE_HOME;
  let base: string;
  try {
    base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), ".cache");
  } catch {
    return;
  }
  // Node makes the whole path: under a home that does not exist (HOME=/nonexistent, a service user's)
  // it made that home, which then stood in for a missing path (a test's symlink to /nonexistent).
  if (statSync(dirname(base), { throwIfNoEntry: false })?.isDirectory() !== true) return;
  m.enableCompileCache?.(join(base, "spool"));
}

function cachePathFor(bundle: string): string | undefined {
  const dir = (module as { getCompileCacheDir?: () => string | undefined }).getCompileCacheDir?.();
  return dir === undefined ? undefined : join(dir, `spool-${bundle}.v8cache`);
}

/** All but the newest KEEP_PER_COMMAND caches of `bundle`'s command (`run-<hash>.cjs` → `spool-run-*`). */
function pruneOthers(path: string, bundle: string): void {
  const dir = dirname(path);
  const prefix = `spool-${bundle.replace(/-[0-9a-f]+\.cjs$/, "")}-`;
  const mine = readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && n.endsWith(".v8cache") && /^[0-9a-f]+\.cjs/.test(n.slice(prefix.length)))
    .map((n) => {
      try {
        return { path: join(dir, n), at: statSync(join(dir, n)).mtimeMs };
      } catch {
        return undefined;
      }
    })
    .filter((f) => f !== undefined)
    .sort((a, b) => b.at - a.at);
  for (const f of mine.slice(KEEP_PER_COMMAND)) if (f.path !== path) unlinkSync(f.path);
}

function readCache(path: string): Buffer | undefined {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return undefined;
  }
  if (file.length <= HEADER_BYTES || file.readUInt32LE(0) !== MAGIC) return undefined;
  const data = file.subarray(HEADER_BYTES);
  const sum = digest(data);
  return sum !== undefined && sum.equals(file.subarray(4, HEADER_BYTES)) ? data : undefined;
}

function writeCache(path: string, bundle: string, data: Buffer): void {
  const sum = digest(data);
  if (sum === undefined) return;
  const header = Buffer.alloc(4);
  header.writeUInt32LE(MAGIC, 0);
  try {
    writeFileAtomic(path, Buffer.concat([header, sum, data]));
    pruneOthers(path, bundle);
  } catch {
    // A cache that cannot be written (or pruned) costs the next run its speed, nothing else.
  }
}

/** Loads dist/bin/<bundle> (a CommonJS file next to main.js) and returns its exports. */
export function loadBundle(bundle: string): Record<string, unknown> {
  const filename = fileURLToPath(new URL(bundle, import.meta.url));
  const source = readFileSync(filename, "utf8");
  const cachePath = cachePathFor(bundle);
  const cachedData = cachePath === undefined ? undefined : readCache(cachePath);
  // No importModuleDynamically: the build leaves no import() in a bundle.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    ...(cachedData !== undefined ? { cachedData } : {}),
  });
  if (cachePath !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    unsaved.push(() => writeCache(cachePath, bundle, script.createCachedData()));
  }
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const mod = { exports: {} as Record<string, unknown> };
  wrapper.call(mod.exports, mod.exports, createRequire(filename), mod, filename, dirname(filename));
  return mod.exports;
}

/**
 * Writes the code cache of every bundle loaded without a usable one. Called once a command has run
 * past its argument checks: the cache holds what was compiled by then, and is kept until the bundle
 * changes, so a `--help` or a usage error must not be the run that writes it.
 */
export function saveCodeCaches(): void {
  for (const save of unsaved.splice(0)) save();
}
