// How much the SSE server may leave unsent. Every subscriber's unsent bytes count against its own
// limit and against one process-wide cap, and a frame is queued only when neither would be passed:
// - a subscriber whose unsent bytes would pass its limit is dropped (it reconnects and gets a fresh
//   base, which is never larger than the backlog it left behind);
// - when the cap would be passed, subscribers that have made no progress for a while (their unsent
//   bytes have not gone down) are dropped, stalest first; if that is not enough, the subscriber being
//   written to is dropped instead of queueing more.
// A frame to a subscriber that has nothing unsent while nobody else holds anything is always queued —
// a state larger than the cap must still reach someone — so unsent bytes stay under the cap plus one
// frame, whatever the batch sizes and the client count.
// Measured before this rule (the limit was checked before a write, never against the frame): 50 paused
// clients and one 20 MB batch held 2.0 GB.

export interface Outbox {
  /** Bytes queued but not yet taken by the kernel. */
  readonly unsent: number;
  /** Close the subscriber's connection (it will reconnect). */
  drop(): void;
}

export interface Backlog {
  add(box: Outbox): void;
  remove(box: Outbox): void;
  /** Whether `bytes` more may be queued on `box`; drops `box` or stalled boxes as the rule says. */
  admit(box: Outbox, bytes: number): boolean;
  /** Subscribers dropped so far for leaving too much unsent. */
  readonly dropped: number;
}

export interface BacklogLimits {
  readonly perSubscriber: number;
  readonly total: number;
  /** How long a subscriber's unsent bytes must stay put before the cap may drop it (default 500 ms). */
  readonly stalledMs?: number;
}

interface Progress {
  unsent: number;
  movedAt: number;
}

export function createBacklog(limits: BacklogLimits): Backlog {
  const boxes = new Map<Outbox, Progress>();
  const stalledMs = limits.stalledMs ?? 500;
  let dropped = 0;
  const drop = (box: Outbox): void => {
    boxes.delete(box);
    dropped++;
    box.drop();
  };
  return {
    add: (box) => void boxes.set(box, { unsent: box.unsent, movedAt: performance.now() }),
    remove: (box) => void boxes.delete(box),
    get dropped() {
      return dropped;
    },
    admit(box, bytes) {
      const now = performance.now();
      if (box.unsent > 0 && box.unsent + bytes > limits.perSubscriber) {
        drop(box);
        return false;
      }
      let sum = 0;
      for (const [b, p] of boxes) {
        const unsent = b.unsent;
        if (unsent < p.unsent || unsent === 0) p.movedAt = now;
        p.unsent = unsent;
        sum += unsent;
      }
      if (sum + bytes > limits.total) {
        const stalled = [...boxes]
          .filter(([b, p]) => b !== box && p.unsent > 0 && now - p.movedAt >= stalledMs)
          .sort((x, y) => x[1].movedAt - y[1].movedAt);
        for (const [b, p] of stalled) {
          if (sum + bytes <= limits.total) break;
          sum -= p.unsent;
          drop(b);
        }
      }
      if (sum + bytes > limits.total && sum - box.unsent > 0) {
        drop(box);
        return false;
      }
      const mine = boxes.get(box);
      if (mine) mine.unsent = box.unsent + bytes;
      return true;
    },
  };
}
