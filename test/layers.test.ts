// The layer rule, checked on every source file: a layer imports only the layers below it, and only
// through their public face (`<layer>/index.ts`). The allowed arrows are the architecture's; a new
// arrow is a design decision, made here on purpose, never by accident in a file.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const src = resolve(import.meta.dirname, "../src");

/** Which layers each layer may import. Leaves first; the CLI sits on top of everything. */
const ALLOWED: Record<string, readonly string[]> = {
  errors: [],
  delta: ["errors"],
  capture: ["errors"],
  store: ["errors"],
  output: ["errors", "capture", "delta"],
  context: ["errors", "store", "capture"],
  wire: ["errors", "delta"],
  harness: ["errors", "capture", "delta", "output", "store", "context", "wire"],
  mcp: ["errors", "capture", "delta", "output", "store", "context", "wire", "harness"],
  "ai-sdk": ["errors", "capture", "delta", "output", "store", "context", "harness"],
  cli: ["errors", "capture", "delta", "output", "store", "context", "wire", "harness", "mcp", "ai-sdk"],
};

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (e.name.endsWith(".ts")) yield p;
  }
}

const layerOf = (file: string): string => relative(src, file).split("/")[0]!;

describe("layers", () => {
  it("every folder under src is a known layer", () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    for (const f of folders) expect(Object.keys(ALLOWED), `src/${f} is not in the layer table`).toContain(f);
  });

  it("imports go only downward, through the lower layer's index.ts", () => {
    const problems: string[] = [];
    let crossing = 0;
    for (const file of sources(src)) {
      if (relative(src, file) === "index.ts") continue; // the package root names every layer
      const from = layerOf(file);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
        const target = resolve(dirname(file), m[1]!).replace(/\.js$/, ".ts");
        const to = layerOf(target);
        if (to === from) continue;
        crossing++;
        const where = `${relative(src, file)} imports ${m[1]}`;
        if (!ALLOWED[from]?.includes(to)) problems.push(`${where}: ${from} may not import ${to}`);
        else if (relative(join(src, to), target) !== "index.ts") problems.push(`${where}: go through ${to}/index.ts`);
      }
    }
    expect(problems).toEqual([]);
    expect(crossing).toBeGreaterThan(50);
  });
});
