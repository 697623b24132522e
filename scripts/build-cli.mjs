// Bundles the CLI into dist/bin/: main.js (the command table, no layer code) and one CommonJS file per
// command, <name>-<content hash>.cjs, that main.js loads through src/cli/bundle-loader.ts (vm.Script
// with a code cache taken after the command ran; the numbers are there).
// Each command is bundled on its own, so it holds exactly what it uses: one build with code splitting
// put every file a command could reach through a layer's index.ts into its chunks, used or not
// (esbuild splits by reachability, not by what tree-shaking keeps), and `spool run` loaded 505 KB in
// 17 files, re2js and the conversation adapters included, for the MCP server's sake. One file per
// command also spares the ES module loader's resolve and link of every chunk.
// dist/bin sits two levels below the package root, like dist/cli, so `../../package.json` and
// `../../web/dist` resolve the same from either.
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "src/cli");
const outdir = join(root, "dist/bin");
const table = join(cli, "commands.ts");

// The commands main.js loads: `(await import("./run.js")).runCommand` in commands.ts.
const commands = [...(await readFile(table, "utf8")).matchAll(/import\("\.\/([a-z-]+)\.js"\)\)\.(\w+)/g)].map((m) => ({ module: m[1], name: m[2] }));

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

/**
 * `import { readFileSync } from "node:fs"` makes Node build the module's ESM facade, which reads every
 * export once: fs's ReadStream getter loads the whole streams stack (main.js is an ES module; the
 * command bundles are CommonJS and read an export when they use it). Here a builtin is a small module
 * loaded with process.getBuiltinModule whose named exports are read only if imported (each is a pure
 * call, dropped when unused).
 */
const builtinExports = {
  name: "builtin-exports",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === "import-statement" || args.kind === "dynamic-import" ? { path: args.path, namespace: "builtin", sideEffects: false } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => {
      const id = JSON.stringify(args.path);
      const names = Object.keys(process.getBuiltinModule(args.path)).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && !n.endsWith("$") && n !== "default");
      return {
        loader: "js",
        contents: [
          // Node < 22.3 has no getBuiltinModule: the banner's require loads the same module object.
          `const builtin$ = process.getBuiltinModule?.(${id}) ?? require(${id});`,
          "const export$ = (name) => builtin$[name];",
          "export default builtin$;",
          ...names.map((n) => `export const ${n} = /* @__PURE__ */ export$(${JSON.stringify(n)});`),
        ].join("\n"),
      };
    });
  },
};

const common = {
  bundle: true,
  platform: "node",
  target: "node22",
  packages: "bundle",
  minifySyntax: true,
  minifyWhitespace: true,
  write: false,
  logLevel: "warning",
};

/**
 * In a command bundle `await import("node:fs/promises")` becomes a require() when it runs: vm.Script
 * has no module loader of its own, so an import() left in a bundle would fail (the build checks that
 * none is left).
 */
const builtinImportsAsRequire = {
  name: "builtin-imports-as-require",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) => (args.kind === "dynamic-import" ? { path: args.path, namespace: "builtin-require" } : undefined));
    b.onLoad({ filter: /.*/, namespace: "builtin-require" }, (args) => ({ loader: "js", contents: `module.exports = require(${JSON.stringify(args.path)});` }));
  },
};

// The commands, each one CommonJS file. ES module semantics kept: strict mode, and import.meta.url
// (node-pty and @xterm/headless are required relative to it) is the bundle's own file URL.
const bundles = await Promise.all(
  commands.map(async ({ module, name }) => {
    const r = await build({
      ...common,
      entryPoints: [join(cli, `${module}.ts`)],
      outfile: join(outdir, `${module}.cjs`),
      format: "cjs",
      define: { "import.meta.url": "__spoolImportMetaUrl" },
      banner: { js: '"use strict";var __spoolImportMetaUrl=require("node:url").pathToFileURL(__filename).href;' },
      plugins: [sideEffectFree, builtinImportsAsRequire],
      metafile: true,
    });
    const [file] = r.outputFiles;
    const left = Object.values(r.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.kind === "dynamic-import").map((i) => i.path));
    if (left.length > 0) throw new Error(`build-cli: ${module} keeps import() of ${left.join(", ")}; bundle it or require() it`);
    const hash = createHash("sha256").update(file.contents).digest("hex").slice(0, 10);
    return { module, name, file: `${module}-${hash}.cjs`, contents: file.contents };
  }),
);

/** In main.js, `import("./run.js")` in commands.ts becomes loadBundle("run-<hash>.cjs"). */
const commandBundles = {
  name: "command-bundles",
  setup(b) {
    b.onResolve({ filter: /^\.\/[a-z-]+\.js$/ }, (args) =>
      args.importer === table ? { path: args.path.slice(2, -3), namespace: "command-bundle", sideEffects: false } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "command-bundle" }, (args) => {
      const bundle = bundles.find((x) => x.module === args.path);
      return {
        loader: "js",
        resolveDir: cli,
        contents: `import { loadBundle } from "./bundle-loader.ts";\nexport const { ${bundle.name} } = loadBundle(${JSON.stringify(bundle.file)});`,
      };
    });
  },
};

const main = await build({
  ...common,
  entryPoints: [join(cli, "main.ts")],
  outfile: join(outdir, "main.js"),
  format: "esm",
  plugins: [commandBundles, sideEffectFree, builtinExports],
  // Bundled CommonJS dependencies call require(); ESM has none of its own.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __spoolRequire } from 'node:module'; const require = __spoolRequire(import.meta.url);" },
});

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
await Promise.all([writeFile(join(outdir, "main.js"), main.outputFiles[0].contents), ...bundles.map((x) => writeFile(join(outdir, x.file), x.contents))]);
