// `spool run` through the built binary, in a scratch working directory.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const bin = new URL("../../dist/cli/main.js", import.meta.url).pathname;
const cwd = mkdtempSync(join(tmpdir(), "spool-run-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function spool(args: string[]) {
  const started = Date.now();
  const r = spawnSync("node", [bin, ...args], { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

describe("spool run", () => {
  it("--json on seq 1 200000: 200000 total lines, the last 2000 kept, a spill file holding all 200000", () => {
    const r = spool(["run", "--json", "-q", "--", "sh", "-c", "seq 1 200000"]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as {
      exitCode: number;
      text: string;
      truncation: { totalLines: number; outputLines: number; truncated: boolean };
      spillPath: string;
      timedOut: boolean;
    };
    expect(out.exitCode).toBe(0);
    expect(out.truncation.totalLines).toBe(200000);
    expect(out.truncation.outputLines).toBe(2000);
    // text is what the model sees: the kept window, then the footer.
    expect(out.text.split("\n").slice(0, 2)).toEqual(["198001", "198002"]);
    expect(out.text).toMatch(/\n200000\n\n\[Showing the last 2000 of 200000 lines/);
    expect(out.spillPath).toMatch(/^\.spool\/sessions\/[^/]+\/spill\/call-1\.log$/);
    const spilled = readFileSync(isAbsolute(out.spillPath) ? out.spillPath : join(cwd, out.spillPath), "utf8");
    expect(spilled.split("\n").length - 1).toBe(200000);
    expect(spilled.startsWith("1\n2\n3\n")).toBe(true);
  });

  it("exits with the command's status: false exits 1", () => {
    const r = spool(["run", "--", "false"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("[Command exited with code 1]");
  });

  it("--timeout 1 on sleep 30 returns within 3 s and says it timed out", () => {
    const r = spool(["run", "--timeout", "1", "--", "sleep", "30"]);
    expect(r.ms).toBeLessThan(3000);
    expect(r.stdout).toContain("timed out after 1 seconds");
    expect(r.status).toBe(143);
  });

  it("the model-facing result says loudly what was kept and where the rest is", () => {
    const r = spool(["run", "-q", "--max-lines", "10", "--", "seq 1 15000"]);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => String(14991 + i)));
    expect(r.stdout).toMatch(/\[Showing the last 10 of 15000 lines \(60 B of 77\.0 KB\)\. Full output: \/\S+\/\.spool\/sessions\/[^/]+\/spill\/call-1\.log\]/);
    expect(r.stdout).toMatch(/\[Command exited with code 0\]\nSession: \.spool\/sessions\/[^/\n]+\n$/);
  });

  it("--head keeps the start", () => {
    const r = spool(["run", "-q", "--head", "--max-lines", "3", "--json", "--", "seq 1 100"]);
    expect((JSON.parse(r.stdout) as { text: string }).text).toMatch(/^1\n2\n3\n\n\[Showing the first 3 of 100 lines /);
  });

  it("a non-terminal stderr gets the output appended live; stdout gets only the result", () => {
    const r = spool(["run", "--", "echo live-line"]);
    expect(r.stderr).toBe("live-line\n");
    expect(r.stdout).toMatch(/^live-line\n\n\[Command exited with code 0\]\nSession: \.spool\/sessions\/[^/\n]+\n$/);
  });

  it("a terminal gets a live region with a status line that is erased at the end", () => {
    const r = spawnSync(
      "script",
      ["-qfc", `stty rows 40 cols 100; node ${bin} run -- sh -c 'echo hello; sleep 1.3; echo bye'`, "/dev/null"],
      { cwd, encoding: "utf8" },
    );
    expect(r.stdout).toMatch(/⏵ 1\.\ds · 6 B · 1 line/);
    expect(r.stdout).toContain("\x1b[2K"); // the region erases what it drew
    expect(r.stdout.replace(/\r/g, "")).toMatch(/hello\nbye\n\n\[Command exited with code 0\]\nSession: /);
  });

  it("Ctrl-C (SIGINT to spool) aborts the command's whole process group and still prints the result", async () => {
    const { spawn } = await import("node:child_process");
    const child = spawn("node", [bin, "run", "-q", "--", "echo started; sleep 30 & wait"], { cwd });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    await new Promise((r) => setTimeout(r, 800));
    const started = Date.now();
    child.kill("SIGINT");
    const status = await new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(status).toBe(143);
    expect(stdout).toMatch(/^started\n[\s\S]*\[Command aborted; exit code 143\]\n/);
  });

  it("usage errors exit 2 and say what was wrong", () => {
    const noCommand = spool(["run"]);
    expect(noCommand.status).toBe(2);
    expect(noCommand.stderr).toContain("no command given");
    const badNumber = spool(["run", "--max-lines", "ten", "--", "true"]);
    expect(badNumber.status).toBe(2);
    expect(badNumber.stderr).toContain('--max-lines needs a positive whole number, got "ten"');
  });

  it("binary output is reported, not printed", () => {
    const r = spool(["run", "-q", "--", "head -c 10000 /dev/urandom"]);
    expect(r.stdout).toMatch(/^\[Binary output \(9\.8 KB\) not shown\. Full output: \/\S+\/spill\/call-1\.log\]/);
  });
});
