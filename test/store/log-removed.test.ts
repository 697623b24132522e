// A JSONL session whose directory is deleted while the store writes it (a model's `rm -rf .spool`,
// or the user cleaning up mid-run). Before, the writer went on appending to the deleted file: every
// record from then on, and the log itself, were gone once the store closed. Now the log is published
// again — the main log copied from the descriptor the writer holds, live sidecars from memory — and a
// reopen reads everything committed, before and after the deletion. Real files throughout.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { appendList, ephemeralScope, list, openJsonlStore, readJsonlSnapshot, setValue, value } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);
afterEach(() => {
  vi.useRealTimers();
});

const note = value<string>("notes", "n");
const op = ephemeralScope("op:long");
const out = list<string>("tool_output", "call_1", op);

describe("a JSONL log deleted under its writer", () => {
  it("is published again whole: what was committed before and after the deletion reads back on reopen, live sidecar included", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const warned: string[] = [];
    const onWarning = (w: Error & { code?: string }) => void (w.code === "SPOOL_SESSION_DIR_REMOVED" && warned.push(w.message));
    process.on("warning", onWarning);
    try {
      const dir = join(tempDir(), ".spool", "sessions", "s1");
      const path = join(dir, "session.jsonl");
      const store = await openJsonlStore(path, { sessionId: "s1" });
      await store.commit([setValue(note, "before")]);
      await store.commit([appendList(out, "chunk-1 ", "base")]);
      rmSync(dirname(dirname(dir)), { recursive: true, force: true });
      // Appended to the deleted file, before the writer looks again: copied with it.
      await store.commit([setValue(value<string>("notes", "m"), "in between")]);
      vi.setSystemTime(Date.now() + 2000);
      await store.commit([appendList(out, "chunk-2 ")]);
      expect(existsSync(path)).toBe(true);
      await store.commit([setValue(note, "after")]);
      await store.close();
      await new Promise((r) => setImmediate(r));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain(dir);

      const snap = readJsonlSnapshot(path);
      expect(snap.get(note)).toBe("after");
      expect(snap.get(value<string>("notes", "m"))).toBe("in between");
      const reopened = await openJsonlStore(path, { create: false });
      expect(reopened.readList(out).elements.map((e) => e.value)).toEqual(["chunk-1 ", "chunk-2 "]);
      expect(reopened.get(note)).toBe("after");
      await reopened.close();
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("a deletion found only at close is published then, with the close's own writes", async () => {
    const dir = join(tempDir(), "s2");
    const path = join(dir, "session.jsonl");
    const store = await openJsonlStore(path, { sessionId: "s2" });
    await store.commit([setValue(note, "first")]);
    rmSync(dir, { recursive: true, force: true });
    await store.commit([setValue(note, "last")]);
    await store.close();
    expect(readJsonlSnapshot(path).get(note)).toBe("last");
  });

  it("when it cannot be published again (a file stands where the directory was) the store stops with SPOOL_STORE_LOG_REMOVED, for this write and every later one", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const dir = join(tempDir(), "s3");
    const store = await openJsonlStore(join(dir, "session.jsonl"), { sessionId: "s3" });
    await store.commit([setValue(note, "first")]);
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory");
    vi.setSystemTime(Date.now() + 2000);
    const failed = store.commit([setValue(note, "lost")]);
    await expect(failed).rejects.toMatchObject({ code: "SPOOL_STORE_LOG_REMOVED" });
    await expect(failed).rejects.toThrow(/session\.jsonl was deleted while the session was writing it.*start a new session/);
    await expect(store.commit([setValue(note, "later")])).rejects.toMatchObject({ code: "SPOOL_STORE_LOG_REMOVED" });
    await store.close();
  });

  it("found only at close, a log that cannot be published again fails the close with SPOOL_STORE_LOG_REMOVED", async () => {
    const dir = join(tempDir(), "s4");
    const store = await openJsonlStore(join(dir, "session.jsonl"), { sessionId: "s4" });
    await store.commit([setValue(note, "first")]);
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory");
    await store.commit([setValue(note, "into the deleted file")]);
    await expect(store.close()).rejects.toMatchObject({ code: "SPOOL_STORE_LOG_REMOVED" });
  });
});
