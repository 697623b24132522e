// The Streamable HTTP transport, for clients that connect over HTTP instead of spawning the server:
// 127.0.0.1 only, one MCP session (the process's one spool session), every request behind a bearer
// token compared in constant time. The server ends when that client deletes its session, when no
// request has been open or arrived for the idle time, or when the server is closed.
import { Buffer } from "node:buffer";
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isWholeNumberIn, SpoolError, wholeNumberRange } from "../errors/index.js";

/**
 * 30 minutes. A client that died leaves no request open, since the kernel closes a dead process's
 * sockets (127.0.0.1 only: no peer vanishes with its socket still open), and a connected SDK client
 * always has one open: its GET stream, held from initialisation on (SDK 1.32.2; http-idle.test.ts
 * checks it). So this waits only on a live client that holds no
 * GET stream (the spec lets it do without) while its person is away between prompts: long enough for
 * a lunch break, short enough that a dead client's dev server does not run through the night.
 */
export const DEFAULT_IDLE_TIMEOUT_S = 1800;
/** Node's timers hold at most 2^31-1 ms; a longer one fires at once (with only a warning). */
export const MAX_IDLE_TIMEOUT_S = 2_147_483;

/** "ended": the client deleted its session or the server was closed; "idle": the idle time ran out. */
export type HttpEndReason = "ended" | "idle";

export interface HttpServing {
  /** The endpoint, e.g. http://127.0.0.1:4100/mcp. */
  readonly url: string;
  /** Send as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** Resolves when the session ended: the client ended it, it was idle too long, or the server was closed. */
  readonly ended: Promise<HttpEndReason>;
  close(): Promise<void>;
}

export interface HttpOptions {
  readonly port?: number;
  readonly token?: string;
  /**
   * Seconds with no authorised request open or arriving before the session ends as on the client's
   * DELETE (default DEFAULT_IDLE_TIMEOUT_S; 0: never). An open request is activity for as long as it is
   * open, so a foreground call of any length is never cut. A dropped connection is no cancellation in
   * MCP (a client may reconnect and resume), hence a time and not "end on disconnect".
   */
  readonly idleTimeoutS?: number;
}

export async function serveHttp(server: Server, options: HttpOptions = {}): Promise<HttpServing> {
  const idleS = options.idleTimeoutS ?? DEFAULT_IDLE_TIMEOUT_S;
  if (!isWholeNumberIn(idleS, 0, MAX_IDLE_TIMEOUT_S)) {
    throw new SpoolError("SPOOL_MCP_BAD_OPTION", `idleTimeoutS must be ${wholeNumberRange(0, MAX_IDLE_TIMEOUT_S)} (0: never), got ${String(idleS)}`);
  }
  const token = options.token ?? randomBytes(24).toString("hex");
  const expected = Buffer.from(`Bearer ${token}`);
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  let resolveEnded!: (reason: HttpEndReason) => void;
  const ended = new Promise<HttpEndReason>((resolve) => (resolveEnded = resolve));
  let over = false;
  const settle = (reason: HttpEndReason): void => {
    over = true;
    clearTimeout(idle);
    resolveEnded(reason);
  };
  server.onclose = () => settle("ended");
  await server.connect(transport);

  const idleMs = idleS * 1000;
  // As the DELETE ends it: the transport closed, which closes the server and aborts its running calls.
  const expire = (): void => {
    settle("idle");
    void transport.close().catch(() => undefined);
  };
  const arm = (): void => {
    if (idleMs > 0 && open === 0 && !over) idle = setTimeout(expire, idleMs);
  };

  const http = createServer((req, res) => {
    const given = Buffer.from(req.headers.authorization ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" }).end("missing or wrong bearer token\n");
      return;
    }
    // Only the client's requests keep the session: a local process without the token cannot.
    open++;
    clearTimeout(idle);
    // "close" comes once the response is sent or its connection dropped: a client killed mid-call too.
    res.once("close", () => {
      open--;
      arm();
    });
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
  arm(); // a client that never comes is idle too
  const { port } = http.address() as AddressInfo;
  const close = async (): Promise<void> => {
    over = true;
    clearTimeout(idle);
    await server.close().catch(() => undefined);
    // Let in-flight responses (the answer to the client's DELETE) finish, then drop what lingers.
    const closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeIdleConnections();
    const force = setTimeout(() => http.closeAllConnections(), 1000);
    await closed;
    clearTimeout(force);
    settle("ended");
  };
  return { url: `http://127.0.0.1:${port}/mcp`, token, ended, close };
}
