import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const bin = new URL("../../dist/cli/main.js", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

describe("spool CLI basics (built binary)", () => {
  it("--version prints the package version", () => {
    expect(execFileSync("node", [bin, "--version"], { encoding: "utf8" }).trim()).toBe(pkg.version);
  });
  it("--help lists usage and options", () => {
    const out = execFileSync("node", [bin, "--help"], { encoding: "utf8" });
    expect(out).toContain("Usage: spool <command>");
    expect(out).toContain("--version");
  });
  it("an unknown command exits 2 with a hint", () => {
    let status = 0;
    let stderr = "";
    try {
      execFileSync("node", [bin, "frobnicate"], { encoding: "utf8", stdio: "pipe" });
    } catch (err) {
      const e = err as { status: number; stderr: string };
      status = e.status;
      stderr = e.stderr;
    }
    expect(status).toBe(2);
    expect(stderr).toContain('unknown command "frobnicate"');
    expect(stderr).toContain("spool --help");
  });
});
