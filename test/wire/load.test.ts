// Load on the wire: 100 SSE subscribers, half of them paused, on a state
// streaming over 5 MB/s for 10 s as a sliding 512 KB tail view (an append and a front drop every 50 ms),
// so every subscriber is sent over 5 MB/s; half the readers join mid-stream. The server runs in its own process so its peak RSS is its
// own. Prints peak RSS, dropped and converged counts; RSS stays under the §1 bound and every reading
// subscriber converges on the final state.
import { spawn } from "node:child_process";
import { request, type IncomingMessage } from "node:http";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { subscribe, type Subscription } from "../../src/wire/index.js";
import { until } from "../support/until.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

type Big = { batch: number; text: string };
type Paused = { res: IncomingMessage; ended: boolean };

/** An SSE request that stops reading once the headers arrive; `ended` turns true when the server drops it. */
async function pausedSubscriber(url: string, token: string): Promise<Paused> {
  const req = request(url, { headers: { authorization: `Bearer ${token}` } });
  cleanups.push(() => req.destroy());
  const p = await new Promise<Paused>((resolve) => req.on("response", (res) => (res.pause(), resolve({ res, ended: false }))).end());
  const ended = () => void (p.ended = true);
  req.on("error", ended).on("close", ended);
  p.res.on("error", ended).on("close", ended).on("end", ended);
  return p;
}

describe("the wire under load", () => {
  it("100 subscribers, half paused, sent over 5 MB/s each for 10 s: RSS bounded, paused dropped, readers converge", async () => {
    const child = spawn(process.execPath, [new URL("./fixtures/batch-server.mjs", import.meta.url).pathname], { stdio: ["pipe", "pipe", "inherit"] });
    cleanups.push(() => child.kill("SIGKILL"));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async <T>(): Promise<T> => JSON.parse((await lines.next()).value as string) as T;
    const { url, token } = await next<{ url: string; token: string }>();
    const stream = `${url}/v1/state/big`;

    const paused: Paused[] = [];
    for (let i = 0; i < 50; i++) paused.push(await pausedSubscriber(stream, token));
    const readers: Subscription<Big>[] = [];
    cleanups.push(() => readers.forEach((r) => r.close()));
    const read = (n: number) => {
      for (let i = 0; i < n; i++) readers.push(subscribe<Big>(stream, { token }));
    };
    read(25);
    await until(() => readers.every((r) => r.status === "live"), "the first readers");

    child.stdin!.write(`stream ${5_500_000} 10 ${512 * 1024} 50\n`);
    await new Promise((r) => setTimeout(r, 3000));
    read(25); // they start from a base of the whole window, mid-stream
    const streamed = await next<{ batches: number; seconds: number; bytes: number; lastLine: number }>();

    const fresh = subscribe<Big>(stream, { token });
    cleanups.push(() => fresh.close());
    await until(() => fresh.value?.batch === streamed.batches, "a fresh subscriber");
    const final = fresh.value!;
    await until(() => readers.every((r) => r.value?.batch === streamed.batches && r.value.text === final.text), "every reader to converge", 120_000);

    child.stdin!.write("stats\n");
    const stats = await next<{ peakRss: number; peakHeld: number; dropped: number; subscribers: number }>();
    const pausedConnected = stats.subscribers - readers.length - 1; // less the readers and the fresh one
    for (const p of paused) p.res.resume(); // a dropped one sees its end once it has read what it was left
    await until(() => paused.filter((p) => p.ended).length >= 50 - pausedConnected, "the dropped paused subscribers to see their end", 30_000);
    const rate = streamed.bytes / 1e6 / streamed.seconds;
    const pausedDropped = 50 - pausedConnected;
    const reconnects = readers.reduce((n, r) => n + r.connects - 1, 0);
    const converged = readers.filter((r) => r.value?.text === final.text).length;
    console.log(
      `wire load: ${rate.toFixed(1)} MB/s for ${streamed.seconds.toFixed(1)} s (${(streamed.bytes / 1e6).toFixed(0)} MB), 50 paused + 50 reading (25 joining mid-stream): ` +
        `peak RSS ${(stats.peakRss / 2 ** 20).toFixed(0)} MiB, peak held for subscribers ${(stats.peakHeld / 2 ** 20).toFixed(0)} MiB, dropped ${stats.dropped} (paused ${pausedDropped}/50, reader reconnects ${reconnects}), converged ${converged}/50`,
    );
    expect(rate).toBeGreaterThanOrEqual(5);
    expect(streamed.seconds).toBeGreaterThanOrEqual(10);
    expect(converged).toBe(50);
    expect(pausedDropped).toBe(50);
    expect(stats.peakHeld).toBeLessThanOrEqual((64 << 20) + 1_100_000); // the cap plus one frame (a base is the window, a batch about 275 KB)
    expect(stats.peakRss).toBeLessThan(300 * 2 ** 20);
    child.stdin!.write("exit\n");
  }, 240_000);
});
