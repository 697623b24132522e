// Type-level contract: a transaction writes one scope only. The @ts-expect-error lines are checked by `npm run typecheck`: if a
// mixed transaction ever typechecks, the unused directive fails the build.
import { describe, expect, it } from "vitest";
import {
  appendList,
  createMemoryStore,
  deleteValue,
  ephemeralScope,
  list,
  MixedScopeError,
  retireScope,
  ScopeIdError,
  sessionScope,
  setValue,
  value,
  type EphemeralScope,
  type Scope,
  type SessionScope,
  type Value,
  type ValueList,
  type Write,
} from "../../src/store/index.js";

describe("scope types and constructors", () => {
  it("session addresses default to the session scope", () => {
    const v: Value<number, SessionScope> = value<number>("ns", "k");
    const l: ValueList<string, SessionScope> = list<string>("ns");
    expect(v.scope).toEqual({ kind: "session" });
    expect(l.scope).toBe(sessionScope);
  });

  it("ephemeral overloads keep EphemeralScope and an invariant element type", () => {
    const s = ephemeralScope("op:1");
    const v: Value<number, EphemeralScope> = value<number>("ns", "k", s);
    // @ts-expect-error a Value<number> is not a Value<string>
    const wrong: Value<string, EphemeralScope> = v;
    // @ts-expect-error an ephemeral address is not a session address
    const notSession: Value<number, SessionScope> = v;
    expect(v.scope).toEqual({ kind: "ephemeral", id: "op:1" });
    void wrong;
    void notSession;
  });

  it("address scope is covariant for reads while write scope is invariant", () => {
    const eph: Value<number, EphemeralScope> = value<number>("ns", "k", ephemeralScope("a"));
    const anyScope: Value<number, Scope> = eph; // reads accept any scope
    const w = setValue(eph, 1);
    // @ts-expect-error writes do not widen to Write<Scope>
    const widened: Write<Scope> = w;
    expect(anyScope.scope.kind).toBe("ephemeral");
    void widened;
  });

  it("same-scope session, same-scope ephemeral, and session + retireScope transactions typecheck", async () => {
    const store = createMemoryStore();
    const a = ephemeralScope("a");
    await store.commit([setValue(value<number>("s", "1"), 1), deleteValue(value<number>("s", "2"))]);
    await store.commit([setValue(value<number>("e", "1", a), 1), appendList(list<string>("e", "l", a), "x")]);
    await store.commit([setValue(value<number>("s", "3"), 3), retireScope(a)]);
    expect(store.get(value<number>("s", "3"))).toBe(3);
  });

  it("a session write mixed with an ephemeral write is a type error and is rejected at runtime", async () => {
    const store = createMemoryStore();
    const a = ephemeralScope("a");
    const mixed = store.commit(
      // @ts-expect-error one transaction, one scope
      [setValue(value<number>("s"), 1), setValue(value<number>("e", "", a), 2)],
    );
    await expect(mixed).rejects.toBeInstanceOf(MixedScopeError);
    expect(store.get(value<number>("s"))).toBeUndefined();
  });

  it("two ephemeral ids pass the type check but fail the runtime assertion before mutation", async () => {
    const store = createMemoryStore();
    const p = store.commit([setValue(value<number>("e", "", ephemeralScope("a")), 1), setValue(value<number>("e", "", ephemeralScope("b")), 2)]);
    await expect(p).rejects.toMatchObject({ code: "SPOOL_STORE_MIXED_SCOPE" });
    expect(store.get(value<number>("e", "", ephemeralScope("a")))).toBeUndefined();
    expect(store.get(value<number>("e", "", ephemeralScope("b")))).toBeUndefined();
  });

  it("scope object identity is irrelevant and scopes are frozen", async () => {
    const store = createMemoryStore();
    await store.commit([setValue(value<string>("e", "k", ephemeralScope("x")), "v")]);
    expect(store.get(value<string>("e", "k", ephemeralScope("x")))).toBe("v");
    expect(store.get(value<string>("e", "k", { kind: "ephemeral", id: "x" }))).toBe("v");
    expect(Object.isFrozen(ephemeralScope("x"))).toBe(true);
  });

  it("empty, overlong, non-string and lone-surrogate ids are rejected; separators and Unicode are fine", () => {
    expect(() => ephemeralScope("")).toThrow(ScopeIdError);
    expect(() => ephemeralScope("a".repeat(181))).toThrow(ScopeIdError);
    expect(() => ephemeralScope("é".repeat(31))).toThrow(/encoded id is 186/); // 6 encoded chars each
    expect(() => ephemeralScope("\uD800x")).toThrow(ScopeIdError);
    expect(() => ephemeralScope(42 as unknown as string)).toThrow(ScopeIdError);
    expect(ephemeralScope("a".repeat(180)).id).toHaveLength(180);
    for (const id of ["a/b", "..", "op:1|2", "a b", "日本語", "🙂", "x\\y", "%41"]) expect(ephemeralScope(id).id).toBe(id);
  });

  it("equal namespace/key in session and ephemeral scope do not alias", async () => {
    const store = createMemoryStore();
    await store.commit([setValue(value<string>("n", "k"), "session")]);
    await store.commit([setValue(value<string>("n", "k", ephemeralScope("op")), "scoped")]);
    expect(store.get(value<string>("n", "k"))).toBe("session");
    expect(store.get(value<string>("n", "k", ephemeralScope("op")))).toBe("scoped");
  });
});
