// Bundles the CLI into dist/bin/: main.js (the command table, no layer code) and one bundle per
// command (run.js, sessions.js, …), each built on its own so it holds exactly what that command uses.
// One build with code splitting put every file a command could reach through a layer's index.ts into
// its chunks, used or not (esbuild splits by reachability, not by what tree-shaking keeps): `spool
// run` loaded 505 KB in 17 files, re2js and the conversation adapters included, for the MCP server's
// sake. A command's own dynamic imports (the viewer, pg, log-update) stay separate chunks.
// Chunks two commands share byte for byte are written once (their names carry a content hash).
// dist/bin sits two levels below the package root, like dist/cli, so `../../package.json` and
// `../../web/dist` resolve the same from either.
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "src/cli");
const outdir = join(root, "dist/bin");
const table = join(cli, "commands.ts");

// The commands main.js loads: `import("./run.js")` in commands.ts is dist/bin/run.js.
const commandFiles = [...(await readFile(table, "utf8")).matchAll(/import\("\.\/([a-z-]+)\.js"\)/g)].map((m) => m[1]);

/** main.js keeps `import("./run.js")` as written: each command is its own bundle beside it. */
const commandsExternal = {
  name: "commands-external",
  setup(b) {
    b.onResolve({ filter: /^\.\/[a-z-]+\.js$/ }, (args) => (args.importer === table ? { path: args.path, external: true } : undefined));
  },
};

/**
 * spool's own modules have no import-time side effects (main.ts aside), so a file none of whose
 * exports a command uses is left out with everything it imports.
 */
const sideEffectFree = {
  name: "side-effect-free",
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.pluginData === "side-effect-free") return undefined;
      const r = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: "side-effect-free" });
      if (r.errors.length > 0 || !r.path.startsWith(join(root, "src") + "/") || r.path === join(cli, "main.ts")) return r;
      return { ...r, sideEffects: false };
    });
  },
};

const common = {
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  packages: "bundle",
  minifySyntax: true,
  minifyWhitespace: true,
  entryNames: "[name]",
  chunkNames: "[name]-[hash]",
  write: false,
  // Bundled CommonJS dependencies call require(); ESM has none of its own.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __spoolRequire } from 'node:module'; const require = __spoolRequire(import.meta.url);" },
  logLevel: "warning",
};

const results = await Promise.all([
  build({ ...common, entryPoints: [join(cli, "main.ts")], plugins: [commandsExternal, sideEffectFree] }),
  ...commandFiles.map((name) => build({ ...common, entryPoints: [join(cli, `${name}.ts`)], plugins: [sideEffectFree] })),
]);
const files = new Map();
for (const file of results.flatMap((r) => r.outputFiles)) {
  const other = files.get(file.path);
  if (other !== undefined && other.text !== file.text) throw new Error(`build-cli: two bundles wrote different ${file.path}`);
  files.set(file.path, file);
}
await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
await Promise.all([...files.values()].map((f) => writeFile(f.path, f.contents)));
