// Serves the built viewer page (web/dist) as the wire server's fallback. A fixed allowlist of files,
// never a path taken from the URL, so no request can read anything else from disk. The page carries no
// secret — the token arrives in the URL the CLI prints — so these routes need no auth.
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";

const FILES: Readonly<Record<string, readonly [file: string, type: string]>> = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/index.html": ["index.html", "text/html; charset=utf-8"],
  "/app.js": ["app.js", "text/javascript; charset=utf-8"],
  "/app.js.map": ["app.js.map", "application/json; charset=utf-8"],
  "/app.css": ["app.css", "text/css; charset=utf-8"],
};

// Everything the page loads comes from this origin; tool output images are inline data: URLs.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

export type ViewerFallback = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

/** A `createWireServer` fallback serving the viewer built into `root` (normally `web/dist`). */
export function serveViewer(root: string): ViewerFallback {
  return async (req, res, url) => {
    const entry = Object.hasOwn(FILES, url.pathname) ? FILES[url.pathname] : undefined;
    if (!entry || (req.method !== "GET" && req.method !== "HEAD")) return false;
    const [file, type] = entry;
    let body: Buffer;
    try {
      body = await readFile(join(root, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
      res.end(`The viewer page is not built (${join(root, file)} is missing): run \`npm run build\`.\n`);
      return true;
    }
    res.writeHead(200, {
      "content-type": type,
      "content-length": body.length,
      // Rebuilt pages must show up on reload; these files are small and local.
      "cache-control": "no-store",
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
    });
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  };
}
