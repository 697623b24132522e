// The viewer on a `spool mcp --serve` session, driven by the MCP SDK's client and watched in Debian's
// chromium: every call the client made shows as a tab and in the transcript, errors marked, and the status
// bar says how the picked call ended and how long it took. Saves test-artifacts/viewer-mcp.png. Needs `npm run build` first
// (dist/ and web/dist/).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect, until, type Connected } from "../mcp/helpers.js";
import { openPage, type OpenedPage } from "./browser.js";

const BUILD = new URL("../ai-sdk/fixtures/build-log.mjs", import.meta.url).pathname;
let client: Connected | undefined;
let page: OpenedPage | undefined;
afterEach(async () => {
  await page?.close();
  await client?.close();
  page = undefined;
  client = undefined;
});

describe("viewer on spool mcp --serve", () => {
  it("shows the MCP session's calls: tabs for each call, the transcript with the failing one marked", async () => {
    client = await connect(["--serve"]);
    const url = await until(() => /spool mcp: viewer at (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(client!.stderr())?.[1], "the viewer URL");
    const c = client.client;
    const build = await c.callTool({ name: "bash", arguments: { command: `node ${BUILD}` } }, undefined, { timeout: 30_000 });
    const spill = (build.structuredContent as { spillPath: string }).spillPath;
    await c.callTool({ name: "read", arguments: { path: spill, offset: 1, limit: 40 } });
    await c.callTool({ name: "bash", arguments: { command: "echo 'running 12 tests'; echo 'FAIL test/parser.test.ts > parses empty input' >&2; exit 1" } });
    await c.callTool({ name: "bash", arguments: { command: "printf 'src/parser.ts:12: const empty = []\\n'" } });

    page = await openPage(url, { width: 1400, height: 900 });
    const p = page.page;
    await expect.poll(() => p.locator("#transcript .entry").count(), { timeout: 15_000 }).toBe(4);
    await expect.poll(() => p.locator("button[data-call]").count()).toBe(4);
    expect(await p.locator("button[data-call].error").count()).toBe(1);
    expect(await p.textContent("#transcript")).toContain("FAIL test/parser.test.ts");
    expect(await p.textContent("#transcript")).toContain("Build finished: 0 errors");
    expect(await p.textContent("#sessions")).toContain("mcp");
    // The last call is shown; picking the build shows its tail and the footer naming the spill file.
    await p.click('button[data-call="call-1"]');
    await expect.poll(() => p.textContent("#output")).toContain(`Full output: ${spill}`);
    // The session is still running (the server lives on); the bar says how the picked call ended.
    await expect.poll(() => p.textContent("#status-state")).toBe("succeeded · exit 0");
    // A finished call is timed from its record (start to end), and the time stands still.
    const elapsed = await p.textContent("#status-elapsed");
    expect(elapsed).toMatch(/^\d+\.\d s$/);
    await new Promise((r) => setTimeout(r, 1200)); // on purpose: time passes, the clock must not move
    expect(await p.textContent("#status-elapsed")).toBe(elapsed);
    await mkdir("test-artifacts", { recursive: true });
    await p.screenshot({ path: join("test-artifacts", "viewer-mcp.png") });
    await p.click('button[data-call="call-3"]');
    await expect.poll(() => p.textContent("#status-state")).toBe("failed · exit 1");
    await p.click('button[data-call="call-1"]');
    expect(page.errors).toEqual([]);
  });
});
