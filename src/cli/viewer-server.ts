// The wire server as the CLI runs it: replicated states over SSE, the viewer page, and the sessions'
// spill files served read-only (`/files/<sessionId>/spill/<name>`), all behind the wire's one token
// rule. A spill file is served only when it is a regular file that resolves inside its session
// directory, and the session directory itself is not a symlink: a link planted in spill/ or in place
// of a session cannot turn this route into a reader of arbitrary files.
import { existsSync } from "node:fs";
import { lstat, open, realpath } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, sep } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { isSessionId } from "../store/index.js";
import { createWireServer, decodeSegment, sendJson, serveViewer, type StateSource, type WireServer } from "../wire/index.js";

export interface ViewerServer {
  /** The page's address, token included. */
  readonly pageUrl: string;
  readonly server: WireServer;
  close(): Promise<void>;
}

const WEB_DIST = fileURLToPath(new URL("../../web/dist/", import.meta.url));
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const FILES = /^\/files\/([^/]+)\/spill\/([^/]+)$/;

/** The real path of a spill file when serving it is allowed, else undefined. */
async function spillPath(sessionsDir: string, id: string, name: string): Promise<string | undefined> {
  const sessionDir = join(sessionsDir, id);
  try {
    if (!(await lstat(sessionDir)).isDirectory()) return undefined; // a symlinked session is not served
    const [realDir, realFile] = await Promise.all([realpath(sessionDir), realpath(join(sessionDir, "spill", name))]);
    return realFile.startsWith(realDir + sep) ? realFile : undefined;
  } catch {
    return undefined;
  }
}

async function sendSpill(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
  const handle = await open(path, "r").catch(() => undefined);
  if (!handle) return false;
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    return false;
  }
  res.writeHead(200, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": st.size,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  if (req.method === "HEAD" || st.size === 0) {
    await handle.close();
    res.end();
    return true;
  }
  // Streamed from the descriptor that was checked, so a swap after the check changes nothing; the
  // length is the one announced, even if the file grows meanwhile.
  handle.createReadStream({ end: st.size - 1 }).pipe(res);
  return true;
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
  const viewer = serveViewer(WEB_DIST);
  const fallback = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const files = FILES.exec(url.pathname);
    if (!files) return viewer(req, res, url);
    // The token was already checked by the wire server (isProtected below).
    const [id, name] = [decodeSegment(files[1]!), decodeSegment(files[2]!)];
    if (id === undefined || name === undefined) {
      sendJson(req, res, 400, { code: "bad_request", message: `${url.pathname} is not valid percent-encoding` });
      return true;
    }
    const valid = isSessionId(id) && SAFE_NAME.test(name);
    const path = valid ? await spillPath(options.sessionsDir, id, name) : undefined;
    if (path !== undefined && (await sendSpill(req, res, path))) return true;
    // Only when this machine has no such session directory: a local link that was refused stays refused.
    const remote = valid && !existsSync(join(options.sessionsDir, id)) ? await options.remoteSpill?.(id, name) : undefined;
    if (remote) {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" });
      if (req.method === "HEAD") remote.destroy();
      else await pipeline(remote, res).catch(() => res.destroy());
      if (req.method === "HEAD") res.end();
      return true;
    }
    sendJson(req, res, 404, { code: "not_found", message: `no spill file ${name} in session ${id}` });
    return true;
  };
  const server = await createWireServer({
    states: options.states,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
    fallback,
    isProtected: (pathname) => pathname.startsWith("/files/"),
  });
  return { pageUrl: `${server.url}/?token=${server.token}`, server, close: () => server.close() };
}
