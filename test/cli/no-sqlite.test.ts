// `--store sqlite` (or SPOOL_STORE=sqlite) on a Node without node:sqlite — the machine's Node 20 here —
// is one line saying what to do, before any file or session directory is made. It made the session
// directory and an empty session.sqlite, then failed with "Cannot read properties of undefined
// (reading 'DatabaseSync')", exit 1. The library's openSessionRepo refuses it the same way, with a code.
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

/** A node on this machine that has no node:sqlite (Node 20), if there is one. */
function nodeWithoutSqlite(): string | undefined {
  const candidates = ["/usr/bin/node", "/bin/node", "/usr/local/bin/node"];
  return candidates.find((node) => {
    try {
      return (
        execFileSync(
          node,
          ["-e", "process.stdout.write(String(typeof process.getBuiltinModule === 'function' && process.getBuiltinModule('node:sqlite') !== undefined))"],
          { encoding: "utf8" },
        ) === "false"
      );
    } catch {
      return false;
    }
  });
}

const NODE = nodeWithoutSqlite();

it.skipIf(NODE === undefined)("spool run/sessions --store sqlite: one line, exit 2, nothing made", () => {
  const cwd = tempDir("spool-no-sqlite-");
  for (const [args, env, name] of [
    [["run", "--root", join(cwd, "r"), "--store", "sqlite", "--", "touch ran"], {}, "--store sqlite"],
    [["run", "--root", join(cwd, "r"), "--", "touch ran"], { SPOOL_STORE: "sqlite" }, "SPOOL_STORE=sqlite"],
    [["sessions", "--root", join(cwd, "r"), "--store", "sqlite"], {}, "--store sqlite"],
  ] as const) {
    const r = spawnSync(NODE!, [SPOOL_BIN, ...args], { cwd, encoding: "utf8", input: "", env: { ...process.env, ...env } });
    expect(r.stderr).toMatch(
      new RegExp(
        `^spool (run|sessions): ${name} needs Node's built-in node:sqlite, which Node v\\d+\\.\\d+\\.\\d+ does not have: run spool on Node 22\\.13 or newer, or use --store jsonl\\n$`,
      ),
    );
    expect(r.status).toBe(2);
  }
  expect(readdirSync(cwd)).toEqual([]);
});

it.skipIf(NODE === undefined)("openSessionRepo(root, { backend: 'sqlite' }) throws SPOOL_STORE_NO_SQLITE before making the root", () => {
  const cwd = tempDir("spool-no-sqlite-");
  const store = new URL("../../dist/store/index.js", import.meta.url).href;
  const script = `import(${JSON.stringify(store)}).then(async ({ openSessionRepo }) => { try { const repo = openSessionRepo("r", { backend: "sqlite" }); await repo.create(); console.log("created"); } catch (e) { console.log(e.code + ": " + e.message); } })`;
  const out = execFileSync(NODE!, ["-e", script], { cwd, encoding: "utf8" });
  expect(out).toMatch(/^SPOOL_STORE_NO_SQLITE: the SQLite store needs Node's built-in node:sqlite, which Node v\d+\.\d+\.\d+ does not have/);
  expect(readdirSync(cwd)).toEqual([]);
});
