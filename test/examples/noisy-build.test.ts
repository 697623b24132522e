// The bundled example is what a newcomer sees first (README's `npm start`): it must look like a real
// noisy build and exercise what spool cleans — ANSI colours, \r progress frames, a late compiler error.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { OutputCapture, resolveLimits } from "../../src/capture/index.js";

const ERROR_LINE = "src/net/socket.c:214:9: error: ‘struct sock_opts’ has no member named ‘linger_ms’; did you mean ‘linger_s’?";

function run(env: Record<string, string>): Promise<{ out: Buffer; code: number | null; ms: number }> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const child = spawn(process.execPath, ["examples/noisy-build.mjs"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ out: Buffer.concat(chunks), code, ms: Date.now() - start }));
  });
}

describe("examples/noisy-build.mjs", () => {
  it("writes ~256 KB of varied, coloured build output with \\r progress bars and exits 1 after a compiler error near the end", async () => {
    const { out, code } = await run({ NOISY_BUILD_SECONDS: "0.5" });
    expect(code).toBe(1);
    expect(out.length).toBeGreaterThan(240 * 1024);
    expect(out.length).toBeLessThan(272 * 1024);
    const raw = out.toString("utf8");
    expect(raw).toMatch(/\x1b\[[0-9;]*m/);
    expect(raw).toMatch(/\r {2}zlib-1\.3\.1\.tar\.gz +\[/);

    // What spool shows after cleaning: last frames only, no escapes, the error among the last lines.
    const capture = new OutputCapture(resolveLimits({ maxBytes: 1024 * 1024, maxLines: 100_000 }));
    capture.push(out);
    capture.end();
    const lines = capture.view().text.split("\n");
    expect(lines.join("\n")).not.toMatch(/[\x1b\r]/);
    const bars = lines.filter((l) => /\] +\d+%/.test(l));
    expect(bars.length).toBe(6);
    for (const b of bars) expect(b).toMatch(/\[#{20}\] 100%/);
    // One bar finishes shortly before the error, so the default 50 KB tail window still shows it.
    const lastBar = lines.lastIndexOf(bars[bars.length - 1]!);
    expect(Buffer.byteLength(lines.slice(lastBar).join("\n"))).toBeLessThan(40 * 1024);
    const errorAt = lines.indexOf(ERROR_LINE);
    expect(errorAt).toBeGreaterThan(lines.length - 20);
    expect(lines.filter((l) => l.includes("warning:")).length).toBeGreaterThan(30);
    // Varied, not one line repeated: almost every non-excerpt line is unique.
    const prose = lines.filter((l) => l.trim() && !/^\s+\|/.test(l));
    expect(new Set(prose).size / prose.length).toBeGreaterThan(0.95);
  });

  it("takes about NOISY_BUILD_SECONDS to play, so a viewer can watch it grow", async () => {
    const { ms, code } = await run({ NOISY_BUILD_SECONDS: "2" });
    expect(code).toBe(1);
    expect(ms).toBeGreaterThan(1800);
    expect(ms).toBeLessThan(6000);
  });

  it("is deterministic for a seed and differs across seeds", async () => {
    const [a, b] = await Promise.all([run({ NOISY_BUILD_SECONDS: "0.2", NOISY_BUILD_SEED: "1" }), run({ NOISY_BUILD_SECONDS: "0.2", NOISY_BUILD_SEED: "2" })]);
    expect(a.out.equals(b.out)).toBe(false);
    const again = await run({ NOISY_BUILD_SECONDS: "0.2", NOISY_BUILD_SEED: "1" });
    expect(again.out.equals(a.out)).toBe(true);
  });
});
