// A TCP proxy in front of the test server, for network faults the server cannot make itself:
// "forward" passes bytes (and closes) both ways; "blackhole" forwards nothing on any connection, old
// or new, and closes nothing (a partition: no FIN, no RST); "refuse" closes each new connection at
// once while established ones keep forwarding (a writer whose reconnects fail, while others reach
// the server directly).
import { connect, createServer, type Socket } from "node:net";

export type ProxyMode = "forward" | "blackhole" | "refuse";

export interface TcpProxy {
  /** `url` with the proxy's host and port. */
  readonly url: string;
  mode(m: ProxyMode): void;
  close(): Promise<void>;
}

export async function startTcpProxy(url: string): Promise<TcpProxy> {
  const target = new URL(url);
  let mode: ProxyMode = "forward";
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    if (mode === "refuse") return void client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const pass = (from: Socket, to: Socket): void => {
      from.on("data", (d) => mode !== "blackhole" && to.write(d));
      from.on("close", () => {
        sockets.delete(from);
        if (mode !== "blackhole") to.destroy();
      });
      from.on("error", () => {});
    };
    pass(client, upstream);
    pass(upstream, client);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const via = new URL(url);
  via.port = String((proxy.address() as { port: number }).port);
  return {
    url: via.toString(),
    mode: (m) => void (mode = m),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}
