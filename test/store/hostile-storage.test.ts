// Issue 11 §3, at the store layer: one writer per session for every backend, and a damaged complete
// last line reported as corruption (never cut without `repair`). One test per defect, named after it.
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CorruptSessionError, openJsonlStore, openSessionRepo, repairJsonlSession, SessionLockedError, setValue, value } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);

describe("SQLite has no single-writer lock", () => {
  it.each(["jsonl", "sqlite"] as const)("%s: a second writer on an open session is refused with the holder's pid; after close it opens", async (backend) => {
    const repo = openSessionRepo(join(tempDir(), "sessions"), { backend });
    const s = await repo.create({ id: "one" });
    await s.store.commit([setValue(value("k"), 1)]);
    let err: unknown;
    try {
      await repo.open("one");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SessionLockedError);
    expect((err as Error).message).toContain(`is open in process ${process.pid}`);
    await expect(repo.delete("one")).rejects.toBeInstanceOf(SessionLockedError);
    await s.store.close();
    const again = await repo.open("one");
    expect(again.get(value<number>("k"))).toBe(1);
    await again.close();
  });
});

describe("A complete last line with a bad checksum is dropped silently", () => {
  async function session(): Promise<string> {
    const main = join(tempDir(), "session.jsonl");
    const store = await openJsonlStore(main);
    await store.commit([setValue(value("k"), "first")]);
    await store.commit([setValue(value("k"), "second")]);
    await store.close();
    return main;
  }
  /** Flips one digit inside the last line's value, keeping its newline: a complete line that no longer verifies. */
  function damageLastLine(main: string): void {
    const text = readFileSync(main, "utf8");
    writeFileSync(main, text.replace(/"second"(?=[^\n]*\n$)/, '"secXnd"'));
  }

  it("opening says corruption with the file and line, and leaves the file as it was", async () => {
    const main = await session();
    damageLastLine(main);
    const before = readFileSync(main);
    const lines = before.toString().split("\n").length - 1;
    let err: unknown;
    try {
      await openJsonlStore(main);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CorruptSessionError);
    expect((err as CorruptSessionError).line).toBe(lines);
    expect((err as Error).message).toContain(`${main}:${lines}: the last line is complete`);
    expect((err as Error).message).toContain("spool repair");
    expect(readFileSync(main)).toEqual(before);
  });

  it("a torn tail (no final newline) is still repaired quietly", async () => {
    const main = await session();
    const good = readFileSync(main);
    appendFileSync(main, '{"seq":9,"w":[{"op":"se');
    const store = await openJsonlStore(main);
    expect(store.get(value<string>("k"))).toBe("second");
    await store.close();
    expect(readFileSync(main)).toEqual(good);
  });

  it("repair, on request, moves the damaged line aside and the session opens at its last good line", async () => {
    const main = await session();
    const good = readFileSync(main, "utf8").replace(/[^\n]*\n$/, "");
    damageLastLine(main);
    const damaged = readFileSync(main, "utf8").slice(good.length);
    const [r] = repairJsonlSession(main);
    expect(r!.line).toBe(good.split("\n").length);
    expect(readFileSync(r!.savedTo, "utf8")).toBe(damaged);
    expect(statSync(r!.savedTo).mode & 0o777).toBe(0o600);
    expect(readFileSync(main, "utf8")).toBe(good);
    const store = await openJsonlStore(main);
    expect(store.get(value<string>("k"))).toBe("first");
    await store.close();
    expect(repairJsonlSession(main)).toEqual([]);
    expect(readdirSync(join(main, "..")).filter((n) => n.includes(".damaged-"))).toHaveLength(1);
  });
});
