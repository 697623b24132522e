// Command-line byte sizes: a whole number of bytes or a number with K, M, G, T (each 1024 times the
// last, as spool prints sizes), for --max-bytes, --max-spill and --min-free of `spool run` and
// `spool mcp`. They took plain numbers only: `--max-spill 10M` was refused.
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { parseSize } from "../../src/cli/parse-size.js";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

describe("parseSize", () => {
  it("reads bytes and K, M, G, T in powers of 1024, written K, KB or KiB in either case", () => {
    expect(parseSize("0")).toBe(0);
    expect(parseSize("51200")).toBe(51_200);
    expect(parseSize("512B")).toBe(512);
    expect(parseSize("64K")).toBe(65_536);
    expect(parseSize("64k")).toBe(65_536);
    expect(parseSize("64KB")).toBe(65_536);
    expect(parseSize("64KiB")).toBe(65_536);
    expect(parseSize("512MB")).toBe(512 * 1024 ** 2);
    expect(parseSize("10M")).toBe(10 * 1024 ** 2);
    expect(parseSize("1.5GiB")).toBe(1.5 * 1024 ** 3);
    expect(parseSize("2T")).toBe(2 * 1024 ** 4);
    expect(parseSize("1.3K")).toBe(1331);
    expect(parseSize(".5K")).toBe(512);
  });

  it("refuses what is not a size", () => {
    for (const text of ["", " 5", "5 ", "-1", "+1", "0x10", "1e3", "5 M", "5X", "5Mi", "5MBB", "1.5B", "Infinity", "NaN", ".", "K", "٣"]) {
      expect(parseSize(text), text).toBeUndefined();
    }
  });

  it("never throws, and gives a whole number of bytes or nothing for any string", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (text) => {
        const n = parseSize(text);
        expect(n === undefined || (Number.isInteger(n) && n >= 0)).toBe(true);
      }),
    );
  });
});

describe("spool run / spool mcp size options", () => {
  it("take 64K, 10M and 1.5GiB", () => {
    const cwd = tempDir("spool-size-");
    const r = runSpool(["run", "--root", cwd, "-q", "--max-bytes", "1K", "--max-spill", "10M", "--min-free", "1.5GiB", "--", "seq 1 2000"], { cwd });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const [kept] = r.stdout.split("\n\n[Showing the last ");
    expect(Buffer.byteLength(`${kept}\n`)).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(`${kept}\n`)).toBeGreaterThan(1000);
    expect(kept).toMatch(/\n2000$/);
  });

  it("refuse a bad size with one line naming the flag, exit 2, before any session", () => {
    const cwd = tempDir("spool-size-");
    for (const [command, flag, value] of [
      ["run", "--max-spill", "10Q"],
      ["run", "--max-bytes", "65M"],
      ["run", "--min-free", "-1"],
      ["mcp", "--max-spill", "lots"],
      ["mcp", "--min-free", "1e9"],
    ] as const) {
      const r = runSpool([command, "--root", cwd, `${flag}=${value}`, ...(command === "run" ? ["--", "true"] : [])], { cwd, input: "" });
      expect(r.status, `${command} ${flag} ${value}`).toBe(2);
      expect(r.stderr.split("\n")[0]).toMatch(new RegExp(`^spool ${command}: ${flag} must be a size .*, got "${value}"$`));
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(runSpool(["sessions", "--root", cwd, "--json"], { cwd }).stdout.trim()).toBe("[]");
  });
});
