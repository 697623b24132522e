import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  archiveKey,
  ConfigError,
  createWorkspace,
  prepareHistory,
  readOnlyLookup,
  recall,
  textOf,
  WorkspaceError,
  type Message,
  type WorkspaceOptions,
} from "../../src/context/index.js";
import { A, lines, T, U } from "./helpers.js";
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
    const saved = archiveKey("saved result");
    writeFileSync(join(ws.resultsDir, `${saved}.txt`), "saved result");
    expect(ws.get(k)).toBe("archived");
    expect(ws.get(saved)).toBe("saved result");
    expect(ws.get("../../etc/passwd")).toBeUndefined();
  });

  it("a result file that no longer holds the text it was saved under is refused, like an archive entry", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s", env: {} });
    writeFileSync(join(ws.resultsDir, "0123456789abcdef.txt"), "edited since");
    for (const get of [() => ws.get("0123456789abcdef"), () => readOnlyLookup(ws.dir).get("0123456789abcdef")]) {
      expect(get).toThrow(expect.objectContaining({ code: "SPOOL_ARCHIVE_DAMAGED" }));
    }
  });

  it("a read-only lookup finds archived and saved texts without creating anything", () => {
    const r = root();
    const ws = createWorkspace({ root: r, sessionId: "s", env: {} });
    const k = ws.archive.put("archived text");
    const saved = archiveKey("saved result");
    writeFileSync(join(ws.resultsDir, `${saved}.txt`), "saved result");
    const lookup = readOnlyLookup(ws.dir);
    expect(lookup.get(k)).toBe("archived text");
    expect(lookup.get(saved)).toBe("saved result");
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

describe("results/ is bounded by the archive limits", () => {
  // Five results of 6000 chars, each cut by a 5500-char result limit into a preview naming results/KEY.txt;
  // a 24000-byte cap holds four of them.
  const limits = { archiveMaxBytes: 24_000, archiveTtlMs: 24 * 3_600_000 } satisfies WorkspaceOptions;
  const texts = ["a", "b", "c", "d", "e"].map((label, i) => lines(6_000, i + 1, label));
  const [a, b, c, d, e] = texts.map((t) => archiveKey(t)) as [string, string, string, string, string];
  const turn = (id: string, text: string): Message[] => [U(`step ${id}`), A(id), T(id, text)];
  const pass = (ws: ReturnType<typeof createWorkspace>, history: Message[]) =>
    prepareHistory(history, { workspace: ws, env: {}, config: { maxResultChars: 5_500 }, absolutePaths: true });
  const files = (ws: ReturnType<typeof createWorkspace>): string[] => readdirSync(ws.resultsDir).sort();
  const usedAgo = (ws: ReturnType<typeof createWorkspace>, key: string, minutes: number): void => {
    const t = new Date(Date.now() - minutes * 60_000);
    utimesSync(join(ws.resultsDir, `${key}.txt`), t, t);
  };
  /** Four results saved by an earlier run, used 40 (d), 30 (a), 29 (b) and 28 (c) minutes ago. */
  function earlierRun(): string {
    const dir = join(root(), "s");
    const ws = createWorkspace({ dir, env: {}, ...limits });
    pass(
      ws,
      texts.slice(0, 4).flatMap((t, i) => turn(`c${i}`, t)),
    );
    expect(files(ws)).toEqual([a, b, c, d].map((k) => `${k}.txt`).sort());
    for (const [key, minutes] of [
      [d, 40],
      [a, 30],
      [b, 29],
      [c, 28],
    ] as const)
      usedAgo(ws, key, minutes);
    return dir;
  }
  /** Every results/ file a preview or stub of the prompt names exists. */
  function namedFilesExist(prompt: readonly Message[], ws: ReturnType<typeof createWorkspace>): number {
    const named = prompt.flatMap((m) => [...textOf(m).matchAll(/\/results\/([0-9a-f]{16})\.txt/g)].map((x) => x[1]!));
    for (const key of named) expect(existsSync(join(ws.resultsDir, `${key}.txt`)), `results/${key}.txt named by the prompt`).toBe(true);
    return named.length;
  }

  for (const order of ["the new result first", "the old result first"] as const) {
    it(`a new result over the cap evicts the least recently used file, never one the same prompt names (${order})`, () => {
      const ws = createWorkspace({ dir: earlierRun(), env: {}, ...limits });
      // d, used longest ago, is still in this history; a, b and c are not
      const history =
        order === "the new result first" ? [...turn("n", texts[4]!), ...turn("o", texts[3]!)] : [...turn("o", texts[3]!), ...turn("n", texts[4]!)];
      const { messages, report } = pass(ws, history);
      expect(report.budget.resultsTruncated).toBe(2);
      expect(namedFilesExist(messages, ws)).toBe(2);
      expect(files(ws)).toEqual([b, c, d, e].map((k) => `${k}.txt`).sort());
      expect(ws.results.stats().totalBytes).toBeLessThanOrEqual(limits.archiveMaxBytes);
      // the evicted one: a clear miss, not a crash
      expect(() => recall(a, ws)).toThrow(/not found \(it may have expired or been evicted/);
      expect(ws.get(d)).toBe(texts[3]);
    });
  }

  it("results used in the last ten minutes stay even over the cap", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s", env: {}, ...limits });
    const { messages } = pass(
      ws,
      texts.flatMap((t, i) => turn(`c${i}`, t)),
    );
    expect(files(ws)).toHaveLength(5);
    expect(namedFilesExist(messages, ws)).toBe(5);
  });

  it("a result over a quarter of the cap is still saved and cut (refused, it would reach the model whole)", () => {
    const ws = createWorkspace({ root: root(), sessionId: "s", env: {}, archiveMaxBytes: 20_000 });
    const big = lines(15_000, 9, "big");
    const { messages, report } = pass(ws, turn("c0", big));
    expect(report.budget.errors).toEqual([]);
    expect(textOf(messages[2]!).length).toBeLessThan(6_000);
    expect(namedFilesExist(messages, ws)).toBe(1);
    expect(ws.get(archiveKey(big))).toBe(big);
  });

  it("a workspace opened again removes the least recently used results beyond the cap, and results past the TTL", () => {
    const dir = earlierRun();
    const ws = createWorkspace({ dir, env: {}, ...limits });
    writeFileSync(join(ws.resultsDir, `${e}.txt`), texts[4]!);
    usedAgo(ws, e, 20);
    // five files of 6000 bytes against 24000: d, used longest ago, goes
    expect(files(createWorkspace({ dir, env: {}, ...limits }))).toEqual([a, b, c, e].map((k) => `${k}.txt`).sort());
    usedAgo(ws, c, 25 * 60);
    expect(files(createWorkspace({ dir, env: {}, ...limits }))).toEqual([a, b, e].map((k) => `${k}.txt`).sort());
  });
});
