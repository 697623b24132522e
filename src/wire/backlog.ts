// How much the SSE server may hold for subscribers that have not read it yet. Each subscriber's unsent
// bytes count against its own limit, and the memory they pin counts against one process-wide cap (a
// batch's large values are one Buffer shared by every subscriber's frame — frame.ts — so they are
// counted once for as long as any subscriber still holds them). A frame is queued only when neither
// would be passed:
// - a subscriber whose unsent bytes would pass its limit is dropped (it reconnects and gets a fresh
//   base, which is never larger than the backlog it left behind);
// - when the cap would be passed, subscribers that have stalled (their unsent bytes have not gone down
//   for a while) are dropped, stalest first; if that is not enough, the subscriber being written to is
//   dropped instead of queueing more.
// A frame is always queued when nothing at all is held — a state larger than the cap must still reach
// someone — so what is held stays under the cap plus one frame, whatever the batch sizes and the
// client count. Measured before this rule (the limit was checked before a write, never against the
// frame, and every subscriber had its own copy): 50 paused clients and one 20 MB batch held 2.0 GB.

export interface Outbox {
  /** Bytes queued but not yet taken by the kernel. */
  readonly unsent: number;
  /** Close the subscriber's connection (it will reconnect). */
  drop(): void;
}

export interface Frame {
  readonly bytes: number;
  /** Buffers in the frame that other subscribers' frames may share. */
  readonly shared: readonly Buffer[];
}

export interface Backlog {
  add(box: Outbox): void;
  remove(box: Outbox): void;
  /** Whether `frame` may be queued on `box` (the caller then writes it); drops `box` or stalled boxes as the rule says. */
  admit(box: Outbox, frame: Frame): boolean;
  /** Subscribers dropped so far for leaving too much unsent. */
  readonly dropped: number;
  /** Bytes held for subscribers that have not taken them yet, shared buffers counted once. */
  readonly held: number;
}

export interface BacklogLimits {
  readonly perSubscriber: number;
  readonly total: number;
  /** How long a subscriber's unsent bytes must stay put before the cap may drop it (default 500 ms). */
  readonly stalledMs?: number;
}

interface Track {
  /** Bytes admitted so far; the kernel has taken `written - unsent` of them. */
  written: number;
  /** Shared buffers queued, with the byte position their frame ends at (oldest first). */
  held: { buf: Buffer; end: number }[];
  lastUnsent: number;
  movedAt: number;
}

export function createBacklog(limits: BacklogLimits): Backlog {
  const boxes = new Map<Outbox, Track>();
  const stalledMs = limits.stalledMs ?? 500;
  let dropped = 0;

  const drop = (box: Outbox): void => {
    boxes.delete(box);
    dropped++;
    box.drop();
  };

  /** What every box holds now: private bytes plus each shared buffer once. Updates progress marks. */
  const measure = (now: number): { total: number; shared: Set<Buffer> } => {
    const shared = new Set<Buffer>();
    let total = 0;
    for (const [box, t] of boxes) {
      const unsent = box.unsent;
      if (unsent < t.lastUnsent || unsent === 0) t.movedAt = now;
      t.lastUnsent = unsent;
      const sentUpTo = t.written - unsent;
      let i = 0;
      while (i < t.held.length && t.held[i]!.end <= sentUpTo) i++;
      if (i > 0) t.held.splice(0, i);
      let sharedBytes = 0;
      for (const h of t.held) {
        sharedBytes += h.buf.length;
        if (!shared.has(h.buf)) {
          shared.add(h.buf);
          total += h.buf.length;
        }
      }
      total += Math.max(0, unsent - sharedBytes);
    }
    return { total, shared };
  };

  return {
    add: (box) => void boxes.set(box, { written: 0, held: [], lastUnsent: box.unsent, movedAt: performance.now() }),
    remove: (box) => void boxes.delete(box),
    get dropped() {
      return dropped;
    },
    get held() {
      return measure(performance.now()).total;
    },
    admit(box, frame) {
      const track = boxes.get(box);
      if (track === undefined) return false;
      const unsent = box.unsent;
      if (unsent > 0 && unsent + frame.bytes > limits.perSubscriber) {
        drop(box);
        return false;
      }
      const now = performance.now();
      let { total, shared } = measure(now);
      const added = (): number => frame.bytes - frame.shared.reduce((n, b) => n + (shared.has(b) ? b.length : 0), 0);
      if (total + added() > limits.total) {
        const stalled = [...boxes]
          .filter(([b, t]) => b !== box && t.lastUnsent > 0 && now - t.movedAt >= stalledMs)
          .sort((x, y) => x[1].movedAt - y[1].movedAt);
        for (const [b] of stalled) {
          drop(b);
          ({ total, shared } = measure(now));
          if (total + added() <= limits.total) break;
        }
      }
      if (total > 0 && total + added() > limits.total) {
        drop(box);
        return false;
      }
      track.written += frame.bytes;
      track.lastUnsent = unsent + frame.bytes;
      for (const buf of frame.shared) track.held.push({ buf, end: track.written });
      return true;
    },
  };
}
