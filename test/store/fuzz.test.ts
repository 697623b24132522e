// Fuzzing the JSONL parser: random bytes and mutated valid lines in the main log and the sidecars.
// Opening must either succeed with the state of some clean prefix of the damaged file (a torn tail
// was cut) or fail with the corruption error: never crash, hang, pollute prototypes or load a
// silently different state.
import fc from "fast-check";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendList, ephemeralScope, list, openJsonlStore, retireScope, setValue, value, type Store } from "../../src/store/index.js";
import { sealLine } from "../../src/store/jsonl/line.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

const RUNS = process.env.SPOOL_LONG === "1" ? 5000 : 300;
const SCOPES = ["op:A", "op:B", "op:C"].map((id) => ephemeralScope(id));

interface Fixture {
  files: { name: string; bytes: Buffer }[];
  /** For each file: the snapshots reachable by cutting that file to a line prefix. */
  prefixes: unknown[][];
}
let fx: Fixture;

function dump(store: Store): unknown {
  const out: Record<string, unknown> = {};
  for (const k of ["k0", "k1", "k2"]) out[`s.${k}`] = store.get(value("s", k));
  out.t = store.readList(list("t")).elements;
  for (const s of SCOPES) {
    out[`${s.id}.memo`] = store.get(value("memo", "", s));
    out[`${s.id}.out`] = store.readList(list("out", "", s)).elements;
  }
  return out;
}

function materialise(files: { name: string; bytes: Buffer }[]): string {
  const dir = tempDir("spool-fuzz-");
  mkdirSync(join(dir, "session.jsonl.scopes"));
  for (const f of files) writeFileSync(join(dir, f.name), f.bytes);
  return join(dir, "session.jsonl");
}

type Outcome = { ok: true; state: unknown } | { ok: false; code: string };

async function openOutcome(files: { name: string; bytes: Buffer }[]): Promise<Outcome> {
  const main = materialise(files);
  try {
    const store = await openJsonlStore(main, { create: false });
    const state = dump(store);
    // The repaired files must accept appends and reopen to the same state plus the append.
    await store.commit([setValue(value("after"), 1)]);
    await store.close();
    const again = await openJsonlStore(main, { create: false });
    expect(dump(again)).toEqual(state);
    expect(again.get(value("after"))).toBe(1);
    await again.close();
    return { ok: true, state };
  } catch (e) {
    return { ok: false, code: (e as { code?: string }).code ?? `uncoded ${String(e)}` };
  } finally {
    rmSync(main.replace(/\/session\.jsonl$/, ""), { recursive: true, force: true });
  }
}

const lineStarts = (b: Buffer): number[] => {
  const s = [0];
  for (let i = 0; i < b.length; i++) if (b[i] === 10 && i + 1 < b.length) s.push(i + 1);
  return s;
};

beforeAll(async () => {
  const main = join(tempDir(), "session.jsonl");
  const store = await openJsonlStore(main, { sessionId: "fz" });
  const [A, B, C] = SCOPES as [(typeof SCOPES)[0], (typeof SCOPES)[0], (typeof SCOPES)[0]];
  await store.commit([setValue(value("s", "k0"), { n: 0, text: "zero" }), appendList(list("t"), "hello")]);
  await store.commit([appendList(list("out", "", A), "a-base", "base"), setValue(value("memo", "", A), 1)]);
  await store.commit([appendList(list("out", "", C), "c1")]);
  await store.commit([appendList(list("out", "", B), "b-base", "base")]);
  await store.commit([appendList(list("out", "", A), "a1"), appendList(list("out", "", A), "a2")]);
  await store.commit([setValue(value("s", "k1"), [1, "one"]), retireScope(C)]);
  await store.commit([appendList(list("out", "", B), "b1 ünïcödé 🙂")]);
  await store.commit([appendList(list("out", "", A), "a3", "base")]);
  await store.commit([setValue(value("s", "k2"), null), appendList(list("t"), "world")]);
  await store.commit([appendList(list("out", "", B), "b2")]);
  await store.close();
  const names = [
    "session.jsonl",
    `session.jsonl.scopes/scope-${encodeURIComponent("op:A")}.scope`,
    `session.jsonl.scopes/scope-${encodeURIComponent("op:B")}.scope`,
  ];
  const files = names.map((name) => ({ name, bytes: readFileSync(join(main, "..", name)) }));
  const prefixes: unknown[][] = [];
  for (let i = 0; i < files.length; i++) {
    const starts = [...lineStarts(files[i]!.bytes), files[i]!.bytes.length];
    const states: unknown[] = [];
    for (const cut of starts) {
      const o = await openOutcome(files.map((f, j) => (j === i ? { ...f, bytes: f.bytes.subarray(0, cut) } : f)));
      if (o.ok) states.push(o.state);
    }
    prefixes.push(states);
  }
  fx = { files, prefixes };
});
afterAll(removeTempDirs);

type Mutation =
  | { kind: "flip"; at: number[]; bytes: number[] }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; bytes: number[] }
  | { kind: "append"; bytes: number[] }
  | { kind: "nul"; at: number; length: number }
  | { kind: "garbage"; bytes: number[] }
  | { kind: "edit-line"; line: number; field: string; to: unknown; reseal: boolean };

const bytes = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 64 });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), bytes: bytes }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes }),
  fc.record({ kind: fc.constant("append" as const), bytes }),
  fc.record({ kind: fc.constant("nul" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 600 }) }),
  fc.record({ kind: fc.constant("garbage" as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 400 }) }),
  // An unsealed edit is damage the checksum must catch, whatever it changes.
  fc.record({
    kind: fc.constant("edit-line" as const),
    line: fc.nat(),
    field: fc.constantFrom("seq", "w", "scope", "format", "version", "sessionId", "scopeId", "__proto__", "op", "value", "ns"),
    to: fc.oneof(fc.constantFrom(0, -1, 1, 2, 1e300, "x", null, [], {}, { polluted: 1 }, "op:B"), fc.jsonValue({ maxDepth: 2 })),
    reseal: fc.constant(false),
  }),
  // A resealed edit is a forged record: it cannot be told from a genuine one, so only structurally
  // impossible forgeries are generated, and those must fail as corruption.
  fc
    .record({
      line: fc.nat(),
      edit: fc.constantFrom<[string, unknown]>(
        ["seq", 0],
        ["seq", -1],
        ["seq", "x"],
        ["seq", 1e300],
        ["seq", null],
        ["seq", 1.5],
        ["w", []],
        ["w", "x"],
        ["w", null],
        ["w", [{}]],
        ["scope", 5],
        ["scope", "op:Z"],
        ["format", "x"],
        ["version", 2],
        ["version", "1"],
        ["op", "x"],
        ["op", null],
        ["ns", ""],
        ["ns", 5],
        ["ns", null],
        ["__proto__", { polluted: 1 }],
      ),
    })
    .map(({ line, edit }) => ({ kind: "edit-line" as const, line, field: edit[0], to: edit[1], reseal: true })),
);

function mutate(b: Buffer, m: Mutation): Buffer {
  const pos = (n: number) => (b.length === 0 ? 0 : n % b.length);
  switch (m.kind) {
    case "flip": {
      const c = Buffer.from(b);
      m.at.forEach((a, i) => c.length > 0 && (c[pos(a)] = m.bytes[i % m.bytes.length]!));
      return c;
    }
    case "truncate":
      return b.subarray(0, pos(m.at));
    case "insert":
      return Buffer.concat([b.subarray(0, pos(m.at)), Buffer.from(m.bytes), b.subarray(pos(m.at))]);
    case "append":
      return Buffer.concat([b, Buffer.from(m.bytes)]);
    case "nul":
      return Buffer.concat([b.subarray(0, pos(m.at)), Buffer.alloc(m.length), b.subarray(pos(m.at) + m.length)]);
    case "garbage":
      return Buffer.from(m.bytes);
    case "edit-line": {
      const lines = b.toString("utf8").split("\n");
      const i = m.line % (lines.length - 1);
      const o = JSON.parse(lines[i]!) as Record<string, unknown>;
      delete o.h;
      const target = m.field === "op" || m.field === "value" || m.field === "ns" ? ((o.w as Record<string, unknown>[] | undefined)?.[0] ?? o) : o;
      if (m.field === "__proto__") Object.defineProperty(target, "__proto__", { value: m.to, enumerable: true });
      else target[m.field] = m.to;
      const body = JSON.stringify(o);
      lines[i] = m.reseal ? sealLine(body).slice(0, -1) : `${body.slice(0, -1)},"h":"00000000"}`;
      return Buffer.from(lines.join("\n"));
    }
  }
}

describe("JSONL open under damaged files", () => {
  it("either recovers a clean prefix or fails with the corruption error", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 2 }), mutation, async (fileIndex, m) => {
        const files = fx.files.map((f, i) => (i === fileIndex ? { ...f, bytes: mutate(f.bytes, m) } : f));
        const o = await openOutcome(files);
        if (o.ok) {
          const allowed = fx.prefixes[fileIndex]!;
          expect(
            allowed.some((s) => isDeepStrictEqual(s, o.state)),
            `state after ${JSON.stringify(m)} on file ${fileIndex} matches no clean prefix`,
          ).toBe(true);
        } else {
          expect(["SPOOL_STORE_CORRUPT", "SPOOL_STORE_FORMAT"]).toContain(o.code);
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(Object.keys(Object.prototype)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it("the fixture's clean prefixes include the full state and several torn-tail states", () => {
    for (const states of fx.prefixes) expect(states.length).toBeGreaterThan(3);
  });
});
