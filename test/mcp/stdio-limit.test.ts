// One stdio message over the bound: the SDK's transport closed on it (an 11 MB bash command from a
// model ended `spool mcp`, its background processes with it, silently). Now it is answered — a tool
// error for a call — and the session goes on; the guard in front of the transport passes every line
// within the bound byte-identically, whatever the chunking.
import { Readable } from "node:stream";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createMessageGuard, oversizeRequestId, type OversizeMessage } from "../../src/mcp/message-guard.js";
import { connect, textOf, until, type Connected } from "./helpers.js";

const open: Connected[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

describe("spool mcp over stdio: a message over 10 MiB", () => {
  it("an 11 MB tool call is a tool error saying why; the server, its background process and the next call go on", async () => {
    const c = await connect();
    open.push(c);
    let closed = false;
    c.client.onclose = () => (closed = true);
    const started = await c.client.callTool({ name: "bash", arguments: { command: "sleep 300", background: true } });
    const processId = (started.structuredContent as { processId: string }).processId;

    const big = await c.client.callTool({ name: "bash", arguments: { command: `echo ${"x".repeat(11 * 1024 * 1024)}` } });
    expect(big.isError).toBe(true);
    expect(textOf(big)).toMatch(/^spool could not take this tool call: it is 11\.0 MB, over the 10\.0 MB one message may hold, so nothing was run\./);
    // A notification has no id to answer: it is dropped, and said on stderr.
    await c.transport.send({ jsonrpc: "2.0", method: "notifications/spool-test", params: { pad: "y".repeat(11 * 1024 * 1024) } });

    const next = await c.client.callTool({ name: "bash", arguments: { command: "echo alive" } });
    expect(textOf(next)).toBe("alive\n");
    const polled = await c.client.callTool({ name: "process_output", arguments: { processId } });
    expect(textOf(polled)).toMatch(/is still running/);
    expect(closed).toBe(false);
    await until(() => (c.stderr().match(/refused a 11\.0 MB message/g) ?? []).length === 2);
    expect(c.stderr()).toMatch(/refused a 11\.0 MB message \(at most 10\.0 MB\); answered it as an error\n/);
  });
});

/** Runs `chunks` through a guard of `max` bytes: what it passes on, and what it reported. */
async function guarded(chunks: Buffer[], max: number): Promise<{ passed: Buffer; oversize: OversizeMessage[] }> {
  const oversize: OversizeMessage[] = [];
  const out: Buffer[] = [];
  const guard = createMessageGuard(max, (m) => oversize.push(m));
  Readable.from(chunks).pipe(guard);
  for await (const chunk of guard) out.push(chunk as Buffer);
  return { passed: Buffer.concat(out), oversize };
}

describe("createMessageGuard", () => {
  it("passes lines within the bound byte-identically, whole, in order; reports each longer one by its size, head and tail", async () => {
    const max = 64;
    const line = fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: "grapheme", minLength: 50, maxLength: 3000 }));
    await fc.assert(
      fc.asyncProperty(fc.array(line.map((l) => l.replaceAll("\n", " "))), fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1 }), async (lines, cuts) => {
        const whole = Buffer.from(lines.map((l) => `${l}\n`).join(""));
        const chunks: Buffer[] = [];
        for (let at = 0, i = 0; at < whole.length; i++) {
          const n = cuts[i % cuts.length]!;
          chunks.push(whole.subarray(at, at + n));
          at += n;
        }
        const { passed, oversize } = await guarded(chunks, max);
        const bytes = lines.map((l) => Buffer.from(l));
        expect(passed.toString("utf8")).toBe(
          bytes
            .filter((b) => b.length <= max)
            .map((b) => `${b.toString("utf8")}\n`)
            .join(""),
        );
        const long = bytes.filter((b) => b.length > max);
        expect(oversize.map((m) => m.bytes)).toEqual(long.map((b) => b.length));
        // 4 KiB of each end is kept: the whole line when it is shorter.
        expect(oversize.map((m) => [m.head, m.tail])).toEqual(long.map((b) => [b.subarray(0, 4096).toString("utf8"), b.subarray(-4096).toString("utf8")]));
      }),
      { numRuns: 300 },
    );
  });

  it("finds the id of a request at its start or at its end, whatever else it holds; a notification has none", () => {
    const id = fc.oneof(fc.integer({ min: -1e6, max: 1e9 }), fc.string({ maxLength: 30 }));
    fc.assert(
      fc.property(id, fc.string({ maxLength: 200 }), fc.boolean(), (value, pad, sdkOrder) => {
        const params = { name: "bash", arguments: { command: pad, id: "inner", nested: { id: 7 } } };
        const text = sdkOrder
          ? JSON.stringify({ method: "tools/call", params, jsonrpc: "2.0", id: value })
          : JSON.stringify({ jsonrpc: "2.0", id: value, method: "tools/call", params });
        const message = { bytes: text.length, head: text.slice(0, 4096), tail: text.slice(-4096) };
        expect(oversizeRequestId(message)).toEqual(value);
        const notification = JSON.stringify({ method: "notifications/x", params, jsonrpc: "2.0" });
        expect(oversizeRequestId({ bytes: notification.length, head: notification, tail: notification })).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });
});
