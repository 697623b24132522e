// End to end: the built `spool run --serve` on the bundled noisy build, watched in Debian's chromium.
// Needs `npm run build` first (dist/ and web/dist/), as `npm test` after the build does in CI.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runSpool, startServing, stopStarted } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { openPage, outputScroll, outputShows, outputText, type OpenedPage } from "./browser.js";

const example = new URL("../../examples/noisy-build.mjs", import.meta.url).pathname;
const ERROR_LINE = "src/net/socket.c:214:9: error: ‘struct sock_opts’ has no member named ‘linger_ms’; did you mean ‘linger_s’?";

// Pages close first, then the spool processes stop; the directories go after the last test.
const pages: OpenedPage[] = [];
afterEach(async () => {
  for (const p of pages.splice(0)) await p.close();
  await stopStarted();
});
afterAll(removeTempDirs);

function runServe(seconds: number) {
  return startServing(["run", "--serve", "--", process.execPath, example], {
    cwd: tempDir("spool-viewer-run-"),
    env: { ...process.env, NOISY_BUILD_SECONDS: String(seconds) },
  });
}

describe("viewer on spool run --serve", () => {
  it("shows the noisy build growing live, its progress bars as last frames, the error line and the exit code", async () => {
    const run = await runServe(6);
    const opened: OpenedPage = await openPage(run.url);
    pages.push(opened);
    const { page, errors } = opened;

    await expect.poll(() => page.textContent("#status-state"), { timeout: 10_000 }).toBe("running");
    await expect.poll(() => outputText(page).then((t) => t.length), { timeout: 10_000 }).toBeGreaterThan(0);
    const early = (await outputText(page)).length;
    await expect.poll(() => outputText(page).then((t) => t.length), { timeout: 10_000 }).toBeGreaterThan(early);
    expect(await page.textContent("#status-state")).toBe("running");
    // While it runs, a progress bar is one frame on one line (its latest), never a run of frames.
    const samples: string[] = [];
    while ((await page.textContent("#status-state")) === "running") {
      samples.push(await outputText(page));
      await new Promise((r) => setTimeout(r, 150)); // the sampling interval, on purpose
    }
    const liveBars = samples.flatMap((t) => t.split("\n").filter((l) => /\] +\d+%/.test(l)));
    expect(liveBars.length).toBeGreaterThan(0);
    for (const b of liveBars) expect(b).toMatch(/^ {2}[\w./:-]+(?: [\w./:-]+)* +\[#{0,20} {0,20}\] +\d{1,3}%(?: {2}[\d.]+\/[\d.]+ \w+)?$/);
    expect(samples.length).toBeGreaterThan(5);

    await expect.poll(() => page.textContent("#status-state"), { timeout: 30_000 }).toBe("failed · exit 1");
    const text = await outputText(page);
    expect(text).not.toMatch(/[\x1b\r]/);
    // Every progress bar that is still in the window shows only its final frame.
    const bars = text.split("\n").filter((l) => /\] +\d+%/.test(l));
    expect(bars.length).toBeGreaterThan(0);
    for (const b of bars) expect(b).toMatch(/\[#{20}\] 100%/);
    expect(text).toContain(ERROR_LINE);
    expect(await page.getAttribute("#output-scroll", "data-following")).toBe("true");
    await expect.poll(() => outputScroll(page), { timeout: 5000 }).toMatchObject({ atBottom: true });
    await expect.poll(() => outputShows(page, ERROR_LINE), { timeout: 5000 }).toBe(true);
    expect(await page.textContent("#status-truncated")).toMatch(/^truncated: yes/);
    expect(await page.isVisible("#status-spill")).toBe(true);
    // The spill link serves the full, lossless output.
    const href = await page.getAttribute("#status-spill", "href");
    const spill = await page.evaluate(async (h) => (await fetch(h!)).text(), href);
    expect(spill.length).toBeGreaterThan(200 * 1024);
    await expect.poll(() => page.textContent("#transcript")).toContain(ERROR_LINE);

    await mkdir("test-artifacts", { recursive: true });
    await page.screenshot({ path: join("test-artifacts", "viewer-run.png") });
    expect(errors).toEqual([]);
    expect(run.child.exitCode).toBeNull(); // still serving after the command ended, until Ctrl-C
  }, 60_000);

  it("replays a finished run from its log under spool serve: exit code, the error line in view, the transcript", async () => {
    const dir = tempDir("spool-viewer-run-");
    const ran = runSpool(["run", "-q", "--", process.execPath, example], { cwd: dir, env: { ...process.env, NOISY_BUILD_SECONDS: "0.3" } });
    expect(ran.status).toBe(1);
    const serve = await startServing(["serve", "--port", "0"], { cwd: dir });
    const opened = await openPage(serve.url);
    pages.push(opened);
    const { page, errors } = opened;
    await expect.poll(() => page.textContent("#status-state"), { timeout: 10_000 }).toBe("failed · exit 1");
    expect(await page.$$eval("#sessions li", (li) => li.length)).toBe(1);
    await expect.poll(() => outputShows(page, ERROR_LINE), { timeout: 5000 }).toBe(true);
    await expect.poll(() => page.textContent("#transcript")).toContain(ERROR_LINE);
    expect(await page.textContent("#status-elapsed")).toMatch(/^\d+\.\d s$/);
    expect(errors).toEqual([]);
  }, 60_000);
});
