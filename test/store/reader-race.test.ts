// A read-only load racing a writer that retires scopes: a sidecar listed by the reader can be
// unlinked before it is read. The load must neither fail on the missing file nor drop the scope's
// records (the main log it read may predate the retirement); it reads the session again.
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ephemeralScope, list, readJsonlSnapshot, value } from "../../src/store/index.js";
import { until } from "../support/until.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";
import { compileStoreForChildren } from "./helpers/compile-store.js";

const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures/retire-loop-child.mjs");
let storeModule = "";
let writer: ChildProcess | undefined;
beforeAll(() => {
  storeModule = compileStoreForChildren();
});
afterAll(() => {
  writer?.kill("SIGKILL");
  return removeTempDirs();
});

describe("readJsonlSnapshot while the writer retires scopes", () => {
  it("every load succeeds and holds the records of the scope the main log has not settled yet", async () => {
    const main = join(tempDir(), "session.jsonl");
    writer = spawn(process.execPath, [child, storeModule, main], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    writer.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    await until(() => out.includes("ready"));
    let checked = 0;
    const deadline = Date.now() + 4000;
    while (Date.now() < deadline) {
      const snap = readJsonlSnapshot(main);
      const appended = snap.get(value<number>("ns", "appended"));
      const settled = snap.get(value<number>("ns", "settled")) ?? -1;
      if (appended === undefined) continue;
      if (appended > settled) {
        // op:appended is written and not yet retired in the log this load read: its records are there.
        const kept = snap.readList<string>(list("ns", "out", ephemeralScope(`op:${appended}`)), { limit: 10 }).elements.map((e) => e.value);
        expect(kept).toEqual([String(appended)]);
        checked++;
      }
      // Scopes the main log has settled are gone.
      expect(snap.readList(list("ns", "out", ephemeralScope(`op:${settled}`)), { limit: 10 }).elements).toEqual([]);
      await new Promise((r) => setImmediate(r));
    }
    expect(checked).toBeGreaterThan(20);
  }, 20_000);
});
