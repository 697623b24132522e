// Bundles the CLI into dist/bin/ (one entry, one chunk per command, shared chunks between them, all
// in one folder):
// a command loads one file tree instead of ~100 modules, which is most of `spool run`'s startup.
// dist/bin sits two levels below the package root, like dist/cli, so `../../package.json` and
// `../../web/dist` resolve the same from either.
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist/bin");
await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "src/cli/main.ts")],
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  packages: "bundle",
  minifySyntax: true,
  minifyWhitespace: true,
  chunkNames: "[name]-[hash]",
  // Bundled CommonJS dependencies call require(); ESM has none of its own.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __spoolRequire } from 'node:module'; const require = __spoolRequire(import.meta.url);" },
  logLevel: "warning",
});
