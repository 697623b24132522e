// serveViewer: the wire server's fallback for the viewer page — a fixed set of files, nothing else.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createStateHost } from "../../src/harness/index.js";
import { createWireServer, serveViewer } from "../../src/wire/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

async function serve(files: Record<string, string>) {
  const root = tempDir("spool-static-");
  for (const [name, body] of Object.entries(files)) await writeFile(join(root, name), body);
  const server = await createWireServer({ states: createStateHost(), token: "t", fallback: serveViewer(root) });
  cleanups.push(() => server.close());
  return { root, server };
}

describe("serveViewer", () => {
  it("serves index.html at / and the bundle at /app.js and /app.css, with types and a same-origin CSP", async () => {
    const { server } = await serve({ "index.html": "<!doctype html><p>hi</p>", "app.js": "console.log(1)", "app.css": "p{}" });
    const page = await fetch(`${server.url}/?token=abc`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await page.text()).toBe("<!doctype html><p>hi</p>");
    const js = await fetch(`${server.url}/app.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await js.text()).toBe("console.log(1)");
    const css = await fetch(`${server.url}/app.css`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const head = await fetch(`${server.url}/app.js`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("14");
  });

  it("answers 404 for any other path, including traversal attempts and files that exist in the root", async () => {
    const { server } = await serve({ "index.html": "x", "app.js": "y", "secret.txt": "no" });
    for (const path of ["/secret.txt", "/../package.json", "/%2e%2e/package.json", "/app.js/", "/constructor", "/__proto__", "/files/x/spill/y"]) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toBe("no");
    }
    const post = await fetch(`${server.url}/`, { method: "POST" });
    expect(post.status).toBe(404);
  });

  it("says how to build the page when it is not built", async () => {
    const { server } = await serve({});
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/not built .*index\.html is missing.*npm run build/);
  });

  it("leaves the API's auth in place: the page is public, the states are not", async () => {
    const { server } = await serve({ "index.html": "x" });
    expect((await fetch(`${server.url}/`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/states`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/states?token=t`)).status).toBe(200);
  });
});
