// SSE binding of replicated state over node:http. Per subscription: ids start at 0 and are contiguous,
// the first batch is a base, and the subscription has its own encoder. A subscriber that stops reading
// is dropped once its unsent backlog passes a limit — it reconnects to a fresh base — so one slow client
// cannot grow server memory.
import { SpoolError } from "../errors/index.js";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { encoder } from "../delta/index.js";
import type { StateSource } from "./source.js";

export interface WireServerOptions {
  readonly states: StateSource;
  readonly host?: string;
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Bearer token; a random one is generated when omitted. */
  readonly token?: string;
  /** Bytes a subscriber may leave unread before it is dropped (default 8 MiB). */
  readonly maxBacklogBytes?: number;
  /** Extra routes (e.g. a viewer page); called for any request the wire does not handle. Return false for 404. */
  readonly fallback?: (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;
}

export interface WireServer {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Number of open SSE subscriptions. */
  readonly subscribers: number;
  close(): Promise<void>;
}

export class WireError extends SpoolError {
  constructor(
    override readonly code: "SPOOL_WIRE_PORT_IN_USE" | "SPOOL_WIRE_LISTEN",
    message: string,
  ) {
    super(code, message);
  }
}

const DEFAULT_BACKLOG = 8 * 1024 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(text);
}

function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith("Bearer ")) return auth.slice(7).trim();
  return url.searchParams.get("token") ?? undefined;
}

function sameToken(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function createWireServer(options: WireServerOptions): Promise<WireServer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? randomBytes(16).toString("hex");
  const maxBacklog = options.maxBacklogBytes ?? DEFAULT_BACKLOG;
  const open = new Set<ServerResponse>();

  const stream = (name: string, res: ServerResponse): void => {
    const state = options.states.get(name);
    if (!state) {
      sendJson(res, 404, { code: "no_such_state", message: `no state named "${name}"; GET /v1/states lists them` });
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
    open.add(res);
    const enc = encoder();
    let seq = 0;
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      unsubscribe();
      open.delete(res);
    };
    const unsubscribe = state.subscribe(
      (ops) => {
        if (ended) return;
        if (res.writableLength > maxBacklog) {
          // Dropped, not paused: on reconnect it gets a fresh base, which is cheaper than the backlog.
          end();
          res.destroy();
          return;
        }
        res.write(`id: ${seq++}\nevent: ops\ndata: ${JSON.stringify(enc.encode(ops))}\n\n`);
      },
      () => {
        if (ended) return;
        res.end("event: closed\ndata: {}\n\n");
        end();
      },
    );
    res.on("close", end);
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (url.pathname.startsWith("/v1/")) {
        if (!sameToken(tokenOf(req, url), token)) {
          res.setHeader("www-authenticate", "Bearer");
          sendJson(res, 401, { code: "unauthorized", message: "missing or wrong token: send Authorization: Bearer <token> or ?token=<token>" });
          return;
        }
        if (req.method !== "GET") {
          sendJson(res, 405, { code: "method_not_allowed", message: "only GET is served" });
          return;
        }
        if (url.pathname === "/v1/states") {
          sendJson(res, 200, { states: options.states.names() });
          return;
        }
        const m = /^\/v1\/state\/([^/]+)$/.exec(url.pathname);
        if (m) {
          stream(decodeURIComponent(m[1]!), res);
          return;
        }
      } else if (options.fallback && (await options.fallback(req, res, url))) return;
      sendJson(res, 404, { code: "not_found", message: `nothing at ${url.pathname}` });
    })().catch(() => {
      if (!res.headersSent) sendJson(res, 500, { code: "internal_error", message: "internal error" });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") {
        reject(new WireError("SPOOL_WIRE_PORT_IN_USE", `port ${options.port} on ${host} is already in use`));
      } else reject(new WireError("SPOOL_WIRE_LISTEN", `could not listen on ${host}:${options.port ?? 0}: ${err.message}`));
    });
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    token,
    get subscribers() {
      return open.size;
    },
    close() {
      for (const res of open) res.destroy();
      open.clear();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
