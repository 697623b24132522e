// writeFileAtomic, the one atomic write (headers, archive entries, saved results, the CLI's code
// cache): whole or nothing under SIGKILL at any moment, exclusive temp files that never clobber one
// another, the temp file gone after a failure, and with `durable` the file and its directory synced.
// replaceFileForAppend (a sidecar rewritten compactly): the same, its data always synced, and the
// descriptor it returns appends to the new file.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaceFileForAppend } from "../../src/store/atomic-write.js";
import { writeFileAtomic } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";
import { compileStoreForChildren } from "./helpers/compile-store.js";

const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures/atomic-write-child.mjs");
const LONG = process.env.SPOOL_LONG === "1";
let storeModule = "";
beforeAll(() => {
  storeModule = compileStoreForChildren();
});
afterAll(removeTempDirs);

/** The version a file holds, or a description of what is wrong with it. */
function check(text: string): number | string {
  const m = /^v(\d+) (\d+)\n/.exec(text);
  if (m === null) return `bad header: ${JSON.stringify(text.slice(0, 40))}`;
  const body = text.slice(m[0].length);
  if (body.length !== Number(m[2])) return `v${m[1]} cut at ${body.length} of ${m[2]}`;
  if (body !== `${m[1]};`.repeat(body.length / (m[1]!.length + 1))) return `v${m[1]} body damaged`;
  return Number(m[1]);
}

describe("writeFileAtomic", () => {
  it("writes the file whole with mode 0600 and leaves no temp file", () => {
    const dir = tempDir();
    const path = join(dir, "entry");
    writeFileAtomic(path, "first");
    writeFileAtomic(path, Buffer.from("second, longer"));
    expect(readFileSync(path, "utf8")).toBe("second, longer");
    expect(spawnSync("stat", ["-c", "%a", path], { encoding: "utf8" }).stdout.trim()).toBe("600");
    expect(readdirSync(dir)).toEqual(["entry"]);
  });

  it("leaves the old file and no temp file when the write fails", () => {
    const dir = tempDir();
    const path = join(dir, "entry");
    writeFileAtomic(path, "kept");
    // A directory where the file should go: the rename fails after the temp file was written.
    const blocked = join(dir, "blocked");
    mkdirSync(join(blocked, "inside"), { recursive: true });
    expect(() => writeFileAtomic(blocked, "x")).toThrow();
    expect(readdirSync(dir).sort()).toEqual(["blocked", "entry"]);
    expect(() => writeFileAtomic(join(dir, "missing", "entry"), "x")).toThrow(/ENOENT/);
    expect(readFileSync(path, "utf8")).toBe("kept");
  });

  it("takes another temp name when one is held, never writing through it", () => {
    const dir = tempDir();
    const path = join(dir, "entry");
    // The temp names this process's next writes would take (a counter that has not gone far in this
    // file), held by someone else.
    const held = Array.from({ length: 60 }, (_, n) => `${path}.${process.pid.toString(36)}-${n.toString(36)}.tmp`);
    for (const h of held) writeFileSync(h, "someone else's");
    writeFileAtomic(path, "mine");
    expect(readFileSync(path, "utf8")).toBe("mine");
    for (const h of held) expect(readFileSync(h, "utf8")).toBe("someone else's");
    expect(readdirSync(dir).length).toBe(held.length + 1);
  });

  it("syncs the file and then its directory when durable", () => {
    const hasStrace = spawnSync("strace", ["-f", "-e", "trace=none", "true"]).status === 0;
    if (!hasStrace) return;
    const dir = tempDir();
    const path = join(dir, "durable");
    const script = `const { writeFileAtomic } = await import(${JSON.stringify(storeModule)}); writeFileAtomic(${JSON.stringify(path)}, "x", { durable: true }); writeFileAtomic(${JSON.stringify(`${path}-lax`)}, "y");`;
    const r = spawnSync("strace", ["-f", "-y", "-qq", "-e", "trace=fsync,rename", process.execPath, "--input-type=module", "-e", script], { encoding: "utf8" });
    const lines = r.stderr.split("\n").filter((l) => /fsync|rename/.test(l));
    const fileSync = lines.findIndex((l) => /fsync\(\d+<[^>]*durable\.[^>]*\.tmp>/.test(l));
    const rename = lines.findIndex((l) => l.includes("rename(") && l.includes(`"${path}"`));
    const dirSync = lines.findIndex((l) => new RegExp(`fsync\\(\\d+<${dir}>`).test(l));
    expect(fileSync, lines.join("\n")).toBeGreaterThanOrEqual(0);
    expect(rename).toBeGreaterThan(fileSync);
    expect(dirSync).toBeGreaterThan(rename);
    expect(lines.filter((l) => l.includes("-lax") && l.includes("fsync"))).toEqual([]);
  });

  it("is whole or absent under SIGKILL at any moment", async () => {
    const kills = LONG ? 200 : 12;
    for (let k = 0; k < kills; k++) {
      const dir = tempDir();
      const path = join(dir, "file");
      const p = spawn(process.execPath, [child, storeModule, path, k % 3 === 0 ? "1" : "0"], { stdio: ["ignore", "pipe", "inherit"] });
      let acked = 0;
      let out = "";
      p.stdout.on("data", (d: Buffer) => {
        out += d;
        const lines = out.split("\n");
        out = lines.pop()!;
        if (lines.length > 0) acked = Number(lines.at(-1));
      });
      const exited = new Promise((resolve) => p.on("exit", resolve));
      // Somewhere between before the first write and a few dozen versions in.
      await new Promise((r) => setTimeout(r, 30 + Math.floor(Math.random() * 120)));
      p.kill("SIGKILL");
      await exited;
      const names = readdirSync(dir);
      expect(
        names.filter((n) => n !== "file" && !n.endsWith(".tmp")),
        names.join(),
      ).toEqual([]);
      expect(names.filter((n) => n.endsWith(".tmp")).length).toBeLessThanOrEqual(1);
      if (!existsSync(path)) {
        expect(acked).toBe(0);
        continue;
      }
      const got = check(readFileSync(path, "utf8"));
      expect(typeof got, String(got)).toBe("number");
      // The version acknowledged last is there, or the one after it (killed after its rename, before its ack).
      expect([acked, acked + 1]).toContain(got);
    }
  });
});

describe("replaceFileForAppend", () => {
  it("publishes the file whole and returns a descriptor that appends to it, not to the file it replaced", () => {
    const dir = tempDir();
    const path = join(dir, "side");
    writeFileSync(path, "old\n");
    const oldFd = openSync(path, "a");
    const fd = replaceFileForAppend(path, "new\n");
    writeSync(fd, "more\n");
    writeSync(oldFd, "into the replaced file\n");
    closeSync(fd);
    closeSync(oldFd);
    expect(readFileSync(path, "utf8")).toBe("new\nmore\n");
    expect(readdirSync(dir)).toEqual(["side"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("leaves the old file and no temp file when it fails", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "kept"), "kept");
    const blocked = join(dir, "blocked");
    mkdirSync(join(blocked, "inside"), { recursive: true });
    expect(() => replaceFileForAppend(blocked, "x")).toThrow();
    expect(readdirSync(dir).sort()).toEqual(["blocked", "kept"]);
  });

  it("syncs the data before the rename whatever the durability, and leaves the directory to the caller", () => {
    const hasStrace = spawnSync("strace", ["-f", "-e", "trace=none", "true"]).status === 0;
    if (!hasStrace) return;
    const dir = tempDir();
    const path = join(dir, "side");
    const module = join(dirname(storeModule), "atomic-write.js");
    const script = `const { replaceFileForAppend } = await import(${JSON.stringify(module)}); replaceFileForAppend(${JSON.stringify(path)}, "x");`;
    const r = spawnSync("strace", ["-f", "-y", "-qq", "-e", "trace=fsync,rename", process.execPath, "--input-type=module", "-e", script], { encoding: "utf8" });
    const lines = r.stderr.split("\n").filter((l) => /fsync|rename/.test(l));
    const fileSync = lines.findIndex((l) => /fsync\(\d+<[^>]*side\.[^>]*\.tmp>/.test(l));
    const rename = lines.findIndex((l) => l.includes("rename(") && l.includes(`"${path}"`));
    expect(fileSync, lines.join("\n")).toBeGreaterThanOrEqual(0);
    expect(rename).toBeGreaterThan(fileSync);
    expect(lines.filter((l) => new RegExp(`fsync\\(\\d+<${dir}>`).test(l))).toEqual([]);
  });
});
