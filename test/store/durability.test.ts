// Durability levels, observed from the outside with strace: which fsyncs happen, on which file,
// and in what order relative to the retirement write and the sidecar unlink.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "./helpers/backends.js";
import { compileStoreForChildren } from "./helpers/compile-store.js";

const hasStrace = spawnSync("strace", ["-V"]).status === 0 && spawnSync("strace", ["-f", "-e", "trace=none", "true"]).status === 0;
const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures/durability-child.mjs");
let storeModule = "";
beforeAll(() => {
  storeModule = compileStoreForChildren();
});
afterAll(removeTempDirs);

describe.skipIf(!hasStrace)("durability levels (strace)", () => {
  function run(durability: "process" | "os") {
    const main = join(tempDir(), "session.jsonl");
    const sidecar = `${main}.scopes/scope-op%3A1.scope`;
    const r = spawnSync(
      "strace",
      ["-f", "-y", "-qq", "-s", "400", "-e", "trace=write,fsync,fdatasync,unlink,unlinkat", process.execPath, child, storeModule, main, durability],
      { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
    );
    expect(r.stdout).toContain("settled");
    return { main, sidecar, lines: r.stderr.split("\n") };
  }

  it('"process" never fsyncs a session file while committing', () => {
    const { main, lines } = run("process");
    const syncs = lines.filter((l) => /\b(fsync|fdatasync)\(/.test(l) && l.includes(main));
    expect(syncs).toEqual([]);
    expect(lines.some((l) => /\bwrite\(/.test(l) && l.includes(`<${main}>`))).toBe(true);
  });

  it('"os" group-commits the stream and fsyncs the retirement before unlinking the sidecar', () => {
    const { main, sidecar, lines } = run("os");
    const idx = (pred: (l: string) => boolean, from = 0) => lines.findIndex((l, i) => i >= from && pred(l));
    const retireWrite = idx((l) => /\bwrite\(/.test(l) && l.includes(`<${main}>`) && l.includes("retire"));
    expect(retireWrite).toBeGreaterThan(-1);
    const mainSync = idx((l) => /\bfdatasync\(/.test(l) && l.includes(`<${main}>`), retireWrite);
    const unlink = idx((l) => /\bunlink(at)?\(/.test(l) && l.includes(sidecar), retireWrite);
    expect(mainSync).toBeGreaterThan(retireWrite);
    expect(unlink).toBeGreaterThan(mainSync);
    // The stream ran for at least 150 ms with syncIntervalMs 20: several group fsyncs of the
    // sidecar, and far fewer than one per commit.
    const sidecarSyncs = lines.slice(0, retireWrite).filter((l) => /\bfdatasync\(/.test(l) && l.includes(`<${sidecar}>`)).length;
    const sidecarWrites = lines.slice(0, retireWrite).filter((l) => /\bwrite\(/.test(l) && l.includes(`<${sidecar}>`)).length;
    expect(sidecarSyncs).toBeGreaterThanOrEqual(2);
    expect(sidecarSyncs).toBeLessThan(sidecarWrites / 2);
  });
});
