// The README's library examples (every ```ts / ```js block that imports a `spool/…` layer), taken from
// README.md as it stands and run as a user runs them: in a project of their own that resolves `spool`
// through the package's exports (dist/), type-checked strictly and then run. The names an example leaves
// to the reader (`history`, `model`) are bound first. The AI SDK example has its own test
// (test/ai-sdk/readme-example.test.ts, against a provider server). The delta example, as first
// written, applied a non-base batch to an empty replica and crashed with SPOOL_DELTA_PATH.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../support/temp.js";

const ROOT_DIR = new URL("../../", import.meta.url).pathname;
afterAll(removeTempDirs);

/** What an example leaves to the reader, bound the way a reader's program would have it. */
const READER_NAMES =
  'const model = "claude-sonnet-4-5";\n' +
  'const history = [{ role: "user", content: "list the files" }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: { command: "ls" } }] }];\n';

/** Checks appended to an example: what its comments say it ends with. */
const CLAIMS: Record<string, string> = {
  "spool/delta":
    '\nif (JSON.stringify(replica) !== JSON.stringify(t.state) || JSON.stringify(replica) !== \'{"content":[{"type":"text","text":" world!"}],"n":1}\') throw new Error(`replica ${JSON.stringify(replica)}`);\n',
  "spool/context": "\nif (request.messages.length !== 3) throw new Error(`request ${JSON.stringify(request)}`);\n",
};

function libraryExamples(): { layer: string; code: string }[] {
  const readme = readFileSync(join(ROOT_DIR, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/^```(?:ts|js|typescript|javascript)\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return blocks.flatMap((code) => {
    const layer = /from "(spool\/[a-z-]+)"/.exec(code)?.[1];
    return layer === undefined || layer === "spool/ai-sdk" ? [] : [{ layer, code }];
  });
}

function project(): string {
  const dir = tempDir("spool-readme-lib-");
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(ROOT_DIR, join(dir, "node_modules", "spool"), "dir");
  symlinkSync(join(ROOT_DIR, "node_modules", "@types"), join(dir, "node_modules", "@types"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user-project", type: "module", private: true }));
  return dir;
}

it("the README holds the library examples this test runs", () => {
  expect(libraryExamples().map((e) => e.layer)).toEqual(expect.arrayContaining(["spool/context", "spool/delta"]));
});

for (const { layer, code } of libraryExamples()) {
  it(`the README's ${layer} example type-checks and runs against the built package as written`, async () => {
    const dir = project();
    const imports = code.split("\n").filter((l) => l.startsWith("import "));
    const body = code.split("\n").filter((l) => !l.startsWith("import "));
    writeFileSync(join(dir, "example.ts"), [...imports, READER_NAMES, ...body, CLAIMS[layer] ?? ""].join("\n"));
    const tsc = join(ROOT_DIR, "node_modules", "typescript", "bin", "tsc");
    const flags = ["--noEmit", "--strict", "--target", "ES2022", "--module", "NodeNext", "--moduleResolution", "NodeNext", "--types", "node"];
    const typecheck = await promisify(execFile)(process.execPath, [tsc, ...flags, "example.ts"], { cwd: dir }).catch((e: { stdout: string }) => e);
    expect("stdout" in typecheck ? typecheck.stdout : "").toBe("");
    const run = await promisify(execFile)(process.execPath, ["example.ts"], { cwd: dir }).then(
      () => "",
      (e: { stderr: string }) => e.stderr,
    );
    expect(run).toBe("");
  });
}
