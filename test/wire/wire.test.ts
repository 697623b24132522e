import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createStateHost } from "../../src/harness/index.js";
import { createWireServer, subscribe, type WireServer } from "../../src/wire/index.js";
import { decoder, apply, type WireOp } from "../../src/delta/index.js";
import { until } from "../support/until.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup() {
  const host = createStateHost();
  const server = await createWireServer({ states: host, token: "sekret" });
  cleanups.push(() => server.close());
  return { host, server };
}

/** Read raw SSE events from a stream until `count` events have arrived. */
async function readEvents(url: string, token: string, count: number): Promise<{ id?: string; event?: string; data: string }[]> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const events: { id?: string; event?: string; data: string }[] = [];
  while (events.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += value;
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const ev: { id?: string; event?: string; data: string } = { data: "" };
      for (const line of block.split("\n")) {
        const [k, ...rest] = line.split(": ");
        const v = rest.join(": ");
        if (k === "id") ev.id = v;
        else if (k === "event") ev.event = v;
        else if (k === "data") ev.data = v;
      }
      events.push(ev);
    }
  }
  ac.abort();
  return events;
}

describe("wire server", () => {
  it("lists state names at /v1/states", async () => {
    const { host, server } = await setup();
    host.state("lane", { tools: [] });
    host.state("other", {});
    const res = await fetch(`${server.url}/v1/states`, { headers: { authorization: "Bearer sekret" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ states: ["lane", "other"] });
  });

  it("a missing or wrong token is 401, and ?token= is accepted", async () => {
    const { host, server } = await setup();
    host.state("lane", {});
    expect((await fetch(`${server.url}/v1/states`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/states`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await fetch(`${server.url}/v1/state/lane?token=wrong`)).status).toBe(401);
    const ok = await fetch(`${server.url}/v1/states?token=sekret`);
    expect(ok.status).toBe(200);
  });

  it("an unknown state is 404 with a code", async () => {
    const { server } = await setup();
    const res = await fetch(`${server.url}/v1/state/nope`, { headers: { authorization: "Bearer sekret" } });
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe("no_such_state");
  });

  it("ids start at 0 and are contiguous, and batch 0 is a base", async () => {
    const { host, server } = await setup();
    const s = host.state("lane", { n: 0, text: "" });
    const pending = readEvents(`${server.url}/v1/state/lane`, "sekret", 4);
    await until(() => server.subscribers === 1);
    for (let i = 1; i <= 3; i++)
      s.mutate((d) => {
        d.n = i;
        d.text += `chunk${i}`;
      });
    const events = await pending;
    expect(events.map((e) => e.id)).toEqual(["0", "1", "2", "3"]);
    expect(events.every((e) => e.event === "ops")).toBe(true);
    const first = JSON.parse(events[0]!.data) as WireOp[];
    expect(first[0]![0]).toBe("r");
    const dec = decoder();
    let replica: unknown;
    for (const e of events) replica = apply(replica, dec.decode(JSON.parse(e.data) as WireOp[]));
    expect(replica).toEqual({ n: 3, text: "chunk1chunk2chunk3" });
  });

  it("a late subscriber gets its own encoder and a base, not ids it never saw", async () => {
    const { host, server } = await setup();
    const s = host.state("lane", { a: { b: 0 } });
    const early = readEvents(`${server.url}/v1/state/lane`, "sekret", 4);
    await until(() => server.subscribers === 1);
    s.mutate((d) => void (d.a.b = 1));
    s.mutate((d) => void (d.a.b = 2)); // second use of the path: interned for the early subscriber
    const late = readEvents(`${server.url}/v1/state/lane`, "sekret", 2);
    await until(() => server.subscribers === 2);
    s.mutate((d) => void (d.a.b = 3));
    const [e, l] = await Promise.all([early, late]);
    expect(e.map((x) => x.id)).toEqual(["0", "1", "2", "3"]);
    expect(JSON.parse(e[3]!.data)[0]).toEqual(["s", 0, 3]); // the early stream refers to its interned id
    expect(l.map((x) => x.id)).toEqual(["0", "1"]);
    expect(JSON.parse(l[0]!.data)).toEqual([["r", { a: { b: 2 } }]]);
    expect(JSON.parse(l[1]!.data)).toEqual([["s", ["a", "b"], 3]]); // inline: first use on this stream
  });

  it("a closed state ends its streams with event: closed", async () => {
    const { host, server } = await setup();
    const s = host.state("lane", { x: 1 });
    const pending = readEvents(`${server.url}/v1/state/lane`, "sekret", 2);
    await until(() => server.subscribers === 1);
    s.close();
    const events = await pending;
    expect(events[1]!.event).toBe("closed");
    await until(() => server.subscribers === 0);
  });

  it("a subscriber that stops reading is dropped past the backlog limit instead of growing memory", async () => {
    const host = createStateHost();
    const server = await createWireServer({ states: host, token: "t", maxBacklogBytes: 256 * 1024 });
    cleanups.push(() => server.close());
    const s = host.state("big", { text: "" });
    // A raw request whose response body is never read.
    const req = request(`${server.url}/v1/state/big`, { headers: { authorization: "Bearer t" } });
    const res = await new Promise<import("node:http").IncomingMessage>((resolve) => {
      req.on("response", resolve);
      req.end();
    });
    res.pause();
    cleanups.push(() => req.destroy());
    await until(() => server.subscribers === 1);
    // The kernel's socket buffers take the first few MB a paused reader is sent (about 4 MB here), so
    // the batches must add up to well past that before the server holds anything.
    const chunk = (i: number) => `${i}:${Math.random().toString(36).repeat(2000)}\n`;
    for (let i = 0; i < 2000 && server.subscribers > 0; i++) {
      s.mutate((d) => void (d.text = chunk(i))); // whole new text each time: ~14 KB per batch
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    expect(server.subscribers).toBe(0);
  });
});

describe("subscribe client", () => {
  it("follows a state and folds every batch into the replica", async () => {
    const { host, server } = await setup();
    const s = host.state("lane", { items: [] as { id: number; text: string }[] });
    const seen: unknown[] = [];
    const sub = subscribe<{ items: { id: number; text: string }[] }>(`${server.url}/v1/state/lane`, {
      token: "sekret",
      onValue: (v) => seen.push(structuredClone(v)),
    });
    cleanups.push(() => sub.close());
    await until(() => sub.status === "live");
    for (let i = 0; i < 20; i++) s.mutate((d) => void d.items.push({ id: i, text: `m${i}` }));
    s.mutate((d) => void (d.items[3]!.text += "!"));
    await until(() => sub.value?.items.length === 20 && sub.value.items[3]!.text === "m3!");
    expect(sub.value).toEqual(s.value);
    expect(seen.length).toBeGreaterThan(1);
  });

  it("resubscribes for a fresh base after a gap in ids", async () => {
    // A hand-written SSE server that skips id 1 on the first connection only.
    let connections = 0;
    const srv: Server = createServer((req, res) => {
      connections++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: 0\nevent: ops\ndata: ${JSON.stringify([["r", { v: connections }]])}\n\n`);
      if (connections === 1) res.write(`id: 2\nevent: ops\ndata: ${JSON.stringify([["s", ["v"], 99]])}\n\n`);
      else res.write(`id: 1\nevent: ops\ndata: ${JSON.stringify([["s", ["w"], connections]])}\n\n`);
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (srv.closeAllConnections(), srv.close(() => r()))));
    const statuses: string[] = [];
    const sub = subscribe<{ v: number; w?: number }>(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/s`, {
      token: "x",
      retryDelayMs: 10,
      onStatus: (s, d) => statuses.push(`${s}${d ? `: ${d}` : ""}`),
    });
    cleanups.push(() => sub.close());
    await until(() => sub.value?.w === 2);
    expect(sub.value).toEqual({ v: 2, w: 2 }); // the 99 from after the gap was never applied
    expect(sub.connects).toBe(2);
    expect(statuses.some((s) => s.startsWith("resyncing: gap"))).toBe(true);
  });

  it("resubscribes after a batch that cannot be applied", async () => {
    let connections = 0;
    const srv: Server = createServer((_req, res) => {
      connections++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: 0\nevent: ops\ndata: ${JSON.stringify([["r", { v: connections }]])}\n\n`);
      if (connections === 1) res.write(`id: 1\nevent: ops\ndata: ${JSON.stringify([["a", ["missing"], "x"]])}\n\n`);
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (srv.closeAllConnections(), srv.close(() => r()))));
    const sub = subscribe<{ v: number }>(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/s`, { token: "x", retryDelayMs: 10 });
    cleanups.push(() => sub.close());
    await until(() => sub.value?.v === 2);
    expect(sub.connects).toBe(2);
  });

  it("reconnects to a fresh base after the server drops the connection", async () => {
    // The first connection is cut right after its base; the second one stays up.
    let connections = 0;
    const srv: Server = createServer((_req, res) => {
      connections++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: 0\nevent: ops\ndata: ${JSON.stringify([["r", { v: connections }]])}\n\n`);
      if (connections === 1) setTimeout(() => res.destroy(), 20); // the server under test drops the line, on purpose
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise<void>((r) => (srv.closeAllConnections(), srv.close(() => r()))));
    const values: number[] = [];
    const sub = subscribe<{ v: number }>(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/s`, {
      token: "x",
      retryDelayMs: 10,
      onValue: (v) => values.push(v.v),
    });
    cleanups.push(() => sub.close());
    await until(() => sub.value?.v === 2);
    expect(values).toEqual([1, 2]);
    expect(sub.connects).toBe(2);
  });

  it("stops without retrying when the state closes", async () => {
    const { host, server } = await setup();
    const s = host.state("lane", { n: 0 });
    const sub = subscribe<{ n: number }>(`${server.url}/v1/state/lane`, { token: "sekret", retryDelayMs: 10 });
    cleanups.push(() => sub.close());
    await until(() => sub.status === "live");
    s.close();
    await until(() => sub.status === "closed");
    await new Promise((r) => setTimeout(r, 100)); // on purpose: 10× the retry delay, in which no reconnect may happen
    expect(sub.connects).toBe(1);
  });
});
