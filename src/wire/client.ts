// A replica that follows one state over SSE, in Node (≥ 20, global fetch) and in the browser. It folds
// every batch with decode + apply; any gap in ids, any batch that fails to decode or apply, and any
// disconnect take one path: drop the replica and decoder and subscribe again for a fresh base.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { apply, decoder, isBase, type Op, type WireOp } from "../delta/index.js";

export type SubscriptionStatus = "connecting" | "live" | "resyncing" | "closed";

export interface SubscribeOptions<T> {
  readonly token: string;
  /** Called after every applied batch with the new value and the batch's ops. */
  readonly onValue?: (value: T, ops: readonly Op[]) => void;
  readonly onStatus?: (status: SubscriptionStatus, detail?: string) => void;
  /** Delay before reconnecting after a failure (default 250 ms, doubling to 5 s). */
  readonly retryDelayMs?: number;
}

export interface Subscription<T> {
  /** The replica; undefined until the first base arrives. */
  readonly value: T | undefined;
  readonly status: SubscriptionStatus;
  /** How many times the stream has been (re)opened. */
  readonly connects: number;
  close(): void;
}

export function subscribe<T = unknown>(url: string, options: SubscribeOptions<T>): Subscription<T> {
  let value: T | undefined;
  let status: SubscriptionStatus = "connecting";
  let connects = 0;
  let stopped = false;
  let controller: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const baseDelay = options.retryDelayMs ?? 250;
  let delay = baseDelay;

  const setStatus = (s: SubscriptionStatus, detail?: string): void => {
    status = s;
    options.onStatus?.(s, detail);
  };

  const retry = (why: string): void => {
    controller?.abort();
    value = undefined;
    if (stopped) return;
    setStatus("resyncing", why);
    timer = setTimeout(connect, delay);
    delay = Math.min(delay * 2, 5000);
  };

  const connect = (): void => {
    if (stopped) return;
    connects++;
    const ac = new AbortController();
    controller = ac;
    const dec = decoder();
    let expected = 0;
    let failed: string | undefined;
    const fail = (why: string): void => {
      if (failed === undefined) failed = why;
      ac.abort();
    };
    const onEvent = (msg: EventSourceMessage): void => {
      if (failed !== undefined) return;
      if (msg.event === "closed") {
        stopped = true;
        setStatus("closed");
        ac.abort();
        return;
      }
      if (msg.event !== "ops") return;
      if (msg.id !== String(expected)) return fail(`gap: expected batch ${expected}, got ${msg.id ?? "none"}`);
      expected++;
      try {
        const wire = JSON.parse(msg.data) as WireOp[];
        const ops = dec.decode(wire);
        if (expected === 1 && !isBase(ops)) return fail("the first batch of a subscription was not a base");
        value = apply(value, ops);
        delay = baseDelay;
        if (status !== "live") setStatus("live");
        options.onValue?.(value as T, ops);
      } catch (err) {
        fail(`could not fold batch ${expected - 1}: ${(err as Error).message}`);
      }
    };
    const parser = createParser({ onEvent });
    void (async () => {
      try {
        const res = await fetch(url, {
          headers: { authorization: `Bearer ${options.token}`, accept: "text/event-stream" },
          signal: ac.signal,
        });
        if (res.status === 404) {
          stopped = true;
          setStatus("closed", `no such state (${url})`);
          return;
        }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value: chunk } = await reader.read();
          if (done) break;
          parser.feed(chunk);
          if (failed !== undefined) break;
        }
        if (!stopped) retry(failed ?? "the server ended the stream");
      } catch (err) {
        if (stopped) return;
        retry(failed ?? `disconnected: ${(err as Error).message}`);
      }
    })();
  };

  connect();
  return {
    get value() {
      return value;
    },
    get status() {
      return status;
    },
    get connects() {
      return connects;
    },
    close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      controller?.abort();
      if (status !== "closed") setStatus("closed");
    },
  };
}
