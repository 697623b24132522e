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
// The cache lives in Node's compile cache directory (one per Node version, architecture and V8 flags;
// none when NODE_DISABLE_COMPILE_CACHE is set or Node is older than 22.8) under the bundle's own name,
// so a new build never meets an old cache. V8 checks little more than the source's length and crashes
// on a damaged cache of the right size, so each file carries a digest of its bytes (the first 16 bytes
// of its SHA-256) and one that does not match is ignored and written again. node:crypto is loaded by
// every command that opens a session anyway; a CRC-32 needed node:zlib, 3–4 ms of loading for nothing else.
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import module, { createRequire } from "node:module";
import { dirname, join } from "node:path";
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

function cachePathFor(bundle: string): string | undefined {
  const dir = (module as { getCompileCacheDir?: () => string | undefined }).getCompileCacheDir?.();
  return dir === undefined ? undefined : join(dir, `spool-${bundle}.v8cache`);
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

function writeCache(path: string, data: Buffer): void {
  const sum = digest(data);
  if (sum === undefined) return;
  const header = Buffer.alloc(4);
  header.writeUInt32LE(MAGIC, 0);
  try {
    writeFileAtomic(path, Buffer.concat([header, sum, data]));
  } catch {
    // A cache that cannot be written costs the next run its speed, nothing else.
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
    unsaved.push(() => writeCache(cachePath, script.createCachedData()));
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
