// One conformance suite, run against memory, JSONL and SQLite.
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  appendList,
  createMemoryStore,
  deleteList,
  deleteValue,
  ephemeralScope,
  list,
  MixedScopeError,
  retireScope,
  setValue,
  StoreClosedError,
  value,
  WriteError,
  type EphemeralScope,
  type Store,
  type Write,
  type Scope,
} from "../../src/store/index.js";
import { backends, removeTempDirs } from "./helpers/backends.js";

afterAll(removeTempDirs);

const A = ephemeralScope("op:A");
const B = ephemeralScope("op:B");
const sv = (k: string) => value<unknown>("s", k);
const ev = (k: string, s: EphemeralScope = A) => value<unknown>("e", k, s);
const sl = (k: string) => list<unknown>("s", k);
const el = (k: string, s: EphemeralScope = A) => list<unknown>("e", k, s);
const values = (store: Store, k: string, s: EphemeralScope) => store.readList(el(k, s)).elements.map((e) => e.value);

describe.each(backends())("$name backend", (backend) => {
  it("sets, gets, replaces and deletes an ephemeral scalar", async () => {
    const { store } = await backend.fresh();
    await store.commit([setValue(ev("x"), { n: 1 })]);
    expect(store.get(ev("x"))).toEqual({ n: 1 });
    await store.commit([setValue(ev("x"), [2, "two"])]);
    expect(store.get(ev("x"))).toEqual([2, "two"]);
    await store.commit([deleteValue(ev("x"))]);
    expect(store.get(ev("x"))).toBeUndefined();
    await store.close();
  });

  it("appends, pages and deletes a whole ephemeral list", async () => {
    const { store } = await backend.fresh();
    for (let i = 0; i < 7; i++) await store.commit([appendList(el("l"), i)]);
    const p1 = store.readList(el("l"), { limit: 3 });
    expect(p1.elements.map((e) => e.value)).toEqual([0, 1, 2]);
    const p2 = store.readList(el("l"), { limit: 3, cursor: p1.cursor! });
    expect(p2.elements.map((e) => e.value)).toEqual([3, 4, 5]);
    const p3 = store.readList(el("l"), { limit: 3, cursor: p2.cursor! });
    expect(p3.elements.map((e) => e.value)).toEqual([6]);
    expect(p3.cursor).toBeUndefined();
    await store.commit([deleteList(el("l"))]);
    expect(store.readList(el("l")).elements).toEqual([]);
    await store.close();
  });

  it("keeps scopes with equal namespace/key independent", async () => {
    const { store } = await backend.fresh();
    await store.commit([setValue(ev("k", A), "a"), appendList(el("k", A), "a1")]);
    await store.commit([setValue(ev("k", B), "b"), appendList(el("k", B), "b1")]);
    expect(store.get(ev("k", A))).toBe("a");
    expect(store.get(ev("k", B))).toBe("b");
    expect(values(store, "k", A)).toEqual(["a1"]);
    expect(values(store, "k", B)).toEqual(["b1"]);
    await store.close();
  });

  it("keeps the session scope independent of an equal ephemeral address", async () => {
    const { store } = await backend.fresh();
    await store.commit([setValue(value("n", "k"), "session"), appendList(list("n", "k"), "s")]);
    await store.commit([setValue(value("n", "k", A), "scoped"), appendList(list("n", "k", A), "e")]);
    await store.commit([retireScope(A)]);
    expect(store.get(value("n", "k"))).toBe("session");
    expect(store.readList(list("n", "k")).elements.map((e) => e.value)).toEqual(["s"]);
    expect(store.get(value("n", "k", A))).toBeUndefined();
    await store.close();
  });

  it("rejects a mixed-scope transaction before any mutation", async () => {
    const { store } = await backend.fresh();
    const writes = [setValue(sv("a"), 1), setValue(ev("a"), 2)] as unknown as Write[];
    await expect(store.commit(writes)).rejects.toBeInstanceOf(MixedScopeError);
    expect(store.get(sv("a"))).toBeUndefined();
    expect(store.get(ev("a"))).toBeUndefined();
    // The rejected transaction consumed no seq either.
    const { seq } = await store.commit([setValue(sv("b"), 1)]);
    expect(seq).toBe(1);
    await store.close();
  });

  it("rejects two ephemeral ids in one transaction before any mutation", async () => {
    const { store } = await backend.fresh();
    await expect(store.commit([appendList(el("l", A), 1), appendList(el("l", B), 2)])).rejects.toBeInstanceOf(MixedScopeError);
    expect(values(store, "l", A)).toEqual([]);
    expect(values(store, "l", B)).toEqual([]);
    await store.close();
  });

  it("rejects a transaction holding a non-JSON value before any mutation", async () => {
    const { store } = await backend.fresh();
    await store.commit([setValue(ev("x"), 1)]);
    await expect(store.commit([setValue(sv("a"), 1), retireScope(A), setValue(sv("b"), Number.NaN)])).rejects.toBeInstanceOf(WriteError);
    await expect(store.commit([setValue(sv("a"), new Map())])).rejects.toThrow(/Map/);
    await expect(store.commit([])).rejects.toBeInstanceOf(WriteError);
    expect(store.get(sv("a"))).toBeUndefined();
    expect(store.get(ev("x"))).toBe(1);
    await store.close();
  });

  it("snapshots values at commit and returns a fresh copy on every read", async () => {
    const { store } = await backend.fresh();
    const v = { items: [1] };
    const p = store.commit([setValue(sv("v"), v)]);
    v.items.push(2);
    await p;
    const read = store.get<{ items: number[] }>(value("s", "v"))!;
    expect(read).toEqual({ items: [1] });
    read.items.push(3);
    expect(store.get(sv("v"))).toEqual({ items: [1] });
    await store.close();
  });

  it("retirement deletes exactly its scope", async () => {
    const { store } = await backend.fresh();
    await store.commit([setValue(sv("k"), "s"), appendList(sl("k"), "s")]);
    await store.commit([setValue(ev("k", A), "a"), appendList(el("k", A), "a")]);
    await store.commit([setValue(ev("k", B), "b"), appendList(el("k", B), "b")]);
    await store.commit([retireScope(A)]);
    expect(store.get(ev("k", A))).toBeUndefined();
    expect(values(store, "k", A)).toEqual([]);
    expect(store.get(ev("k", B))).toBe("b");
    expect(values(store, "k", B)).toEqual(["b"]);
    expect(store.get(sv("k"))).toBe("s");
    expect(store.readList(sl("k")).elements.map((e) => e.value)).toEqual(["s"]);
    await store.close();
  });

  it("retirement is atomic with sibling session writes", async () => {
    const s = await backend.fresh();
    await s.store.commit([appendList(el("frames"), "f1"), setValue(ev("memo"), 1)]);
    await s.store.commit([appendList(sl("transcript"), "result"), setValue(sv("op"), "settled"), retireScope(A)]);
    const check = (store: Store) => {
      expect(store.readList(sl("transcript")).elements.map((e) => e.value)).toEqual(["result"]);
      expect(store.get(sv("op"))).toBe("settled");
      expect(values(store, "frames", A)).toEqual([]);
      expect(store.get(ev("memo"))).toBeUndefined();
    };
    check(s.store);
    if (backend.durable) check(await s.reopen());
    await s.store.close();
  });

  it("retiring an absent scope is legal and consumes a seq", async () => {
    const { store } = await backend.fresh();
    const r = await store.commit([retireScope(ephemeralScope("never-written"))]);
    const next = await store.commit([setValue(sv("x"), 1)]);
    expect(next.seq).toBe(r.seq + 1);
    await store.close();
  });

  it("a write after retirement starts a new lifetime", async () => {
    const s = await backend.fresh();
    await s.store.commit([appendList(el("l"), "old"), setValue(ev("v"), "old")]);
    await s.store.commit([retireScope(A)]);
    await s.store.commit([appendList(el("l"), "new")]);
    expect(values(s.store, "l", A)).toEqual(["new"]);
    expect(s.store.get(ev("v"))).toBeUndefined();
    if (backend.durable) {
      const re = await s.reopen();
      expect(values(re, "l", A)).toEqual(["new"]);
      expect(re.get(ev("v"))).toBeUndefined();
    }
    await s.store.close();
  });

  it("repeated retirement advances the boundary without hiding later writes", async () => {
    const s = await backend.fresh();
    await s.store.commit([appendList(el("l"), 1)]);
    await s.store.commit([retireScope(A)]);
    await s.store.commit([retireScope(A)]);
    await s.store.commit([appendList(el("l"), 2)]);
    await s.store.commit([retireScope(A)]);
    await s.store.commit([appendList(el("l"), 3)]);
    await s.store.commit([appendList(el("l"), 4)]);
    expect(values(s.store, "l", A)).toEqual([3, 4]);
    if (backend.durable) expect(values(await s.reopen(), "l", A)).toEqual([3, 4]);
    await s.store.close();
  });

  it("main, scope A, scope B, retire and reused-A commits get globally increasing seqs in admission order", async () => {
    const { store } = await backend.fresh();
    const pending = [
      store.commit([setValue(sv("m"), 1)]),
      store.commit([appendList(el("l", A), 1), appendList(el("l", A), 2)]),
      store.commit([appendList(el("l", B), 1)]),
      store.commit([setValue(sv("m"), 2), retireScope(A)]),
      store.commit([appendList(el("l", A), 3)]),
      store.commit([setValue(sv("m"), 3)]),
    ];
    const seqs = (await Promise.all(pending)).map((r) => r.seq);
    expect(seqs).toEqual([1, 2, 4, 5, 7, 8]);
    const a = store.readList(el("l", A)).elements;
    expect(a.map((e) => [e.seq, e.value])).toEqual([[7, 3]]);
    await store.close();
  });

  it("leaves legal gaps and never reuses a seq after reopen", async () => {
    const s = await backend.fresh();
    await s.store.commit([appendList(sl("t"), "a"), appendList(sl("t"), "b"), appendList(sl("t"), "c")]);
    await s.store.commit([appendList(el("l"), "x")]);
    const del = await s.store.commit([deleteList(sl("t"))]);
    await s.store.commit([appendList(sl("t"), "d")]);
    const lastScoped = await s.store.commit([appendList(el("l"), "y")]);
    const t = s.store.readList(sl("t")).elements;
    expect(t.map((e) => e.seq)).toEqual([del.seq + 1]);
    if (backend.durable) {
      const re = await s.reopen();
      const { seq } = await re.commit([setValue(sv("after"), 1)]);
      expect(seq).toBe(lastScoped.seq + 1);
      // The retired scope's records are gone, yet their seqs stay used.
      await re.commit([retireScope(A)]);
      const re2 = await s.reopen();
      const again = await re2.commit([setValue(sv("after"), 2)]);
      expect(again.seq).toBe(seq + 2);
    }
    await s.store.close();
  });

  it("round-trips list tags and stops at, and includes, the tag in both orders", async () => {
    const { store } = await backend.fresh();
    const l = el("ops");
    await store.commit([appendList(l, "b0", "base"), appendList(l, "d1"), appendList(l, "d2")]);
    await store.commit([appendList(l, "b3", "base"), appendList(l, "d4"), appendList(l, "d5", "other")]);
    const all = store.readList(l).elements;
    expect(all.map((e) => e.tag)).toEqual(["base", undefined, undefined, "base", undefined, "other"]);
    expect(all.filter((e) => e.tag === undefined).every((e) => !("tag" in e))).toBe(true);
    const desc = store.readList(l, { order: "desc", stopAtTag: "base" });
    expect(desc.elements.map((e) => e.value)).toEqual(["d5", "d4", "b3"]);
    expect(desc.cursor).toBe(desc.elements[2]!.seq);
    const asc = store.readList(l, { stopAtTag: "base", cursor: all[0]!.seq });
    expect(asc.elements.map((e) => e.value)).toEqual(["d1", "d2", "b3"]);
    // stopAtTag never searches past the limit: a short page without the tag, and a cursor.
    const short = store.readList(l, { order: "desc", stopAtTag: "base", limit: 2 });
    expect(short.elements.map((e) => e.value)).toEqual(["d5", "d4"]);
    const rest = store.readList(l, { order: "desc", stopAtTag: "base", limit: 2, cursor: short.cursor! });
    expect(rest.elements.map((e) => e.value)).toEqual(["b3"]);
    const last = store.readList(l, { order: "desc", stopAtTag: "base", cursor: all[1]!.seq });
    expect(last.elements.map((e) => e.value)).toEqual(["b0"]);
    expect(last.cursor).toBeUndefined();
    await store.close();
  });

  it("clamps page size to 10,000 and defaults to 1,000", async () => {
    const { store } = await backend.fresh();
    const l = el("big");
    for (let i = 0; i < 11; i++) await store.commit(Array.from({ length: 1000 }, (_, j) => appendList(l, i * 1000 + j)));
    const page = store.readList(l, { limit: 50_000 });
    expect(page.elements).toHaveLength(10_000);
    expect(page.cursor).toBe(page.elements[9999]!.seq);
    expect(store.readList(l).elements).toHaveLength(1000);
    expect(() => store.readList(l, { limit: 0 })).toThrow(/limit/);
    expect(() => store.readList(l, { order: "up" as "asc" })).toThrow(/order/);
    await store.close();
  });

  it("stats ignore scoped values, lists and retirement", async () => {
    const { store } = await backend.fresh();
    await store.commit([setValue(sv("a"), 1), appendList(sl("t"), 1), appendList(sl("t"), 2)]);
    const before = store.stats();
    expect(before).toEqual({ values: 1, lists: 1, listElements: 2 });
    await store.commit([setValue(ev("a"), 1), appendList(el("t"), 1)]);
    expect(store.stats()).toEqual(before);
    await store.commit([retireScope(A)]);
    expect(store.stats()).toEqual(before);
    await store.close();
  });

  it("close drains admitted scoped commits and rejects later reads and writes", async () => {
    const s = await backend.fresh();
    const admitted = Array.from({ length: 20 }, (_, i) => s.store.commit([appendList(el("l"), i)]));
    const closing = s.store.close();
    await expect(s.store.commit([setValue(sv("late"), 1)])).rejects.toBeInstanceOf(StoreClosedError);
    await closing;
    expect((await Promise.all(admitted)).length).toBe(20);
    expect(() => s.store.get(sv("x"))).toThrow(StoreClosedError);
    expect(() => s.store.readList(sl("x"))).toThrow(StoreClosedError);
    await expect(s.store.sync()).rejects.toBeInstanceOf(StoreClosedError);
    if (backend.durable) {
      const re = await s.reopen();
      expect(values(re, "l", A)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      await re.close();
    }
  });

  if (backend.name !== "memory") {
    it("agrees with the memory backend under random transactions, across reopen", async () => {
      const scopes = ["s", "a", "b"] as const;
      const addr = fc.record({ scope: fc.constantFrom(...scopes), key: fc.constantFrom("k1", "k2") });
      const write = fc.oneof(
        fc.record({ op: fc.constant("set" as const), a: addr, v: fc.jsonValue({ maxDepth: 2 }) }),
        fc.record({ op: fc.constant("del" as const), a: addr }),
        fc.record({ op: fc.constant("app" as const), a: addr, v: fc.string(), tag: fc.option(fc.constantFrom("base", "x"), { nil: undefined }) }),
        fc.record({ op: fc.constant("clear" as const), a: addr }),
        fc.record({ op: fc.constant("retire" as const), s: fc.constantFrom("a", "b") }),
      );
      const scopeOf = (s: string): Scope => (s === "s" ? { kind: "session" } : ephemeralScope(s));
      type WriteSpec = typeof write extends fc.Arbitrary<infer U> ? U : never;
      const toWrite = (w: WriteSpec, scope: string): Write<Scope> | undefined => {
        if (w.op === "retire") return scope === "s" ? (retireScope(ephemeralScope(w.s)) as Write<Scope>) : undefined;
        if (w.a.scope !== scope) return undefined;
        const sc = scopeOf(scope) as EphemeralScope;
        switch (w.op) {
          case "set":
            return setValue(value("n", w.a.key, sc), w.v) as Write<Scope>;
          case "del":
            return deleteValue(value("n", w.a.key, sc)) as Write<Scope>;
          case "app":
            return appendList(list("n", w.a.key, sc), w.v, w.tag) as Write<Scope>;
          default:
            return deleteList(list("n", w.a.key, sc)) as Write<Scope>;
        }
      };
      const dump = (store: Store) =>
        scopes.flatMap((s) =>
          ["k1", "k2"].map((k) => [
            store.get(value("n", k, scopeOf(s) as EphemeralScope)),
            store.readList(list("n", k, scopeOf(s) as EphemeralScope), { limit: 10_000 }).elements,
          ]),
        );
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ scope: fc.constantFrom(...scopes), writes: fc.array(write, { minLength: 1, maxLength: 4 }), reopen: fc.boolean() }), {
            maxLength: 25,
          }),
          async (txs) => {
            const model = createMemoryStore();
            const s = await backend.fresh();
            for (const tx of txs) {
              const ws = tx.writes.map((w) => toWrite(w, tx.scope)).filter((w) => w !== undefined);
              if (ws.length === 0) continue;
              const [m, r] = await Promise.all([model.commit(ws), s.store.commit(ws)]);
              expect(r.seq).toBe(m.seq);
              if (tx.reopen) await s.reopen();
              expect(dump(s.store)).toEqual(dump(model));
              expect(s.store.stats()).toEqual(model.stats());
            }
            await s.store.close();
          },
        ),
        { numRuns: process.env.SPOOL_LONG ? 300 : 25 },
      );
    });
  }
});
