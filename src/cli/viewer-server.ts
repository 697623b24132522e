// The wire server as the CLI runs it: replicated states over SSE, the viewer page, and the sessions'
// spill files served read-only (`/files/<sessionId>/spill/<name>`), all behind one token.
import { createReadStream, existsSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createWireServer, serveViewer, type StateSource, type WireServer } from "../wire/index.js";

export interface ViewerServer {
  /** The page's address, token included. */
  readonly pageUrl: string;
  readonly server: WireServer;
  close(): Promise<void>;
}

const WEB_DIST = fileURLToPath(new URL("../../web/dist/", import.meta.url));
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function sendFile(res: ServerResponse, path: string): void {
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" });
  createReadStream(path).pipe(res);
}

export async function startViewerServer(options: {
  readonly states: StateSource;
  /** `<root>/sessions`, where `/files/<id>/spill/<name>` are looked up. */
  readonly sessionsDir: string;
  readonly port?: number;
  readonly host?: string;
  /** A spill this machine does not have (a database session recorded elsewhere), or undefined. */
  readonly remoteSpill?: (sessionId: string, name: string) => Promise<Readable | undefined>;
}): Promise<ViewerServer> {
  let token = "";
  const viewer = serveViewer(WEB_DIST);
  const fallback = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    if (req.method !== "GET") return false;
    const files = /^\/files\/([^/]+)\/spill\/([^/]+)$/.exec(url.pathname);
    if (files) {
      if (url.searchParams.get("token") !== token && req.headers.authorization !== `Bearer ${token}`) {
        res.writeHead(401, { "content-type": "text/plain" }).end("missing or wrong token\n");
        return true;
      }
      const [id, name] = [decodeURIComponent(files[1]!), decodeURIComponent(files[2]!)];
      const path = join(options.sessionsDir, id, "spill", name);
      const local = SAFE_NAME.test(id) && SAFE_NAME.test(name) && existsSync(path) && statSync(path).isFile();
      const remote = !local && SAFE_NAME.test(id) && SAFE_NAME.test(name) ? await options.remoteSpill?.(id, name) : undefined;
      if (remote) {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" });
        await pipeline(remote, res).catch(() => res.destroy());
        return true;
      }
      if (!local) {
        res.writeHead(404, { "content-type": "text/plain" }).end(`no spill file ${name} in session ${id}\n`);
        return true;
      }
      sendFile(res, path);
      return true;
    }
    return viewer(req, res, url);
  };
  const server = await createWireServer({
    states: options.states,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
    fallback,
  });
  token = server.token;
  return { pageUrl: `${server.url}/?token=${server.token}`, server, close: () => server.close() };
}
