// Bundles the viewer (web/src/main.ts, which imports the library's wire client and delta fold) into
// web/dist/app.js and copies the static files next to it. `npm run build` runs it after tsc.
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));

/** Build the viewer into `outdir` (default web/dist); returns the directory. */
export async function buildViewer(outdir = join(here, "dist")) {
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: [join(here, "src", "main.ts")],
    outfile: join(outdir, "app.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["chrome110", "firefox110", "safari16"],
    minify: true,
    sourcemap: true,
    logLevel: "warning",
  });
  await copyFile(join(here, "index.html"), join(outdir, "index.html"));
  await copyFile(join(here, "app.css"), join(outdir, "app.css"));
  return outdir;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await buildViewer();
