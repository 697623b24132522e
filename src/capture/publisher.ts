// Adaptive publisher: the first change after idle goes out at once; later ones wait
// max(minInterval, encodedBytes / targetBytesPerSecond) after the previous publication, collapsing into
// the latest state (no queue); one trailing timer guarantees the last state goes out. A cap-sized
// update therefore buys proportionally more silence: ~2 updates and ~100 KB per second at full force
// with a 50 KB window, whatever the producer's rate. Unpaced (no interval, no byte budget) every
// change goes out at once and neither the clock nor the batch size is read: two clock reads and a
// measure were ~15% of an unpaced sink write.
import { monotonicMs } from "./clock.js";

export interface PublisherOptions<V, U> {
  snapshot(): V;
  /** undefined = nothing worth publishing; the baseline still advances. */
  update(prev: V | undefined, cur: V): U | undefined;
  measure(update: U): number;
  publish(update: U): void;
  /** Errors thrown by `publish` from the trailing timer (synchronous calls throw to the caller). */
  onError(error: unknown): void;
  minIntervalMs?: number;
  targetBytesPerSecond?: number;
  now?: () => number;
}

export class AdaptivePublisher<V, U> {
  private baseline: V | undefined;
  private dirty = false;
  private nextAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private minIntervalMs: number;
  private readonly targetBytesPerSecond: number;
  private readonly now: () => number;
  private unpaced: boolean;

  constructor(private readonly options: PublisherOptions<V, U>) {
    this.minIntervalMs = options.minIntervalMs ?? 100;
    this.targetBytesPerSecond = options.targetBytesPerSecond ?? 100 * 1024;
    this.now = options.now ?? monotonicMs;
    this.unpaced = this.minIntervalMs <= 0 && !(this.targetBytesPerSecond < Infinity);
  }

  /**
   * From now on, publications at least `ms` apart (the next deadline counts from the last one). An
   * armed trailing timer keeps its time: the new spacing applies from the next publication.
   */
  setMinInterval(ms: number): void {
    this.minIntervalMs = ms;
    this.unpaced = ms <= 0 && !(this.targetBytesPerSecond < Infinity);
  }

  /** Something changed. Publishes now if the deadline has passed, else arms the one trailing timer. */
  markDirty(): void {
    if (this.disposed) return;
    this.dirty = true;
    if (this.timer !== undefined) return;
    const wait = this.unpaced ? 0 : this.nextAt - this.now();
    if (wait <= 0) this.publishNow();
    else this.timer = setTimeout(() => this.onTimer(), Math.ceil(wait));
  }

  /** force: bypass the deadline (finalisation, spill path, correctness boundaries). */
  flush(force = false): void {
    if (this.disposed) return;
    if (!force) {
      if (this.dirty) this.markDirty();
      return;
    }
    this.clearTimer();
    this.publishNow();
  }

  dispose(): void {
    this.disposed = true;
    this.clearTimer();
  }

  private onTimer(): void {
    this.timer = undefined;
    if (this.disposed || !this.dirty) return;
    try {
      this.publishNow();
    } catch (error) {
      this.options.onError(error);
    }
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private publishNow(): void {
    this.dirty = false;
    const cur = this.options.snapshot();
    const update = this.options.update(this.baseline, cur);
    // Commit before publishing: if publish throws after the consumer applied the update, a later
    // flush must not derive (and deliver) the same delta again.
    this.baseline = cur;
    if (update === undefined) return;
    if (!this.unpaced) {
      const spacing = this.targetBytesPerSecond < Infinity ? (this.options.measure(update) * 1000) / this.targetBytesPerSecond : 0;
      this.nextAt = this.now() + Math.max(this.minIntervalMs, spacing);
    }
    this.options.publish(update);
  }
}
