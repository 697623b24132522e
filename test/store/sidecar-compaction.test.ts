// A long operation's sidecar is rewritten as its live records (compact-sidecar.ts): its size on disk
// follows what its scope holds, not how long the operation ran; a session whose sidecars were rewritten
// reads, reopens and allocates seqs exactly as the memory backend does; a follower reads a rewritten
// sidecar again alone. SIGKILLs inside rewrites are in crash.test.ts.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  appendList,
  createMemoryStore,
  deleteList,
  deleteValue,
  ephemeralScope,
  followJsonlSession,
  list,
  openJsonlStore,
  readJsonlSnapshot,
  retireScope,
  setValue,
  value,
  type EphemeralScope,
  type SessionSnapshot,
  type Store,
  type Write,
} from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);

const newMain = () => join(tempDir(), "session.jsonl");
const sidecarOf = (main: string, id: string) => join(`${main}.scopes`, `scope-${encodeURIComponent(id)}.scope`);
const MiB = 1024 * 1024;

/**
 * `flushes` flushes of a dev server's output as the harness persists them: a ~700-byte batch each,
 * and every 50th the 50 KB window so far as a base, committed with a clear of the list. Returns the
 * largest size the sidecar had after any flush, and what recovery must read back.
 */
async function longOperation(store: Store, main: string, flushes: number): Promise<{ largest: number; expected: string[] }> {
  const op = ephemeralScope("op:dev-server");
  const out = list<string>("tool_output", "call_1", op);
  let window = "";
  let expected: string[] = [];
  let largest = 0;
  for (let i = 0; i < flushes; i++) {
    const chunk = `[${i}] GET /api/items?page=${i % 97} 200 in ${(i * 7919) % 1000} ms\n`.repeat(14);
    window = (window + chunk).slice(-50_000);
    if (i % 50 === 0) {
      await store.commit([deleteList(out), appendList(out, window, "base")]);
      expected = [window];
    } else {
      await store.commit([appendList(out, chunk)]);
      expected.push(chunk);
    }
    largest = Math.max(largest, statSync(sidecarOf(main, "op:dev-server")).size);
  }
  return { largest, expected };
}

const recovered = (s: Pick<Store, "readList">) =>
  s
    .readList(list<string>("tool_output", "call_1", ephemeralScope("op:dev-server")), { order: "desc", stopAtTag: "base", limit: 100 })
    .elements.map((e) => e.value)
    .reverse();

describe("a long operation's sidecar", () => {
  it("stays bounded on disk: 5,000 flushes of a rolling window keep it under 1.1 MiB (never rewritten: 8 MB)", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "long" });
    const { largest, expected } = await longOperation(store, main, 5000);
    // Rewritten once it reaches 1 MiB (and 4 × its last rewritten size, ~100 KB here), so it never
    // passes 1 MiB by more than the transaction that crossed it.
    expect(largest).toBeLessThan(1.1 * MiB);
    expect(recovered(store)).toEqual(expected);
    await store.close();
    const again = await openJsonlStore(main);
    expect(recovered(again)).toEqual(expected);
    // 5,000 flushes of 1 or 2 writes, then one more seq: none reused, none skipped.
    expect((await again.commit([setValue(value("probe"), 1)])).seq).toBe(5000 + 100 + 1);
    await again.close();

    const never = newMain();
    const old = await openJsonlStore(never, { sessionId: "long", sidecarCompactBytes: Number.POSITIVE_INFINITY });
    expect((await longOperation(old, never, 5000)).largest).toBeGreaterThan(8 * MiB);
    await old.close();
  });

  it("one an older spool let grow is rewritten at the first write after open", async () => {
    const main = newMain();
    const old = await openJsonlStore(main, { sessionId: "long", sidecarCompactBytes: Number.POSITIVE_INFINITY });
    const { expected } = await longOperation(old, main, 2000);
    await old.close();
    expect(statSync(sidecarOf(main, "op:dev-server")).size).toBeGreaterThan(3 * MiB);
    const store = await openJsonlStore(main);
    const op = ephemeralScope("op:dev-server");
    await store.commit([appendList(list<string>("tool_output", "call_1", op), "one more\n")]);
    expect(statSync(sidecarOf(main, "op:dev-server")).size).toBeLessThan(200 * 1024);
    expect(recovered(store)).toEqual([...expected, "one more\n"]);
    await store.close();
    expect(readdirSync(`${main}.scopes`)).toEqual(["scope-op%3Adev-server.scope"]);
  });
});

// ---- a rewritten session equals the memory backend ------------------------------------------------

const SCOPES = ["op:1", "op/2 é"] as const;
const NAMES = ["a", "b"] as const;
type Scoped = { op: "set" | "delete" | "append" | "clear"; name: (typeof NAMES)[number]; v: string; tag: boolean };
type Step =
  | { kind: "tx"; scope: (typeof SCOPES)[number]; writes: Scoped[] }
  | { kind: "session"; name: (typeof NAMES)[number]; v: string }
  | { kind: "retire"; scope: (typeof SCOPES)[number] }
  | { kind: "reopen" };

const scopedWrite: fc.Arbitrary<Scoped> = fc.record({
  op: fc.constantFrom("set", "delete", "append", "append", "append", "clear"),
  name: fc.constantFrom(...NAMES),
  v: fc.string({ maxLength: 40 }),
  tag: fc.boolean(),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("tx" as const),
      scope: fc.constantFrom(...SCOPES),
      writes: fc.array(scopedWrite, { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("session" as const), name: fc.constantFrom(...NAMES), v: fc.string({ maxLength: 10 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("retire" as const), scope: fc.constantFrom(...SCOPES) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reopen" as const }) },
);

/** Commits a step's transaction (session or one scope: the two are different write types). */
async function commitStep(store: Store, s: Exclude<Step, { kind: "reopen" }>): Promise<number> {
  if (s.kind === "session") return (await store.commit([setValue(value("s", s.name), s.v)])).seq;
  if (s.kind === "retire") return (await store.commit([retireScope(ephemeralScope(s.scope))])).seq;
  const scope = ephemeralScope(s.scope);
  const writes = s.writes.map((w): Write<EphemeralScope> => {
    switch (w.op) {
      case "set":
        return setValue(value("v", w.name, scope), w.v);
      case "delete":
        return deleteValue(value("v", w.name, scope));
      case "append":
        return appendList(list("l", w.name, scope), w.v, w.tag ? "base" : undefined);
      case "clear":
        return deleteList(list("l", w.name, scope));
    }
  });
  return (await store.commit(writes)).seq;
}

/** Everything the steps can write, as one reader sees it: values, and lists with their seqs and tags. */
function contents(s: Pick<SessionSnapshot, "get" | "readList">): unknown {
  const out: Record<string, unknown> = {};
  for (const n of NAMES) {
    out[`s:${n}`] = s.get(value("s", n));
    for (const id of SCOPES) {
      const scope = ephemeralScope(id);
      out[`${id}:v:${n}`] = s.get(value("v", n, scope));
      out[`${id}:l:${n}`] = s.readList(list("l", n, scope), { limit: 10_000 }).elements;
    }
  }
  return out;
}

describe("a session whose sidecars were rewritten", () => {
  it("reads, reopens and allocates seqs like the memory backend, and a follower keeps up without starting over", async () => {
    let rereads = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), fc.boolean(), async (steps, durable) => {
        const main = newMain();
        // 1 byte: every sidecar is rewritten whenever it has grown 4 × since its last rewrite.
        const open = () => openJsonlStore(main, { sessionId: "p", sidecarCompactBytes: 1, durability: durable ? "os" : "process" });
        const model = createMemoryStore();
        let store = await open();
        const follower = followJsonlSession(main);
        try {
          for (const s of steps) {
            if (s.kind === "reopen") {
              await store.close();
              store = await open();
            } else {
              // The same seq from both: after a rewrite and a reopen, the next seq is still right above
              // the last one used (a rewrite keeps the file's highest seq even when its write was a clear).
              expect(await commitStep(store, s)).toBe(await commitStep(model, s));
            }
            const want = contents(model);
            expect(contents(store)).toEqual(want);
            follower.poll();
            expect(contents(follower.snapshot)).toEqual(want);
          }
          await store.close();
          expect(contents(readJsonlSnapshot(main))).toEqual(contents(model));
          store = await open();
          expect(contents(store)).toEqual(contents(model));
          expect((await store.commit([setValue(value("probe"), 1)])).seq).toBe((await model.commit([setValue(value("probe"), 1)])).seq);
          expect(follower.restarts).toBe(0);
          rereads += follower.rereads;
        } finally {
          await store.close();
        }
      }),
      { numRuns: 150 },
    );
    expect(rereads).toBeGreaterThan(0);
  });
});
