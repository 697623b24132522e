// A write that fails half-way (real EFBIG under `ulimit -f`) must leave no partial line behind:
// the log is cut back to its last good length, so later appends and reopen see clean state.
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openJsonlStore, value } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";
import { compileStoreForChildren } from "./helpers/compile-store.js";

const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures/fsize-child.mjs");
let storeModule = "";
beforeAll(() => {
  storeModule = compileStoreForChildren();
});
afterAll(removeTempDirs);

describe("JSONL write failures", () => {
  it("a write cut short by EFBIG is rolled back, rejected, and leaves a clean, reopenable log", async () => {
    const main = join(tempDir(), "session.jsonl");
    // bash counts `ulimit -f` in 1024-byte blocks: 40 KB holds a few dozen ~1 KB lines.
    const out = execFileSync("bash", ["-c", `ulimit -f 40 && exec "${process.execPath}" "${child}" "${storeModule}" "${main}"`], { encoding: "utf8" });
    const results = JSON.parse(out) as { i: number; seq?: number; text?: string; error?: string }[];
    const ok = results.filter((r) => r.seq !== undefined);
    const failed = results.filter((r) => r.error !== undefined);
    expect(ok.length).toBeGreaterThan(10);
    expect(failed.length).toBeGreaterThan(0);
    expect(new Set(failed.map((f) => f.error))).toEqual(new Set(["EFBIG"]));
    // Every success precedes every failure: nothing was acknowledged after the disk "filled".
    expect(Math.max(...ok.map((r) => r.i))).toBeLessThan(Math.min(...failed.map((r) => r.i)));
    const bytes = readFileSync(main);
    expect(bytes[bytes.length - 1]).toBe(10);
    expect(statSync(main).size).toBeLessThanOrEqual(40 * 1024);
    const store = await openJsonlStore(main);
    expect(statSync(main).size).toBe(bytes.length); // nothing torn had to be cut
    for (const r of ok) expect(store.get(value("k", String(r.i)))).toBe(r.text);
    for (const r of failed) expect(store.get(value("k", String(r.i)))).toBeUndefined();
    await store.close();
  });
});
