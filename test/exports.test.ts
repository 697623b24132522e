// Each layer's public face, pinned: the names `spool/<layer>` exports at run time, read from the
// built package through its `exports` map as a dependent project resolves it. A name appears or
// disappears here on purpose, never as a side effect of an `export *`. (Types are pinned by the
// explicit `export { … }` lists in each index.ts and by the typecheck.)
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "./support/temp.js";

const root = resolve(import.meta.dirname, "..");
const PINNED: Record<string, readonly string[]> = JSON.parse(readFileSync(join(import.meta.dirname, "exports.pinned.json"), "utf8"));

describe("public faces (built package, resolved through exports)", () => {
  let consumer = "";
  beforeAll(() => {
    expect(existsSync(join(root, "dist/index.js")), "run `npm run build` before the tests").toBe(true);
    consumer = tempDir("spool-consumer-");
    mkdirSync(join(consumer, "node_modules"));
    symlinkSync(root, join(consumer, "node_modules", "spool"), "dir");
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", type: "module", private: true }));
  });
  afterAll(removeTempDirs);

  it("every layer in package.json exports is pinned, and every pinned layer is exported", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(pkg.exports)
      .filter((k) => k !== "./package.json")
      .map((k) => (k === "." ? "." : k.slice(2)));
    expect(subpaths.sort()).toEqual(Object.keys(PINNED).sort());
  });

  it("each layer exports exactly its pinned names", () => {
    const probe = `const out = {}; for (const l of ${JSON.stringify(Object.keys(PINNED))}) out[l] = Object.keys(await import(l === "." ? "spool" : "spool/" + l)).sort(); console.log(JSON.stringify(out));`;
    const got = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", probe], { cwd: consumer, encoding: "utf8" })) as Record<
      string,
      string[]
    >;
    for (const [layer, names] of Object.entries(PINNED)) expect(got[layer], `spool${layer === "." ? "" : `/${layer}`}`).toEqual([...names].sort());
  });
});
