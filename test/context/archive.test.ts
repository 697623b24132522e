import { spawn, execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ArchiveError, archiveKey, DiskArchive, extractKeys, formatMarker, isValidKey, MemoryArchive } from "../../src/context/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const dist = new URL("../../dist/context/index.js", import.meta.url).href;
afterAll(removeTempDirs);
const dir = (): string => tempDir("spool-archive-");
const bytes20 = (i: number) => `entry-${i}-`.padEnd(20, String.fromCharCode(97 + i));

describe("keys and markers", () => {
  it("a key is deterministic, 16 lowercase hex chars, and distinct for different content", () => {
    expect(archiveKey("hello")).toBe(archiveKey("hello"));
    expect(archiveKey("hello")).toMatch(/^[0-9a-f]{16}$/);
    expect(archiveKey("hello")).not.toBe(archiveKey("hello!"));
    expect(archiveKey("hello")).toBe("2cf24dba5fb0a30e");
  });

  it("extractKeys dedupes in first-seen order and finds nothing in plain text", () => {
    const a = "aaaaaaaaaaaaaaaa";
    const b = "bbbbbbbbbbbbbbbb";
    expect(extractKeys(`x ${formatMarker(b)} y ${formatMarker(a)} z ${formatMarker(b)}`)).toEqual([b, a]);
    expect(extractKeys("no markers here")).toEqual([]);
  });

  it("text with lone surrogates gets its own key, distinct from the U+FFFD look-alike", () => {
    expect(archiveKey("a\ud800")).not.toBe(archiveKey("a\ufffd"));
    expect(isValidKey(archiveKey("a\ud800"))).toBe(true);
  });
});

describe("MemoryArchive", () => {
  it("round-trips content and misses an unknown key", () => {
    const m = new MemoryArchive();
    const key = m.put("some content");
    expect(m.get(key)).toBe("some content");
    expect(m.get("0000000000000000")).toBeUndefined();
    expect(m.get("../../etc/passwd")).toBeUndefined();
  });

  it("evicts least recently used entries to stay within its budget (cap 80, five 20-byte puts)", () => {
    const m = new MemoryArchive({ maxBytes: 80 });
    const keys = [0, 1, 2, 3, 4].map((i) => m.put(bytes20(i)));
    expect(m.get(keys[0]!)).toBeUndefined();
    expect(m.get(keys[4]!)).toBe(bytes20(4));
    expect(m.stats().totalBytes).toBeLessThanOrEqual(80);
  });

  it("a get refreshes recency, so the entry read last survives eviction", () => {
    const m = new MemoryArchive({ maxBytes: 80 });
    const keys = [0, 1, 2, 3].map((i) => m.put(bytes20(i)));
    m.get(keys[0]!);
    m.put(bytes20(4));
    expect(m.get(keys[0]!)).toBe(bytes20(0));
    expect(m.get(keys[1]!)).toBeUndefined();
  });

  it("rejects an entry over a quarter of the budget (21 bytes against 80) without evicting anything", () => {
    const m = new MemoryArchive({ maxBytes: 80 });
    const kept = m.put(bytes20(1));
    expect(() => m.put("x".repeat(21))).toThrow(ArchiveError);
    try {
      m.put("y".repeat(21));
    } catch (err) {
      expect((err as ArchiveError).code).toBe("SPOOL_ARCHIVE_ENTRY_TOO_LARGE");
      expect((err as Error).message).toMatch(/quarter/);
    }
    expect(m.get(kept)).toBe(bytes20(1));
  });

  it("an unbounded archive accepts 1 MiB", () => {
    const m = new MemoryArchive();
    const big = "z".repeat(1 << 20);
    expect(m.get(m.put(big))).toBe(big);
  });
});

describe("DiskArchive", () => {
  it("returns byte-identical content, dedupes, and persists across reopen", () => {
    const d = dir();
    const text = "ünïcödé 😀\r\n\0 binary-ish \u2028 text";
    const a = new DiskArchive({ dir: d });
    const key = a.put(text);
    a.put(text);
    expect(a.stats().entries).toBe(1);
    expect(readdirSync(d)).toEqual([`${key}.ccr`]);
    const b = new DiskArchive({ dir: d });
    expect(b.get(key)).toBe(text);
  });

  it("a directory deleted under it (rm -rf of the session) is created again on the next put, its index starting empty", () => {
    const root = dir();
    const d = join(root, "session", "archive");
    const a = new DiskArchive({ dir: d, root: join(root, "session") });
    const old = a.put(bytes20(0));
    rmSync(join(root, "session"), { recursive: true, force: true });
    const key = a.put(bytes20(1));
    expect(readdirSync(d)).toEqual([`${key}.ccr`]);
    expect(a.get(key)).toBe(bytes20(1));
    expect(a.stats()).toMatchObject({ entries: 1, totalBytes: 20 });
    expect(a.get(old)).toBeUndefined();
    expect(a.put(bytes20(0))).toBe(old);
    expect(a.get(old)).toBe(bytes20(0));
  });

  it("stores text with lone surrogates exactly", () => {
    const d = dir();
    const text = "broken \ud83d pair and \udc00 low";
    const key = new DiskArchive({ dir: d }).put(text);
    expect(new DiskArchive({ dir: d }).get(key)).toBe(text);
  });

  it("evicts least recently used entries beyond its cap (80 bytes, five 20-byte puts), once they are not recent", () => {
    const d = dir();
    const first = new DiskArchive({ dir: d, maxBytes: 80 });
    const keys: string[] = [];
    for (let i = 0; i < 4; i++) {
      keys.push(first.put(bytes20(i)));
      // Used an hour ago and later, oldest first.
      const t = new Date(Date.now() - (60 - i) * 60_000);
      utimesSync(first.pathFor(keys[i]!), t, t);
    }
    const a = new DiskArchive({ dir: d, maxBytes: 80 });
    keys.push(a.put(bytes20(4)));
    expect(a.get(keys[4]!)).toBe(bytes20(4));
    expect(a.get(keys[0]!)).toBeUndefined();
    expect(a.get(keys[1]!)).toBe(bytes20(1));
    expect(a.stats().totalBytes).toBeLessThanOrEqual(80);
  });

  it("keeps every entry put in the last minutes even over its cap: one compact names them all", () => {
    const a = new DiskArchive({ dir: dir(), maxBytes: 80 });
    const keys = [0, 1, 2, 3, 4, 5].map((i) => a.put(bytes20(i)));
    for (const [i, key] of keys.entries()) expect(a.get(key)).toBe(bytes20(i));
  });

  it("reads an archive given by a relative directory", () => {
    const d = dir();
    const key = new DiskArchive({ dir: d }).put("relative");
    const cwd = process.cwd();
    try {
      process.chdir(join(d, ".."));
      expect(new DiskArchive({ dir: basename(d) }).get(key)).toBe("relative");
    } finally {
      process.chdir(cwd);
    }
  });

  it("an oversized put is refused and evicts nothing", () => {
    const d = dir();
    const a = new DiskArchive({ dir: d, maxBytes: 1_000 });
    const kept = a.put("small entry");
    expect(() => a.put("q".repeat(2_000))).toThrow(/quarter/);
    expect(a.get(kept)).toBe("small entry");
  });

  it("expires entries older than the TTL when reopened (mtime backdated 2h, ttl 1h)", () => {
    const d = dir();
    const a = new DiskArchive({ dir: d });
    const old = a.put("old");
    const fresh = a.put("fresh");
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(a.pathFor(old), twoHoursAgo, twoHoursAgo);
    const b = new DiskArchive({ dir: d, ttlMs: 3_600_000 });
    expect(b.get(old)).toBeUndefined();
    expect(existsSync(b.pathFor(old))).toBe(false);
    expect(b.get(fresh)).toBe("fresh");
  });

  it("prune removes stale entries and reports what it freed", () => {
    const d = dir();
    const a = new DiskArchive({ dir: d, ttlMs: 3_600_000 });
    const old = a.put("stale entry");
    a.put("live");
    const past = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(a.pathFor(old), past, past);
    const stats = new DiskArchive({ dir: d, ttlMs: 0 }).stats();
    expect(stats.oldestAgeMs).toBeGreaterThan(3_600_000 - 1);
    expect(stats.entries).toBe(2);
    expect(stats.staleEntries).toBe(0);

    expect(a.prune()).toEqual({ removed: 1, bytesFreed: "stale entry".length, remainingEntries: 1, remainingBytes: 4 });
  });

  it("stats count entries that outlived the TTL before a sweep removes them", async () => {
    const a = new DiskArchive({ dir: dir(), ttlMs: 20 });
    a.put("short-lived");
    expect(a.stats().staleEntries).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 60)); // on purpose: the 20 ms TTL expires
    expect(a.stats()).toMatchObject({ staleEntries: 1, ttlMs: 20, entries: 1 });
    expect(a.prune().removed).toBe(1);
  });

  it("a get on a vanished file is a clean miss", () => {
    const d = dir();
    const a = new DiskArchive({ dir: d });
    const key = a.put("gone soon");
    unlinkSync(a.pathFor(key));
    expect(a.get(key)).toBeUndefined();
    expect(a.stats().entries).toBe(0);
  });

  it("an archive directory that cannot be created is a clear error", () => {
    const d = dir();
    writeFileSync(join(d, "file"), "x");
    expect(() => new DiskArchive({ dir: join(d, "file", "archive") })).toThrow(/cannot create the archive directory/);
  });

  it("never leaves a temp file after a put, and removes stale temp files of dead writers on open", () => {
    const d = dir();
    const a = new DiskArchive({ dir: d });
    a.put("x".repeat(10_000));
    expect(readdirSync(d).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    const stale = join(d, "0123456789abcdef.deadbeef.tmp");
    writeFileSync(stale, "partial");
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(stale, old, old);
    new DiskArchive({ dir: d });
    expect(existsSync(stale)).toBe(false);
  });
});

describe("DiskArchive across processes", () => {
  const childPut = (d: string, text: string): string =>
    execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { DiskArchive } from ${JSON.stringify(dist)}; process.stdout.write(new DiskArchive({ dir: process.argv[1] }).put(process.argv[2]));`,
        d,
        text,
      ],
      { encoding: "utf8" },
    );

  it("an entry written by another process is found and adopted into this one's accounting", () => {
    const d = dir();
    const a = new DiskArchive({ dir: d });
    expect(a.stats().entries).toBe(0);
    const key = childPut(d, "written by a child process");
    expect(key).toBe(archiveKey("written by a child process"));
    expect(a.get(key)).toBe("written by a child process");
    expect(a.stats().entries).toBe(1);
  });

  it("prune adopts additions and reconciles removals made outside the process", () => {
    const d = dir();
    const a = new DiskArchive({ dir: d });
    const mine = a.put("mine");
    childPut(d, "theirs 1");
    childPut(d, "theirs 2");
    rmSync(a.pathFor(mine));
    const result = a.prune();
    expect(result.remainingEntries).toBe(2);
    expect(a.stats().totalBytes).toBe("theirs 1".length + "theirs 2".length);
  });

  it("a writer killed with SIGKILL mid-write leaves only whole entries behind", async () => {
    const d = dir();
    const script = `
      import { DiskArchive } from ${JSON.stringify(dist)};
      const a = new DiskArchive({ dir: process.argv[1], maxBytes: 0 });
      for (let i = 0; ; i++) {
        a.put(String(i).padStart(8, "0") + ":" + "payload line of a big archived tool result\\n".repeat(40000));
        if (i === 2) process.stdout.write("ready\\n");
      }`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script, d], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const reopened = new DiskArchive({ dir: d, maxBytes: 0 });
    const entries = readdirSync(d).filter((n) => n.endsWith(".ccr"));
    expect(entries.length).toBeGreaterThanOrEqual(3);
    for (const name of entries) {
      const key = name.slice(0, -4);
      const content = reopened.get(key)!;
      expect(archiveKey(content)).toBe(key);
      expect(statSync(join(d, name)).size).toBe(Buffer.byteLength(content));
    }
    expect(reopened.stats().entries).toBe(entries.length);
    expect(readFileSync(join(d, entries[0]!), "utf8")).toContain("payload line");
  });
});
