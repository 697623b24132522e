// Backlog amplification: what the server leaves unsent stays bounded per subscriber and
// process-wide whatever the batch sizes, paused subscribers are dropped, and reading ones converge.
import { spawn } from "node:child_process";
import { request, type ClientRequest } from "node:http";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { createStateHost } from "../../src/harness/index.js";
import { createWireServer, subscribe, type Subscription, type WireServer } from "../../src/wire/index.js";
import { until } from "../support/until.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

/** An SSE request whose body is never read: the socket is paused as soon as the headers arrive. */
async function paused(url: string, token: string): Promise<ClientRequest> {
  const req = request(url, { headers: { authorization: `Bearer ${token}` } });
  req.on("error", () => {});
  cleanups.push(() => req.destroy());
  await new Promise<void>((resolve) => {
    req.on("response", (res) => {
      res.pause();
      resolve();
    });
    req.end();
  });
  return req;
}

const text = (i: number, size: number): string => `${i}:`.padEnd(size, String.fromCharCode(97 + (i % 26)));

async function server(limits: {
  maxBacklogBytes: number;
  maxTotalBacklogBytes: number;
}): Promise<{ host: ReturnType<typeof createStateHost>; srv: WireServer }> {
  const host = createStateHost();
  const srv = await createWireServer({ states: host, token: "t", ...limits });
  cleanups.push(() => srv.close());
  return { host, srv };
}

describe("backlog amplification", () => {
  it("a paused subscriber is dropped before a batch would take its unsent bytes past its limit", async () => {
    const limit = 1 << 20;
    const { host, srv } = await server({ maxBacklogBytes: limit, maxTotalBacklogBytes: 1 << 30 });
    const s = host.state("big", { text: "" });
    await paused(`${srv.url}/v1/state/big`, "t");
    await until(() => srv.subscribers === 1, "the subscriber");
    let peak = 0;
    for (let i = 0; i < 40 && srv.subscribers > 0; i++) {
      s.mutate((d) => void (d.text = text(i, 3 << 20))); // 3 MiB per batch: three times the limit
      peak = Math.max(peak, srv.held);
      await tick();
    }
    expect(srv.subscribers).toBe(0);
    expect(srv.dropped).toBe(1);
    // One whole frame may go to an outbox the kernel had emptied; never a second one on top of it.
    expect(peak).toBeLessThanOrEqual(limit + (3 << 20) + 100);
  });

  it("the process-wide cap drops stalled subscribers, stalest first, while a reading one converges", async () => {
    const cap = 8 << 20;
    const { host, srv } = await server({ maxBacklogBytes: 64 << 20, maxTotalBacklogBytes: cap });
    const s = host.state("big", { n: -1, text: "" });
    for (let i = 0; i < 10; i++) await paused(`${srv.url}/v1/state/big`, "t");
    const reader: Subscription<{ n: number; text: string }> = subscribe(`${srv.url}/v1/state/big`, { token: "t", retryDelayMs: 20 });
    cleanups.push(() => reader.close());
    await until(() => srv.subscribers === 11 && reader.status === "live", "11 subscribers");
    let peak = 0;
    for (let i = 0; i < 12; i++) {
      s.mutate((d) => {
        d.n = i;
        d.text = text(i, 2 << 20);
      });
      peak = Math.max(peak, srv.held);
      await tick(100); // time for the reader to drain, and for paused outboxes to count as stalled
    }
    await until(() => reader.value?.n === 11 && reader.value.text === s.value.text, "the reader to converge");
    expect(srv.dropped).toBeGreaterThanOrEqual(10);
    expect(srv.subscribers).toBe(1);
    expect(peak).toBeLessThanOrEqual(cap + (2 << 20) + 100);
  });

  it("50 paused clients and 20 MB batches keep the server under 300 MB RSS, and the reading clients converge", async () => {
    const child = spawn(process.execPath, [new URL("./fixtures/batch-server.mjs", import.meta.url).pathname], { stdio: ["pipe", "pipe", "inherit"] });
    cleanups.push(() => child.kill("SIGKILL"));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async (): Promise<Record<string, unknown>> => JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
    const { url, token } = (await next()) as { url: string; token: string };
    const stream = `${url}/v1/state/big`;
    for (let i = 0; i < 50; i++) await paused(stream, token);
    const readers = Array.from({ length: 5 }, () => subscribe<{ batch: number; text: string }>(stream, { token, retryDelayMs: 50 }));
    cleanups.push(() => readers.forEach((r) => r.close()));
    await until(() => readers.every((r) => r.status === "live"), "the readers");
    const batches = 5;
    const size = 20_000_000;
    for (let i = 0; i < batches; i++) {
      child.stdin!.write(`batch ${i} ${size}\n`);
      expect((await next()).batch).toBe(i);
      await until(() => readers.every((r) => r.value?.batch === i), `the readers to get batch ${i}`, 60_000);
    }
    await until(
      () => readers.every((r) => r.value?.batch === batches - 1 && r.value.text.length === size && r.value.text.startsWith(`batch ${batches - 1}:`)),
      "the readers to converge",
      60_000,
    );
    child.stdin!.write("stats\n");
    const stats = (await next()) as { peakRss: number; dropped: number; subscribers: number };
    const reconnects = readers.reduce((n, r) => n + r.connects - 1, 0);
    console.log(
      `backlog: 50 paused + 5 reading, ${batches} × 20 MB batches: peak RSS ${(stats.peakRss / 2 ** 20).toFixed(0)} MiB, dropped ${stats.dropped}, reader reconnects ${reconnects}, converged ${readers.length}/${readers.length}`,
    );
    expect(stats.peakRss).toBeLessThan(300 * 2 ** 20);
    expect(stats.dropped).toBeGreaterThanOrEqual(50);
    child.stdin!.write("exit\n");
  }, 120_000);
});
