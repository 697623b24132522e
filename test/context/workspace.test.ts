import { existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, createWorkspace, readOnlyLookup, WorkspaceError } from "../../src/context/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);
const root = (): string => tempDir("spool-ws-");

describe("createWorkspace", () => {
  it("creates the session directory with spill/, results/ and archive/, private to the user", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s1", env: {} });
    for (const d of [ws.dir, ws.spillDir, ws.resultsDir, ws.archiveDir]) {
      expect(statSync(d).isDirectory()).toBe(true);
      expect(statSync(d).mode & 0o777).toBe(0o700);
    }
    expect(ws.dir.endsWith(join("s1"))).toBe(true);
  });

  it("opening the same session again reuses its directory and what is in it (resume)", () => {
    const r = root();
    const a = createWorkspace({ root: r, sessionId: "s1", env: {} });
    const key = a.archive.put("kept across opens");
    const b = createWorkspace({ root: r, sessionId: "s1", env: {} });
    expect(b.dir).toBe(a.dir);
    expect(b.get(key)).toBe("kept across opens");
  });

  it("a fresh workspace without a session id gets a unique one", () => {
    const r = root();
    expect(createWorkspace({ root: r, env: {} }).sessionId).not.toBe(createWorkspace({ root: r, env: {} }).sessionId);
  });

  it("canRead allows paths inside the workspace, including ones that do not exist yet", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s", env: {} });
    const inside = join(ws.resultsDir, "x.txt");
    writeFileSync(inside, "hello");
    expect(ws.canRead(inside)).toBe(true);
    expect(ws.canRead(join(ws.spillDir, "later.log"))).toBe(true);
    expect(ws.canRead("results/x.txt")).toBe(true);
    expect(ws.readText(inside)).toBe("hello");
  });

  it("canRead refuses paths outside, after resolving .. and symlinks", () => {
    const r = root();
    const ws = createWorkspace({ root: r, sessionId: "s", env: {} });
    const outside = join(r, "secret.txt");
    writeFileSync(outside, "secret");
    expect(ws.canRead(outside)).toBe(false);
    expect(ws.canRead(join(ws.resultsDir, "..", "..", "secret.txt"))).toBe(false);
    expect(ws.canRead("/etc/passwd")).toBe(false);
    symlinkSync(outside, join(ws.resultsDir, "link.txt"));
    expect(ws.canRead(join(ws.resultsDir, "link.txt"))).toBe(false);
    mkdirSync(join(r, "elsewhere"));
    symlinkSync(join(r, "elsewhere"), join(ws.spillDir, "dirlink"));
    expect(ws.canRead(join(ws.spillDir, "dirlink", "not-yet.txt"))).toBe(false);
    expect(() => ws.readText(join(ws.resultsDir, "link.txt"))).toThrow(WorkspaceError);
    expect(() => ws.readText(outside)).toThrow(/outside the session workspace/);
  });

  it("a symlink that stays inside the workspace is readable", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s", env: {} });
    writeFileSync(join(ws.resultsDir, "real.txt"), "r");
    symlinkSync(join(ws.resultsDir, "real.txt"), join(ws.spillDir, "alias.txt"));
    expect(ws.canRead(join(ws.spillDir, "alias.txt"))).toBe(true);
  });

  it("cleanup removes the directory, and a second cleanup is harmless", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s", env: {} });
    ws.cleanup();
    expect(existsSync(ws.dir)).toBe(false);
    expect(() => ws.cleanup()).not.toThrow();
  });

  it("SPOOL_KEEP_WORKSPACE=true in any case keeps the directory; other values do not", () => {
    const r = root();
    for (const [value, kept] of [
      ["true", true],
      ["TRUE", true],
      ["1", false],
      ["yes", false],
    ] as const) {
      const ws = createWorkspace({ root: r, sessionId: `k-${value}`, env: { SPOOL_KEEP_WORKSPACE: value } });
      expect(ws.keep).toBe(kept);
      ws.cleanup();
      expect(existsSync(ws.dir), value).toBe(kept);
    }
  });

  it("get finds archived text and the budget's result files by key", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s", env: {} });
    const k = ws.archive.put("archived");
    writeFileSync(join(ws.resultsDir, "0123456789abcdef.txt"), "saved result");
    expect(ws.get(k)).toBe("archived");
    expect(ws.get("0123456789abcdef")).toBe("saved result");
    expect(ws.get("../../etc/passwd")).toBeUndefined();
  });

  it("a read-only lookup finds archived and saved texts without creating anything", () => {
    const r = root();
    const ws = createWorkspace({ root: r, sessionId: "s", env: {} });
    const k = ws.archive.put("archived text");
    writeFileSync(join(ws.resultsDir, "0123456789abcdef.txt"), "saved result");
    const lookup = readOnlyLookup(ws.dir);
    expect(lookup.get(k)).toBe("archived text");
    expect(lookup.get("0123456789abcdef")).toBe("saved result");
    expect(lookup.get("../../x")).toBeUndefined();
    expect(readOnlyLookup(join(r, "absent")).get(k)).toBeUndefined();
    expect(existsSync(join(r, "absent"))).toBe(false);
  });

  it("rejects a session id that is a path", () => {
    expect(() => createWorkspace({ root: root(), sessionId: "../escape", env: {} })).toThrow(/invalid session id/);
  });

  it("an invalid archive size in the environment is an error naming the variable", () => {
    expect(() => createWorkspace({ root: root(), sessionId: "s", env: { SPOOL_ARCHIVE_MAX_MB: "lots" } })).toThrow(ConfigError);
    expect(() => createWorkspace({ root: root(), sessionId: "s", env: { SPOOL_ARCHIVE_MAX_MB: "lots" } })).toThrow(/SPOOL_ARCHIVE_MAX_MB/);
  });

  it("a root that cannot be created is a clear error", () => {
    const r = root();
    writeFileSync(join(r, "file"), "x");
    expect(() => createWorkspace({ root: join(r, "file"), sessionId: "s", env: {} })).toThrow(/cannot create the session workspace/);
  });
});
