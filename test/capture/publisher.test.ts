// The publisher against a table of workloads, driven through the real capture and update
// derivation with fake timers: time is simulated, nothing here measures wall-clock speed.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  AdaptivePublisher,
  OutputCapture,
  applyUpdate,
  deriveUpdate,
  measureUpdate,
  resolveLimits,
  type CaptureUpdate,
  type CaptureView,
} from "../../src/capture/index.js";

interface Seen {
  at: number;
  update: CaptureUpdate;
  bytes: number;
}

function rig(opts: { throwOn?: number } = {}) {
  const capture = new OutputCapture(resolveLimits({}));
  const seen: Seen[] = [];
  const errors: unknown[] = [];
  let folded: CaptureView | undefined;
  const publisher = new AdaptivePublisher<CaptureView, CaptureUpdate>({
    snapshot: () => capture.view(),
    update: deriveUpdate,
    measure: measureUpdate,
    publish: (update) => {
      folded = applyUpdate(folded, update);
      seen.push({ at: Date.now(), update, bytes: measureUpdate(update) });
      if (opts.throwOn === seen.length) throw new Error("consumer failed after applying");
    },
    onError: (e) => errors.push(e),
    now: () => Date.now(),
  });
  let n = 0;
  const write = (text: string) => {
    capture.push(Buffer.from(text));
    publisher.markDirty();
  };
  /** Varied lines, so no two writes produce the same text. */
  const lines = (count: number) => {
    let s = "";
    for (let i = 0; i < count; i++) s += `step ${n++} compiled unit_${(n * 7919) % 10007}.c ok\n`;
    return s;
  };
  const finish = () => {
    capture.end();
    publisher.flush(true);
    publisher.dispose();
  };
  return { capture, publisher, seen, errors, write, lines, finish, folded: () => folded };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("adaptive publisher workloads", () => {
  it("below the cap: an immediate initial replace, appends at most every 100 ms, a forced final", () => {
    const r = rig();
    const t0 = Date.now();
    for (let i = 0; i < 30; i++) {
      r.write(r.lines(1));
      vi.advanceTimersByTime(10);
    }
    r.write(r.lines(1));
    r.finish();
    expect(r.seen[0]!.at).toBe(t0);
    expect(r.seen[0]!.update.kind).toBe("replace");
    expect(r.seen.slice(1).every((s) => s.update.kind === "append")).toBe(true);
    for (let i = 1; i < r.seen.length - 1; i++) expect(r.seen[i]!.at - r.seen[i - 1]!.at).toBeGreaterThanOrEqual(100);
    expect(r.seen.length).toBeGreaterThanOrEqual(4);
    expect(r.seen.length).toBeLessThanOrEqual(6);
    expect(r.folded()).toEqual(r.capture.view());
  });

  it("isolated trickle writes publish immediately; sustained writes at most every 100 ms", () => {
    const r = rig();
    const writesAt: number[] = [];
    for (let i = 0; i < 5; i++) {
      writesAt.push(Date.now());
      r.write(r.lines(1));
      vi.advanceTimersByTime(150);
    }
    expect(r.seen.map((s) => s.at)).toEqual(writesAt);
    const before = r.seen.length;
    for (let i = 0; i < 100; i++) {
      r.write(r.lines(1));
      vi.advanceTimersByTime(10);
    }
    const sustained = r.seen.slice(before);
    expect(sustained.length).toBeLessThanOrEqual(11);
    for (let i = 1; i < sustained.length; i++) expect(sustained[i]!.at - sustained[i - 1]!.at).toBeGreaterThanOrEqual(100);
  });

  it("full force above the cap: cap-sized updates spaced by encoded size, about 2 per second and 100 KB/s", () => {
    const r = rig();
    const t0 = Date.now();
    for (let ms = 0; ms < 5000; ms++) {
      r.write(r.lines(40)); // ~1.7 KB per ms: the 50 KB window turns over every ~30 ms
      vi.advanceTimersByTime(1);
    }
    const secs = (Date.now() - t0) / 1000;
    const rate = r.seen.length / secs;
    const bytesPerSec = r.seen.reduce((a, s) => a + s.bytes, 0) / secs;
    expect(rate).toBeGreaterThan(1.5);
    expect(rate).toBeLessThan(3);
    expect(bytesPerSec).toBeLessThan(130 * 1024);
    for (let i = 1; i < r.seen.length; i++) {
      const gap = r.seen[i]!.at - r.seen[i - 1]!.at;
      expect(gap).toBeGreaterThanOrEqual(Math.floor((r.seen[i - 1]!.bytes * 1000) / (100 * 1024)));
    }
    expect(r.seen.slice(1).some((s) => s.bytes > 45 * 1024)).toBe(true);
  });

  it("a trickle after the cap gives small slides", () => {
    const r = rig();
    r.write(r.lines(3000));
    vi.advanceTimersByTime(2000);
    const before = r.seen.length;
    for (let i = 0; i < 10; i++) {
      r.write(r.lines(1));
      vi.advanceTimersByTime(300);
    }
    const trickle = r.seen.slice(before);
    expect(trickle.length).toBe(10);
    for (const s of trickle) {
      expect(s.update.kind).toBe("slide");
      expect(s.bytes).toBeLessThan(1024);
    }
    expect(r.folded()).toEqual(r.capture.view());
  });

  it("a burst then silence gives one leading and one trailing update, and no polling", () => {
    const r = rig();
    for (let i = 0; i < 200; i++) r.write(r.lines(1));
    expect(r.seen.length).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(r.seen.length).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
    expect(r.folded()).toEqual(r.capture.view());
  });

  it("many writes before the deadline keep exactly one trailing timer", () => {
    const r = rig();
    r.write(r.lines(1));
    for (let i = 0; i < 50; i++) {
      r.write(r.lines(1));
      expect(vi.getTimerCount()).toBe(1);
    }
  });

  it("a forced flush bypasses the deadline and cancels the trailing timer", () => {
    const r = rig();
    r.write(r.lines(1));
    r.write(r.lines(1));
    expect(r.seen.length).toBe(1);
    r.publisher.flush(true);
    expect(r.seen.length).toBe(2);
    expect(r.seen[1]!.at).toBe(r.seen[0]!.at);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the baseline is committed before publishing: an apply-then-throw never redelivers the same delta", () => {
    const r = rig({ throwOn: 2 });
    r.write("first\n");
    vi.advanceTimersByTime(50);
    r.write("second\n");
    vi.advanceTimersByTime(200); // the trailing timer publishes "second" and the consumer throws
    expect(r.errors.length).toBe(1);
    r.write("third\n");
    vi.advanceTimersByTime(200);
    r.finish();
    const appended = r.seen.filter((s) => s.update.kind === "append").map((s) => (s.update as { text: string }).text);
    expect(appended).toEqual(["second\n", "third\n"]);
    expect(r.folded()!.text).toBe("first\nsecond\nthird\n");
  });

  it("nothing is published after dispose", () => {
    const r = rig();
    r.write(r.lines(1));
    r.write(r.lines(1));
    r.publisher.dispose();
    vi.advanceTimersByTime(1000);
    expect(r.seen.length).toBe(1);
  });

  it("setMinInterval spaces the publications after the next one, and a shorter interval brings the pace back", () => {
    const r = rig();
    const gaps = (): number[] => r.seen.slice(1).map((s, i) => s.at - r.seen[i]!.at);
    // Sustained writes every 10 ms: 100 ms apart at first.
    const sustain = (ms: number) => {
      for (let t = 0; t < ms; t += 10) {
        r.write(r.lines(1));
        vi.advanceTimersByTime(10);
      }
    };
    sustain(500);
    expect(Math.min(...gaps())).toBeGreaterThanOrEqual(100);
    expect(Math.max(...gaps())).toBeLessThan(150);
    r.publisher.setMinInterval(1000);
    const from = r.seen.length;
    sustain(3500);
    const slow = gaps().slice(from);
    expect(slow.length).toBeGreaterThanOrEqual(2);
    expect(Math.min(...slow)).toBeGreaterThanOrEqual(1000);
    r.publisher.setMinInterval(100);
    const back = r.seen.length;
    sustain(2000);
    expect(Math.max(...gaps().slice(back + 1))).toBeLessThan(150);
    r.finish();
    expect(r.folded()!.text).toBe(r.capture.view().text);
  });
});
