// SSE binding of replicated state over node:http. Per subscription: ids start at 0 and are contiguous,
// the first batch is a base, and the subscription has its own encoder. What a subscriber leaves unsent
// is bounded per subscriber and process-wide (backlog.ts): a subscriber that stops reading is dropped
// and reconnects to a fresh base, so no client count or batch size can grow server memory. Every
// protected route — the API and whatever the fallback marks protected — passes the one token check
// (auth.ts).
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { encoder } from "../delta/index.js";
import { SpoolError } from "../errors/index.js";
import { authorized } from "./auth.js";
import { createBacklog, type Outbox } from "./backlog.js";
import { createBaseSharing } from "./bases.js";
import { frameOf } from "./frame.js";
import { decodeSegment, sendJson } from "./respond.js";
import type { StateSource } from "./source.js";

export interface WireServerOptions {
  readonly states: StateSource;
  readonly host?: string;
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Bearer token; a random one is generated when omitted. */
  readonly token?: string;
  /** Bytes one subscriber may leave unsent before it is dropped (default 8 MiB). */
  readonly maxBacklogBytes?: number;
  /** Bytes all subscribers together may leave unsent (default 64 MiB). */
  readonly maxTotalBacklogBytes?: number;
  /** Extra routes (e.g. a viewer page); called for any request the wire does not handle. Return false for 404. */
  readonly fallback?: (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;
  /** Fallback paths that need the token too (checked by the same rule as the API before the fallback runs). */
  readonly isProtected?: (pathname: string) => boolean;
}

export interface WireServer {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Number of open SSE subscriptions. */
  readonly subscribers: number;
  /** Subscriptions dropped so far for leaving too much unsent. */
  readonly dropped: number;
  /** Bytes held for subscribers that have not taken them yet (a batch's shared values counted once). */
  readonly held: number;
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
const DEFAULT_TOTAL_BACKLOG = 64 * 1024 * 1024;

const STREAM_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;

export async function createWireServer(options: WireServerOptions): Promise<WireServer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? randomBytes(16).toString("hex");
  const backlog = createBacklog({ perSubscriber: options.maxBacklogBytes ?? DEFAULT_BACKLOG, total: options.maxTotalBacklogBytes ?? DEFAULT_TOTAL_BACKLOG });
  const open = new Set<ServerResponse>();
  const bases = createBaseSharing();

  const stream = (name: string, req: IncomingMessage, res: ServerResponse): void => {
    const state = options.states.get(name);
    if (!state) {
      sendJson(req, res, 404, { code: "no_such_state", message: `no state named "${name}"; GET /v1/states lists them` });
      return;
    }
    res.writeHead(200, STREAM_HEADERS);
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    res.flushHeaders();
    open.add(res);
    const enc = encoder();
    let seq = 0;
    let ended = false;
    let unsubscribe: (() => void) | undefined;
    // Counted as watching exactly as long as its listener is subscribed (bases.ts relies on it).
    const unwatch = bases.watch(state);
    const end = (): void => {
      if (ended) return;
      ended = true;
      unsubscribe?.();
      unwatch();
      backlog.remove(box);
      open.delete(res);
    };
    const box: Outbox = {
      get unsent() {
        return res.writableLength;
      },
      drop() {
        // Dropped, not paused: on reconnect it gets a fresh base, which is cheaper than the backlog.
        end();
        res.destroy();
      },
    };
    backlog.add(box);
    unsubscribe = state.subscribe(
      (batch) => {
        if (ended) return;
        const ops = bases.batch(state, batch, seq === 0);
        const frame = frameOf(seq, ops, enc.encode(ops));
        if (!backlog.admit(box, frame)) return;
        seq++;
        res.cork();
        for (const chunk of frame.chunks) res.write(chunk);
        res.uncork();
      },
      () => {
        if (ended) return;
        res.end("event: closed\ndata: {}\n\n");
        end();
      },
    );
    if (ended) unsubscribe();
    res.on("close", end);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      sendJson(req, res, 400, { code: "bad_request", message: "the request target is not a valid URL path" });
      return;
    }
    const api = url.pathname.startsWith("/v1/");
    if ((api || options.isProtected?.(url.pathname)) && !authorized(req, url, token)) {
      res.setHeader("www-authenticate", "Bearer");
      sendJson(req, res, 401, {
        code: "unauthorized",
        message: "missing or wrong token: send Authorization: Bearer <token> or ?token=<token> (every copy sent must be right)",
      });
      return;
    }
    if (api) {
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.setHeader("allow", "GET, HEAD");
        sendJson(req, res, 405, { code: "method_not_allowed", message: "only GET and HEAD are served" });
        return;
      }
      if (url.pathname === "/v1/states") {
        sendJson(req, res, 200, { states: options.states.names() });
        return;
      }
      const m = /^\/v1\/state\/([^/]+)$/.exec(url.pathname);
      if (m) {
        const name = decodeSegment(m[1]!);
        if (name === undefined) sendJson(req, res, 400, { code: "bad_request", message: `the state name in ${url.pathname} is not valid percent-encoding` });
        else stream(name, req, res);
        return;
      }
    } else if (options.fallback && (await options.fallback(req, res, url))) return;
    sendJson(req, res, 404, { code: "not_found", message: `nothing at ${url.pathname}` });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(req, res, 500, { code: "internal_error", message: "internal error" });
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
    get dropped() {
      return backlog.dropped;
    },
    get held() {
      return backlog.held;
    },
    close() {
      for (const res of open) res.destroy();
      open.clear();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
