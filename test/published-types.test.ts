// The published declaration files type-check in a dependent project: every package a shipped .d.ts
// imports is one the dependent installs with spool (a dependency or peer dependency) and comes with
// types — its own, or an @types package spool depends on. `pg` ships none: with @types/pg a
// devDependency, a project importing spool/ai-sdk with skipLibCheck off got four TS7016 errors from
// dist/store/postgres/*.d.ts ("Could not find a declaration file for module 'pg'"), and no others.
// (node: built-ins are the dependent's own @types/node, as for any Node library.)
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  types?: string;
  typings?: string;
  exports?: unknown;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

function* declarations(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* declarations(p);
    else if (e.name.endsWith(".d.ts")) yield p;
  }
}

/** "pg" of "pg", "@scope/name" of "@scope/name/sub.js". */
const packageOf = (specifier: string): string =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

/** Whether the installed package carries declarations of its own. */
function shipsTypes(name: string): boolean {
  const dir = join(root, "node_modules", name);
  const m = manifest(dir);
  return m.types !== undefined || m.typings !== undefined || existsSync(join(dir, "index.d.ts")) || JSON.stringify(m.exports ?? "").includes(".d.");
}

it("every package a published .d.ts imports is installed with spool and comes with types", () => {
  expect(existsSync(join(root, "dist/index.d.ts")), "run `npm run build` before the tests").toBe(true);
  const pkg = manifest(root);
  const installed = { ...pkg.dependencies, ...pkg.peerDependencies };
  const problems = new Set<string>();
  // dist/cli is not published (package.json "files": "!dist/cli").
  for (const file of declarations(join(root, "dist"))) {
    if (file.startsWith(join(root, "dist", "cli"))) continue;
    const text = readFileSync(file, "utf8");
    for (const [, specifier] of text.matchAll(/(?:from |import\()"([^".][^"]*)"/g)) {
      if (specifier!.startsWith("node:")) continue;
      const name = packageOf(specifier!);
      if (!(name in installed)) problems.add(`${name} (imported by ${file.slice(root.length + 1)}) is not a dependency or peer dependency`);
      else if (!shipsTypes(name) && !(pkg.dependencies ?? {})[`@types/${name}`])
        problems.add(`${name} ships no types and @types/${name} is not a dependency (imported by ${file.slice(root.length + 1)})`);
    }
  }
  expect([...problems]).toEqual([]);
});
