// Live following across machines: every commit sends NOTIFY on the schema's channel with the payload
// {"s": session id, "q": last seq} — never data. A viewer LISTENs on one connection and reads what it
// needs when told; if that connection drops it reconnects with backoff and says so (`onGap`), since
// notifications sent while it was away are not replayed.
import type { Client } from "pg";
import { connect } from "./connect.js";
import { channelOf, checkSchemaName } from "./schema.js";
import type { DatabaseOptions } from "./session.js";

export interface CommitNotice {
  readonly sessionId: string;
  readonly seq: number;
}

export interface FollowOptions extends DatabaseOptions {
  /** Connection lost and regained: anything may have changed meanwhile, so re-read what you show. */
  readonly onGap?: () => void;
}

export interface Follower {
  close(): Promise<void>;
}

export function parseNotice(payload: string | undefined): CommitNotice | undefined {
  try {
    const o = JSON.parse(payload ?? "") as { s?: unknown; q?: unknown };
    if (typeof o.s === "string" && typeof o.q === "number") return { sessionId: o.s, seq: o.q };
  } catch {
    /* not ours */
  }
  return undefined;
}

/** Calls `onCommit` for each commit to any session in the database; resolves once listening. */
export async function followPostgresCommits(url: string | undefined, onCommit: (n: CommitNotice) => void, options: FollowOptions = {}): Promise<Follower> {
  const channel = channelOf(checkSchemaName(options.schema ?? "spool"));
  let closed = false;
  let client: Client | undefined;
  const listen = async (): Promise<void> => {
    const conn = await connect(url, options);
    if (closed) {
      // Closed while this connection was being opened (a reconnect in flight): nobody listens any more.
      await conn.client.end().catch(() => {});
      return;
    }
    client = conn.client;
    conn.client.on("notification", (m) => {
      if (m.channel !== channel) return;
      const n = parseNotice(m.payload);
      if (n) onCommit(n);
    });
    conn.client.once("end", () => {
      if (closed) return;
      client = undefined;
      void (async () => {
        for (let delay = 100; !closed; delay = Math.min(delay * 2, 5000)) {
          try {
            await listen();
            if (!closed) options.onGap?.();
            return;
          } catch {
            await new Promise((r) => setTimeout(r, delay));
          }
        }
      })();
    });
    await conn.client.query(`LISTEN ${channel}`);
  };
  await listen();
  return {
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}
