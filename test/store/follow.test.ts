// Following a JSONL session while its writer appends (what `spool serve` does for a live session):
// after every poll the follower holds exactly what a fresh read-only load holds; it reads only bytes
// past the offset already consumed; torn lines wait for the next poll; damage names file and line.
import { appendFileSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  appendList,
  CorruptSessionError,
  ephemeralScope,
  followJsonlSession,
  list,
  openJsonlStore,
  readJsonlSnapshot,
  retireScope,
  setValue,
  value,
  type SessionSnapshot,
} from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);

const newMain = () => join(tempDir(), "session.jsonl");
const KEYS = ["a", "b"] as const;
const SCOPES = ["op:1", "op:2"] as const;

/** Everything the test writes, read through one snapshot. */
function contents(s: SessionSnapshot): unknown {
  const out: Record<string, unknown> = {};
  for (const k of KEYS) {
    out[`v:${k}`] = s.get(value<unknown>("ns", k));
    out[`l:${k}`] = s.readList(list<unknown>("ns", k), { limit: 1000 }).elements;
    for (const sc of SCOPES) out[`${sc}:${k}`] = s.readList(list<unknown>("ns", k, ephemeralScope(sc)), { limit: 1000 }).elements;
  }
  out.stats = s.stats();
  return out;
}

type Step =
  | { kind: "set"; key: (typeof KEYS)[number]; v: string }
  | { kind: "append"; key: (typeof KEYS)[number]; v: string; scope?: (typeof SCOPES)[number] }
  | { kind: "retire"; scope: (typeof SCOPES)[number] };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), key: fc.constantFrom(...KEYS), v: fc.string({ maxLength: 30 }) }),
  fc.record({ kind: fc.constant("append" as const), key: fc.constantFrom(...KEYS), v: fc.string({ maxLength: 30 }) }),
  fc.record({ kind: fc.constant("append" as const), key: fc.constantFrom(...KEYS), v: fc.string({ maxLength: 30 }), scope: fc.constantFrom(...SCOPES) }),
  fc.record({ kind: fc.constant("retire" as const), scope: fc.constantFrom(...SCOPES) }),
);

describe("followJsonlSession", () => {
  it("after every poll it holds what a fresh read-only load holds, across sidecars and retirements", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(step, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }), async (rounds) => {
        const main = newMain();
        const store = await openJsonlStore(main, { sessionId: "s" });
        const follower = followJsonlSession(main);
        try {
          for (const round of rounds) {
            for (const s of round) {
              if (s.kind === "set") await store.commit([setValue(value("ns", s.key), s.v)]);
              else if (s.kind === "append" && s.scope) await store.commit([appendList(list("ns", s.key, ephemeralScope(s.scope)), s.v)]);
              else if (s.kind === "append") await store.commit([appendList(list("ns", s.key), s.v)]);
              else await store.commit([retireScope(ephemeralScope(s.scope))]);
            }
            follower.poll();
            expect(contents(follower.snapshot)).toEqual(contents(readJsonlSnapshot(main)));
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it("a poll reads only bytes past the offset already read: damage behind it is found by the read that reaches it, and by a full load", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "s" });
    for (let i = 0; i < 20; i++) await store.commit([appendList(list("ns", "a"), `line ${i}`)]);
    const follower = followJsonlSession(main);
    // Damage a line already consumed (same length, so offsets stay put).
    const text = readFileSync(main, "utf8");
    writeFileSync(main, text.replace('"line 5"', '"line X"'));
    await store.commit([appendList(list("ns", "a"), "line 20")]);
    expect(follower.poll()).toBe(true);
    // The session scope is read from the file: a page that does not reach the damaged line is fine,
    // one that does names it (line 7: the header, then "line 0" on line 2).
    const tail = follower.snapshot.readList<string>(list("ns", "a"), { order: "desc", limit: 10 }).elements.map((e) => e.value);
    expect(tail).toEqual(Array.from({ length: 10 }, (_, i) => `line ${20 - i}`));
    expect(() => follower.snapshot.readList<string>(list("ns", "a"), { limit: 100 })).toThrow(/session\.jsonl:7: the line is damaged/);
    expect(() => readJsonlSnapshot(main)).toThrow(CorruptSessionError);
    await store.close();
  });

  it("an unchanged session is not read again, and a half-written line waits for the next poll", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "s" });
    await store.commit([setValue(value("ns", "a"), 1)]);
    await store.close();
    const follower = followJsonlSession(main);
    expect(follower.poll()).toBe(false);
    const full = readFileSync(main, "utf8");
    const store2 = await openJsonlStore(main, {});
    await store2.commit([setValue(value("ns", "a"), 2)]);
    await store2.close();
    const grown = readFileSync(main, "utf8");
    const added = grown.slice(full.length);
    writeFileSync(main, full + added.slice(0, 10)); // a write still landing
    expect(follower.poll()).toBe(false);
    expect(follower.snapshot.get(value<number>("ns", "a"))).toBe(1);
    appendFileSync(main, added.slice(10));
    expect(follower.poll()).toBe(true);
    expect(follower.snapshot.get(value<number>("ns", "a"))).toBe(2);
  });

  it("a damaged line followed by more lines is reported with its file and line", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "s" });
    await store.commit([setValue(value("ns", "a"), 1)]);
    await store.close();
    const follower = followJsonlSession(main);
    appendFileSync(main, '{"seq":9,"w":[],"h":"00000000"}\n{"seq":10,"w":[],"h":"00000000"}\n');
    expect(() => follower.poll()).toThrow(/session\.jsonl:3: /);
    try {
      follower.poll();
    } catch (err) {
      expect(err).toBeInstanceOf(CorruptSessionError);
      expect((err as CorruptSessionError).message).toContain(main);
    }
  });

  it("a log that shrank (a writer repaired its torn tail) is read again from the start", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "s" });
    await store.commit([setValue(value("ns", "a"), 1)]);
    await store.commit([setValue(value("ns", "b"), 2)]);
    await store.close();
    const follower = followJsonlSession(main);
    const lines = readFileSync(main, "utf8").split("\n");
    truncateSync(main, Buffer.byteLength(lines.slice(0, 2).join("\n") + "\n"));
    const store2 = await openJsonlStore(main, {});
    await store2.commit([setValue(value("ns", "a"), 3)]);
    await store2.close();
    follower.poll();
    expect(contents(follower.snapshot)).toEqual(contents(readJsonlSnapshot(main)));
    expect(follower.snapshot.get(value("ns", "b"))).toBeUndefined();
  });

  it("a settled scope (its sidecar unlinked after the retirement) is followed on, not read again from the start", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "s" });
    const follower = followJsonlSession(main);
    for (let k = 0; k < 20; k++) {
      const op = ephemeralScope(`op:${k}`);
      await store.commit([appendList(list("ns", "out", op), `line ${k}`)]);
      follower.poll();
      await store.commit([appendList(list("ns", "a"), k), retireScope(op)]);
      // The poll lists the directory (the sidecar is gone) before it reads the retirement in the main log.
      expect(follower.poll()).toBe(true);
      expect(contents(follower.snapshot)).toEqual(contents(readJsonlSnapshot(main)));
    }
    expect(follower.restarts).toBe(0);
    await store.close();
  });

  it("a sidecar removed with no retirement behind it makes the follower read the session again", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "s" });
    await store.commit([appendList(list("ns", "a", ephemeralScope("op:1")), "kept?")]);
    const follower = followJsonlSession(main);
    expect(follower.snapshot.readList(list("ns", "a", ephemeralScope("op:1"))).elements.map((e) => e.value)).toEqual(["kept?"]);
    rmSync(`${main}.scopes/scope-op%3A1.scope`);
    await store.commit([setValue(value("ns", "v"), 1)]);
    follower.poll();
    expect(follower.restarts).toBe(1);
    expect(follower.snapshot.readList(list("ns", "a", ephemeralScope("op:1"))).elements).toEqual([]);
    expect(contents(follower.snapshot)).toEqual(contents(readJsonlSnapshot(main)));
    await store.close();
  });
});
