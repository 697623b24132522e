// Child processes cannot load TypeScript, so tests that spawn them transpile src/store and the error
// base below it (the store imports nothing else) into a temp directory that resolves node_modules
// from the repo.
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { tempDir } from "./backends.js";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function* tsFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

/** Returns the path of the transpiled `src/store/index.js`. */
export function compileStoreForChildren(): string {
  const out = tempDir("spool-store-js-");
  const src = join(repo, "src");
  for (const layer of ["store", "errors"]) {
    for (const file of tsFiles(join(src, layer))) {
      const js = ts.transpileModule(readFileSync(file, "utf8"), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      }).outputText;
      const dest = join(out, relative(src, file)).replace(/\.ts$/, ".js");
      mkdirSync(dirname(dest), { recursive: true });
      writeFileSync(dest, js);
    }
  }
  writeFileSync(join(out, "package.json"), '{"type":"module"}');
  symlinkSync(join(repo, "node_modules"), join(out, "node_modules"), "dir");
  return join(out, "store", "index.js");
}
