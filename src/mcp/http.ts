// The Streamable HTTP transport, for clients that connect over HTTP instead of spawning the server:
// 127.0.0.1 only, every request behind a bearer token compared in constant time. Each client's
// `initialize` gets an MCP session of its own (its own SDK Server and transport, made by `newServer`),
// all over the process's one spool session: every client's calls land in that one record, and
// background processes are shared. It was one transport for the process, so a client restarted while
// the server ran (an editor reloaded, an agent restarted) got "Server already initialized" for ever.
//
// A request naming an unknown session id gets the SDK's 404, on which a client initializes again. At
// most `maxSessions` (default 16) MCP sessions are kept: a new one closes the longest-idle session
// with no request open (a dead client's: the kernel closed its sockets), and is refused with 503 when
// every one has a request open (a connected SDK client holds its GET stream).
//
// The server ends (the `ended` promise) when:
// - a client's DELETE ends its MCP session and no other MCP session has a request open, i.e. the
//   last connected client said it is done, as one client's DELETE ended the server before. A DELETE
//   while another client is connected ends only the deleting client's session (and aborts its calls).
//   A client that goes away without a DELETE leaves the server running for the next one.
// - no request of any session has been open or arrived for the idle time;
// - or the server is closed.
import { Buffer } from "node:buffer";
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
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
/**
 * MCP sessions kept at once. Each is an SDK Server and transport: 123 KB a session measured with its
 * SDK client, both in one heap (100 connected), so 16 hold about 2 MB. A client restarted without a
 * DELETE leaves one behind, closed when room is needed.
 */
export const DEFAULT_MAX_MCP_SESSIONS = 16;

/** "ended": the last client deleted its session or the server was closed; "idle": the idle time ran out. */
export type HttpEndReason = "ended" | "idle";

export interface HttpServing {
  /** The endpoint, e.g. http://127.0.0.1:4100/mcp. */
  readonly url: string;
  /** Send as `Authorization: Bearer <token>`. */
  readonly token: string;
  /** Resolves when serving ended: the last client ended its session, it was idle too long, or the server was closed. */
  readonly ended: Promise<HttpEndReason>;
  /** MCP sessions open now. */
  sessions(): number;
  close(): Promise<void>;
}

export interface HttpOptions {
  readonly port?: number;
  readonly token?: string;
  /**
   * Seconds with no authorised request open or arriving, in any MCP session, before serving ends as on
   * the last client's DELETE (default DEFAULT_IDLE_TIMEOUT_S; 0: never). An open request is activity for
   * as long as it is open, so a foreground call of any length is never cut. A dropped connection is no
   * cancellation in MCP (a client may reconnect and resume), hence a time and not "end on disconnect".
   */
  readonly idleTimeoutS?: number;
  /** MCP sessions kept at once (default DEFAULT_MAX_MCP_SESSIONS). */
  readonly maxSessions?: number;
}

interface McpSession {
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
  /** Set once its `initialize` was answered. */
  id: string | undefined;
  /** Its requests open now (a connected SDK client's GET stream is one). */
  open: number;
  /** When a request of it last arrived or ended (performance.now()). */
  lastSeen: number;
  /** Its client deleted it. */
  deleted: boolean;
}

const json = (res: ServerResponse, status: number, code: number, message: string): void => {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
};

export async function serveHttp(newServer: () => Server, options: HttpOptions = {}): Promise<HttpServing> {
  const idleS = options.idleTimeoutS ?? DEFAULT_IDLE_TIMEOUT_S;
  if (!isWholeNumberIn(idleS, 0, MAX_IDLE_TIMEOUT_S)) {
    throw new SpoolError("SPOOL_MCP_BAD_OPTION", `idleTimeoutS must be ${wholeNumberRange(0, MAX_IDLE_TIMEOUT_S)} (0: never), got ${String(idleS)}`);
  }
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_MCP_SESSIONS;
  if (!isWholeNumberIn(maxSessions, 1, 10_000)) {
    throw new SpoolError("SPOOL_MCP_BAD_OPTION", `maxSessions must be ${wholeNumberRange(1, 10_000)}, got ${String(maxSessions)}`);
  }
  const token = options.token ?? randomBytes(24).toString("hex");
  const expected = Buffer.from(`Bearer ${token}`);
  /** Initialised MCP sessions by id. */
  const sessions = new Map<string, McpSession>();
  /** Sessions whose `initialize` is being handled: counted against the bound. */
  const starting = new Set<McpSession>();
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  let resolveEnded!: (reason: HttpEndReason) => void;
  const ended = new Promise<HttpEndReason>((resolve) => (resolveEnded = resolve));
  let over = false;
  const closeAll = (): Promise<unknown> => Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
  const settle = (reason: HttpEndReason): void => {
    over = true;
    clearTimeout(idle);
    resolveEnded(reason);
  };

  const idleMs = idleS * 1000;
  // As the last DELETE ends it: each transport closed, which closes its server and aborts its running calls.
  const expire = (): void => {
    settle("idle");
    void closeAll();
  };
  const arm = (): void => {
    if (idleMs > 0 && open === 0 && !over) idle = setTimeout(expire, idleMs);
  };

  /** A new MCP session, registered once its client's `initialize` was answered. */
  const start = (): McpSession => {
    const server = newServer();
    const s: McpSession = {
      server,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          s.id = id;
          starting.delete(s);
          sessions.set(id, s);
        },
        onsessionclosed: () => void (s.deleted = true),
      }),
      id: undefined,
      open: 0,
      lastSeen: performance.now(),
      deleted: false,
    };
    server.onclose = () => {
      if (s.id !== undefined) sessions.delete(s.id);
      // The last connected client said it is done: a live SDK client holds its GET stream open.
      if (s.deleted && ![...sessions.values()].some((other) => other.open > 0)) settle("ended");
    };
    return s;
  };

  /** Room for one more session: the longest-idle one without a request open is closed; false when none is. */
  const makeRoom = (): boolean => {
    if (sessions.size + starting.size < maxSessions) return true;
    let oldest: McpSession | undefined;
    for (const s of sessions.values()) if (s.open === 0 && (oldest === undefined || s.lastSeen < oldest.lastSeen)) oldest = s;
    if (oldest === undefined) return false;
    sessions.delete(oldest.id!);
    void oldest.server.close().catch(() => undefined);
    return true;
  };

  const track = (s: McpSession, res: ServerResponse): void => {
    s.open++;
    s.lastSeen = performance.now();
    res.once("close", () => {
      s.open--;
      s.lastSeen = performance.now();
    });
  };

  const http = createServer((req, res) => {
    const given = Buffer.from(req.headers.authorization ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" }).end("missing or wrong bearer token\n");
      return;
    }
    // Only the clients' requests keep the server: a local process without the token cannot.
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
    if (over) return json(res, 503, -32000, "spool mcp is shutting down; start it again to connect");
    const failed = (err: unknown): void => json(res, 500, -32603, (err as Error).message);
    const id = req.headers["mcp-session-id"];
    if (id !== undefined) {
      const s = typeof id === "string" ? sessions.get(id) : undefined;
      // As the SDK answers it: the client starts a new session.
      if (s === undefined) return json(res, 404, -32001, "Session not found");
      track(s, res);
      s.transport.handleRequest(req, res).catch(failed);
      return;
    }
    // No session id: an `initialize` (anything else the new transport refuses, as the SDK does).
    if (!makeRoom()) {
      return json(
        res,
        503,
        -32000,
        `spool mcp already serves ${maxSessions} MCP sessions, each with a request open; end one (its client's DELETE) or try again later`,
      );
    }
    const s = start();
    starting.add(s);
    track(s, res);
    s.server
      .connect(s.transport)
      .then(() => s.transport.handleRequest(req, res))
      .catch(failed)
      .finally(() => {
        starting.delete(s);
        // Not an initialize, or it failed: nothing was registered and nothing else can reach it.
        if (s.id === undefined) void s.server.close().catch(() => undefined);
      });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  arm(); // a client that never comes is idle too
  const { port } = http.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      over = true;
      clearTimeout(idle);
      await closeAll();
      // Said at once, as a DELETE says it: the spool session is closed while the connections linger.
      settle("ended");
      // Let in-flight responses (the answer to the client's DELETE) finish, then drop what lingers.
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const force = setTimeout(() => http.closeAllConnections(), 1000);
      await closed;
      clearTimeout(force);
    })());
  return { url: `http://127.0.0.1:${port}/mcp`, token, ended, sessions: () => sessions.size, close };
}
