// The Streamable HTTP transport, for clients that connect over HTTP instead of spawning the server:
// 127.0.0.1 only, one MCP session (the process's one spool session), every request behind a bearer
// token compared in constant time. The server ends when that client deletes its session or the
// server is closed, like stdio's end of input.
import { Buffer } from "node:buffer";
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface HttpServing {
  /** The endpoint, e.g. http://127.0.0.1:4100/mcp. */
  readonly url: string;
  /** Send as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** Resolves when the client ended its session or the server was closed. */
  readonly ended: Promise<void>;
  close(): Promise<void>;
}

export async function serveHttp(server: Server, options: { readonly port?: number; readonly token?: string } = {}): Promise<HttpServing> {
  const token = options.token ?? randomBytes(24).toString("hex");
  const expected = Buffer.from(`Bearer ${token}`);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  let settle!: () => void;
  const ended = new Promise<void>((resolve) => (settle = resolve));
  server.onclose = () => settle();
  await server.connect(transport);
  const http = createServer((req, res) => {
    const given = Buffer.from(req.headers.authorization ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" }).end("missing or wrong bearer token\n");
      return;
    }
    if (new URL(req.url ?? "/", "http://127.0.0.1").pathname !== "/mcp") {
      res.writeHead(404, { "content-type": "text/plain" }).end("the MCP endpoint is /mcp\n");
      return;
    }
    transport.handleRequest(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end(`${(err as Error).message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const close = async (): Promise<void> => {
    await server.close().catch(() => undefined);
    // Let in-flight responses (the answer to the client's DELETE) finish, then drop what lingers.
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeIdleConnections();
    const force = setTimeout(() => http.closeAllConnections(), 1000);
    await closed;
    clearTimeout(force);
    settle();
  };
  return { url: `http://127.0.0.1:${port}/mcp`, token, ended, close };
}
