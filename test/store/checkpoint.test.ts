// The JSONL checkpoint: an open that starts from it (and replays only what follows) must hold exactly
// what a replay of every line holds — with the checkpoint, without it, with an older one put back,
// after a writer appended past it and crashed — and a checkpoint that no longer matches the log must
// be ignored. Reads of the indexed session scope verify the lines they reach: damage before the
// checkpoint is reported by the read (and by `spool repair`), damage after it by the open.
import { appendFileSync, copyFileSync, cpSync, existsSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  appendList,
  CorruptSessionError,
  createMemoryStore,
  deleteList,
  deleteValue,
  ephemeralScope,
  followJsonlSession,
  list,
  openJsonlStore,
  readJsonlSnapshot,
  repairJsonlSession,
  retireScope,
  SessionChangedError,
  setValue,
  value,
  type ListReadOptions,
  type Store,
  type EphemeralScope,
  type Write,
  type Scope,
  type ValueList,
} from "../../src/store/index.js";
import { CHECKPOINT_VERSION, checkpointPath, readCheckpoint, writeCheckpoint } from "../../src/store/jsonl/checkpoint.js";
import { partsChecksum, sealLine } from "../../src/store/jsonl/line.js";
import { SEGMENT_BYTES, SEGMENT_ELEMENTS } from "../../src/store/jsonl/list-segments.js";
import { VERIFY_WHOLE_BYTES } from "../../src/store/jsonl/main-scan.js";
import { loadSession } from "../../src/store/jsonl/replay.js";
import { snapshotOf } from "../../src/store/jsonl/snapshot.js";
import { encodeHeader } from "../../src/store/jsonl/records.js";
import { createWithHeader, newSessionHeader } from "../../src/store/jsonl/store.js";
import { ValueIndex } from "../../src/store/jsonl/value-index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);

const newMain = () => join(tempDir("spool-ckpt-"), "session.jsonl");
const KEYS = ["a", "b", "c"] as const;
const LISTS = ["x", "y"] as const;
const SCOPES = ["op:1", "op:2"].map((id) => ephemeralScope(id));
type Reader = Pick<Store, "get" | "readList">;

function readAll(r: Reader, addr: ValueList<unknown, Scope>): unknown[] {
  const out: unknown[] = [];
  let cursor: number | undefined;
  do {
    const page = r.readList(addr, { limit: 10_000, ...(cursor !== undefined ? { cursor } : {}) });
    out.push(...page.elements);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return out;
}

/** Everything the tests write, read through one reader. */
function dump(r: Reader & Partial<Pick<Store, "stats">>): unknown {
  const out: Record<string, unknown> = {};
  for (const k of KEYS) out[`v:${k}`] = r.get(value("s", k));
  for (const k of LISTS) out[`l:${k}`] = readAll(r, list("l", k));
  for (const s of SCOPES) {
    out[`${s.id}:m`] = r.get(value("e", "m", s));
    out[`${s.id}:o`] = readAll(r, list("e", "o", s));
  }
  if (r.stats) out.stats = r.stats();
  return out;
}

/** The checkpoint file's header (unsealed) and binary body. */
function readCheckpointFile(main: string): { head: Record<string, any>; body: Buffer } {
  const buf = readFileSync(checkpointPath(main));
  const nl = buf.indexOf(10);
  const head = JSON.parse(buf.toString("utf8", 0, nl));
  delete head.h;
  return { head, body: buf.subarray(nl + 1) };
}

/** Writes a checkpoint file from a header and a body, sealed and with the body's checksum, as the writer would. */
function writeCheckpointFile(main: string, head: Record<string, any>, body: Buffer): void {
  head.body = { length: body.length, h: partsChecksum([body]) };
  writeFileSync(checkpointPath(main), Buffer.concat([Buffer.from(sealLine(JSON.stringify(head))), body]));
}

/** What a replay of every line holds, the checkpoint ignored. */
function fullReplay(main: string): Reader & Pick<Store, "stats"> {
  const { state } = loadSession(main, { repair: false, ignoreCheckpoint: true });
  return snapshotOf(() => state);
}

type Step =
  | { kind: "set"; key: (typeof KEYS)[number]; v: unknown }
  | { kind: "delete"; key: (typeof KEYS)[number] }
  | { kind: "append"; key: (typeof LISTS)[number]; v: unknown; base: boolean; also?: (typeof KEYS)[number] }
  | { kind: "bulk"; key: (typeof LISTS)[number]; n: number; every: number }
  | { kind: "big"; key: (typeof LISTS)[number]; kb: number }
  | { kind: "clear"; key: (typeof LISTS)[number]; around: boolean }
  | { kind: "scoped"; scope: number; v: string; memo: boolean }
  | { kind: "retire"; scope: number }
  | { kind: "reopen" };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("set" as const), key: fc.constantFrom(...KEYS), v: fc.jsonValue({ maxDepth: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), key: fc.constantFrom(...KEYS) }) },
  {
    weight: 5,
    arbitrary: fc.record(
      {
        kind: fc.constant("append" as const),
        key: fc.constantFrom(...LISTS),
        v: fc.jsonValue({ maxDepth: 2 }),
        base: fc.boolean(),
        also: fc.constantFrom(...KEYS),
      },
      { requiredKeys: ["kind", "key", "v", "base"] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bulk" as const),
      key: fc.constantFrom(...LISTS),
      n: fc.integer({ min: 1, max: SEGMENT_ELEMENTS + 300 }),
      every: fc.integer({ min: 1, max: 200 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("big" as const),
      key: fc.constantFrom(...LISTS),
      kb: fc.integer({ min: 1, max: Math.floor((SEGMENT_BYTES / 1024) * 0.6) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("clear" as const), key: fc.constantFrom(...LISTS), around: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("scoped" as const), scope: fc.nat({ max: 1 }), v: fc.string({ maxLength: 20 }), memo: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("retire" as const), scope: fc.nat({ max: 1 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reopen" as const }) },
);

let textSeed = 1;
function text(n: number): string {
  let s = "";
  while (s.length < n) {
    textSeed = (textSeed * 1103515245 + 12345) & 0x7fffffff;
    s += `${textSeed.toString(36)} `;
  }
  return s.slice(0, n);
}

/** Session writes and one scope's writes are different types; a step makes either kind. */
type AnyWrite = Write | Write<EphemeralScope>;

function writesOf(s: Exclude<Step, { kind: "reopen" }>): AnyWrite[] {
  switch (s.kind) {
    case "set":
      return [setValue(value("s", s.key), s.v)];
    case "delete":
      return [deleteValue(value("s", s.key))];
    case "append":
      return [appendList(list("l", s.key), s.v, s.base ? "base" : undefined), ...(s.also ? [setValue(value("s", s.also), s.v)] : [])];
    case "bulk":
      return Array.from({ length: s.n }, (_, i) => appendList(list("l", s.key), { i, t: text(20) }, i % s.every === 0 ? "base" : undefined));
    case "big":
      return [appendList(list("l", s.key), text(s.kb * 1024), "base")];
    case "clear":
      // `around`: the line holds elements of the old lifetime and of the new one.
      return s.around
        ? [appendList(list("l", s.key), "old"), deleteList(list("l", s.key)), appendList(list("l", s.key), "new", "base")]
        : [deleteList(list("l", s.key))];
    case "scoped": {
      const sc = SCOPES[s.scope]!;
      return [appendList(list("e", "o", sc), s.v), ...(s.memo ? [setValue(value("e", "m", sc), s.v)] : [])];
    }
    case "retire":
      return [retireScope(SCOPES[s.scope]!)];
  }
}

/** Runs the steps against JSONL (checkpointing every `checkpointBytes`) and memory; returns the log and the model. */
async function build(steps: readonly Step[], checkpointBytes: number | undefined): Promise<{ main: string; model: Store }> {
  const main = newMain();
  const opts = checkpointBytes === undefined ? {} : { checkpointBytes };
  let store = await openJsonlStore(main, { sessionId: "ck", ...opts });
  const model = createMemoryStore();
  for (const s of steps) {
    if (s.kind === "reopen") {
      await store.close();
      store = await openJsonlStore(main, opts);
      continue;
    }
    const w = writesOf(s);
    const [a, b] = await Promise.all([store.commit(w as Write[]), model.commit(w as Write[])]);
    expect(a.seq).toBe(b.seq);
  }
  await store.close();
  return { main, model };
}

const readOptions: fc.Arbitrary<ListReadOptions> = fc.record(
  {
    order: fc.constantFrom("asc" as const, "desc" as const),
    limit: fc.integer({ min: 1, max: 3000 }),
    cursor: fc.integer({ min: 0, max: 20_000 }),
    stopAtTag: fc.constantFrom("base", "nope"),
  },
  { requiredKeys: [] },
);

describe("JSONL open from a checkpoint", () => {
  it("equals a replay of every line and the memory backend: with the checkpoint, without it, for every reader", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 40 }),
        fc.constantFrom(undefined, 1, 4096),
        fc.array(fc.tuple(fc.constantFrom(...LISTS), readOptions), { maxLength: 6 }),
        async (steps, checkpointBytes, reads) => {
          const { main, model } = await build(steps, checkpointBytes);
          const expected = dump(model);
          const hasTransactions = readFileSync(main, "utf8").split("\n").length > 2;
          expect(existsSync(checkpointPath(main))).toBe(hasTransactions);
          const store = await openJsonlStore(main);
          expect(dump(store)).toEqual(expected);
          for (const [k, o] of reads) expect(store.readList(list("l", k), o)).toEqual(model.readList(list("l", k), o));
          await store.close();
          expect(dump(readJsonlSnapshot(main))).toEqual(expected);
          expect(dump(followJsonlSession(main).snapshot)).toEqual(expected);
          expect(dump(fullReplay(main))).toEqual(expected);
          rmSync(checkpointPath(main), { force: true });
          const again = await openJsonlStore(main);
          expect(dump(again)).toEqual(expected);
          await again.close();
          // The open without one wrote a new checkpoint; it must agree too.
          expect(existsSync(checkpointPath(main))).toBe(hasTransactions);
          expect(dump(readJsonlSnapshot(main))).toEqual(expected);
        },
      ),
      { numRuns: process.env.SPOOL_LONG === "1" ? 300 : 25 },
    );
  }, 300_000);

  it("an older checkpoint put back covers its prefix and the rest is replayed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 20 }), fc.array(step, { minLength: 1, maxLength: 20 }), async (steps, second) => {
        // At least one session transaction, so the first close leaves a checkpoint.
        const first: Step[] = [{ kind: "set", key: "a", v: "first" }, ...steps];
        const { main, model } = await build(first, undefined);
        const old = readFileSync(checkpointPath(main));
        let store = await openJsonlStore(main);
        for (const s of second) {
          if (s.kind === "reopen") {
            await store.close();
            store = await openJsonlStore(main);
            continue;
          }
          const w = writesOf(s) as Write[];
          await Promise.all([store.commit(w), model.commit(w)]);
        }
        await store.close();
        writeFileSync(checkpointPath(main), old);
        const expected = dump(model);
        expect(dump(readJsonlSnapshot(main))).toEqual(expected);
        const re = await openJsonlStore(main);
        expect(dump(re)).toEqual(expected);
        await re.close();
      }),
      { numRuns: process.env.SPOOL_LONG === "1" ? 200 : 15 },
    );
  }, 300_000);

  it("a writer that appended past the checkpoint and died before updating it loses nothing", async () => {
    const { main, model } = await build(
      [
        { kind: "bulk", key: "x", n: 3000, every: 50 },
        { kind: "set", key: "a", v: 1 },
      ],
      undefined,
    );
    const before = readFileSync(checkpointPath(main));
    const store = await openJsonlStore(main);
    for (let i = 0; i < 200; i++) {
      const w = [appendList(list("l", "x"), { late: i }, i % 7 === 0 ? "base" : undefined), setValue(value("s", "b"), i)];
      await Promise.all([store.commit(w), model.commit(w)]);
    }
    await store.commit([retireScope(SCOPES[0]!)]);
    await model.commit([retireScope(SCOPES[0]!)]);
    // As the crash leaves it: the log as written, the checkpoint as the last close left it.
    const copy = newMain();
    cpSync(main, copy);
    writeFileSync(checkpointPath(copy), before);
    await store.close();
    expect(readFileSync(checkpointPath(copy))).toEqual(before);
    const expected = dump(model);
    expect(dump(readJsonlSnapshot(copy))).toEqual(expected);
    const re = await openJsonlStore(copy);
    expect(dump(re)).toEqual(expected);
    expect(re.readList(list("l", "x"), { order: "desc", stopAtTag: "base", limit: 100 })).toEqual(
      model.readList(list("l", "x"), { order: "desc", stopAtTag: "base", limit: 100 }),
    );
    await re.close();
  });
});

describe("lists over many segments", () => {
  it("read page by page, both ways, from any cursor, like the memory backend", async () => {
    const main = newMain();
    let store = await openJsonlStore(main, { sessionId: "seg", checkpointBytes: 64 * 1024 });
    const model = createMemoryStore();
    const commit = async (w: AnyWrite[]) => {
      const [a, b] = await Promise.all([store.commit(w as Write[]), model.commit(w as Write[])]);
      expect(a.seq).toBe(b.seq);
    };
    let n = 0;
    for (let round = 0; round < 60; round++) {
      // Batches of one to 300 elements, some tagged; a big element of the other list now and then
      // (segments end on the byte bound), a value in between, one clear half-way, one reopen.
      const batch = 1 + ((round * 7919) % 300);
      await commit(Array.from({ length: batch }, () => appendList(list("l", "x"), { n: n++ }, n % 97 === 0 ? "base" : undefined)));
      if (round % 5 === 0) await commit([appendList(list("l", "y"), text(60 * 1024), round % 10 === 0 ? "base" : undefined), setValue(value("s", "a"), round)]);
      // One line holding elements of both lifetimes of the list.
      if (round === 30)
        await commit([appendList(list("l", "x"), "before clear"), deleteList(list("l", "x")), appendList(list("l", "x"), "after clear", "base")]);
      if (round === 40) {
        await store.close();
        store = await openJsonlStore(main, { checkpointBytes: 64 * 1024 });
      }
    }
    await store.close();
    const ckpt = readCheckpointFile(main).head as { index: { lists: [string, string, number][] } };
    const segments = Object.fromEntries(ckpt.index.lists.map(([, k, count]) => [k, count]));
    expect(segments.x).toBeGreaterThan(3);
    expect(segments.y).toBeGreaterThan(3);
    const re = await openJsonlStore(main);
    expect(dump(re)).toEqual(dump(model));
    // Every element, both ways, in pages that end at arbitrary places.
    for (const k of LISTS) {
      for (const order of ["asc", "desc"] as const) {
        for (const limit of [1, 777, 10_000]) {
          let cursor: number | undefined;
          do {
            const o = { order, limit, ...(cursor !== undefined ? { cursor } : {}) };
            const page = re.readList(list("l", k), o);
            expect(page).toEqual(model.readList(list("l", k), o));
            cursor = page.cursor;
          } while (cursor !== undefined && limit > 1);
        }
      }
    }
    const seqs = model.readList(list("l", "x"), { limit: 10_000 }).elements.map((e) => e.seq);
    await fc.assert(
      fc.property(
        fc.constantFrom(...LISTS),
        fc.constantFrom("asc" as const, "desc" as const),
        fc.integer({ min: 1, max: 1500 }),
        fc.option(fc.oneof(fc.constantFrom(...seqs), fc.integer({ min: 0, max: seqs.at(-1)! + 5 }))),
        fc.option(fc.constantFrom("base")),
        (k, order, limit, cursor, stopAtTag) => {
          const o = { order, limit, ...(cursor !== null ? { cursor } : {}), ...(stopAtTag !== null ? { stopAtTag } : {}) };
          expect(re.readList(list("l", k), o)).toEqual(model.readList(list("l", k), o));
        },
      ),
      { numRuns: 300 },
    );
    await re.close();
  });
});

describe("the checkpoint file", () => {
  it("holds the index's columns whatever their widths: offsets, seqs and line numbers past 2^32 widen them to float64", () => {
    const bases: [number, number, number][] = [
      [1, 2, 1000],
      [2 ** 33, 2, 1000],
      [1, 2 ** 33, 1000],
      [1, 2, 2 ** 33],
      [2 ** 40, 2 ** 35, 2 ** 36],
    ];
    for (const [seqBase, lineBase, offsetBase] of bases) {
      const main = newMain();
      writeFileSync(main, "");
      const values = new ValueIndex();
      for (let i = 0; i < 50; i++) values.set(i % 2 ? "spool" : "harness", `run:call-${i}`, seqBase + i, offsetBase + i * 10, 10, lineBase + i);
      const segments = new Float64Array([3, 9, 2, 100, 200, 5, 6, 12, 20, 4, 300, 500, 8, 9]);
      const meta = {
        sessionId: "widths",
        headerH: "0badc0de",
        length: 2 ** 40,
        lines: 60,
        last: { offset: 2 ** 40 - 10, length: 10, h: "0badc0de" },
        highWater: seqBase + 49,
        lastSeq: seqBase + 49,
        live: [],
      };
      writeCheckpoint(main, meta, { values: values.columns(), lists: [{ ns: "l", key: "x", segments }] }, false);
      const { head } = readCheckpointFile(main);
      const width = (base: number) => (base > 2 ** 32 ? 8 : 4);
      expect([head.index.offsetBytes, head.index.seqBytes, head.index.lineBytes]).toEqual([width(offsetBase), width(seqBase), width(lineBase)]);
      const back = readCheckpoint(main);
      expect(back?.meta).toEqual(meta);
      expect(back?.index.lists.map((l) => [l.ns, l.key, [...l.segments]])).toEqual([["l", "x", [...segments]]]);
      const loaded = ValueIndex.fromColumns(back!.index.values, meta.length);
      expect([...loaded!.entries()]).toEqual([...values.entries()]);
    }
  });
});

describe("seqs past 2^32", () => {
  it("a session whose seqs start past 2^32 (or cross it) checkpoints and reopens like a replay", async () => {
    const main = newMain();
    createWithHeader(main, encodeHeader(newSessionHeader("wide", 2 ** 32 - 3)), false);
    let store = await openJsonlStore(main);
    const model: Record<string, number> = {};
    for (let i = 0; i < 12; i++) {
      // The first values' seqs fit 32 bits, the later ones do not: the column widens under a live store.
      await store.commit([setValue(value("s", KEYS[i % 3]!), i), appendList(list("l", "x"), i, i % 4 === 0 ? "base" : undefined)]);
      model[KEYS[i % 3]!] = i;
      if (i === 5) {
        await store.close();
        store = await openJsonlStore(main);
      }
    }
    await store.close();
    expect(readCheckpointFile(main).head.index.seqBytes).toBe(8);
    const expected = dump(fullReplay(main));
    expect(expected).toMatchObject({ "v:a": model.a, "v:b": model.b, "v:c": model.c });
    expect(dump(readJsonlSnapshot(main))).toEqual(expected);
    const re = await openJsonlStore(main);
    expect(dump(re)).toEqual(expected);
    expect(re.readList(list("l", "x"), { order: "desc", stopAtTag: "base" }).elements.map((e) => e.value)).toEqual([11, 10, 9, 8]);
    await re.close();
  });
});

describe("paging through lists while they grow", () => {
  it("pages of any size, both ways, interleaved between lists and with appends in between, like the memory backend", async () => {
    type Action =
      | { kind: "append"; key: (typeof LISTS)[number]; n: number; kb: number }
      | { kind: "page"; key: (typeof LISTS)[number]; desc: boolean; limit: number; times: number; from: "next" | "start" | "other list" };
    const action: fc.Arbitrary<Action> = fc.oneof(
      fc.record({ kind: fc.constant("append" as const), key: fc.constantFrom(...LISTS), n: fc.integer({ min: 1, max: 40 }), kb: fc.constantFrom(0, 0, 0, 30) }),
      fc.record({
        kind: fc.constant("page" as const),
        key: fc.constantFrom(...LISTS),
        desc: fc.boolean(),
        limit: fc.integer({ min: 1, max: 30 }),
        times: fc.integer({ min: 1, max: 6 }),
        from: fc.constantFrom("next" as const, "next" as const, "start" as const, "other list" as const),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 20, maxLength: 120, size: "max" }), async (actions) => {
        const main = newMain();
        const store = await openJsonlStore(main, { sessionId: "pages" });
        const model = createMemoryStore();
        let n = 0;
        /** Each list's paging state, per direction: the cursor of the next page. */
        const cursors = new Map<string, number | undefined>();
        for (const a of actions) {
          if (a.kind === "append") {
            // One line of several elements of one list, a value in between, now and then a big one.
            const w: Write[] = Array.from({ length: a.n }, () => appendList(list("l", a.key), { n: n++, t: text(a.kb * 1024 + 10) }));
            w.splice(a.n >> 1, 0, setValue(value("s", "a"), n));
            await Promise.all([store.commit(w), model.commit(w)]);
            continue;
          }
          // A run of pages of one list; the first from where that list's last page stopped, from its
          // start, or from a cursor of the other list (a seq that is no element of this one).
          const id = `${a.key}:${a.desc}`;
          let cursor = a.from === "start" ? undefined : cursors.get(a.from === "next" ? id : `${a.key === "x" ? "y" : "x"}:${a.desc}`);
          for (let t = 0; t < a.times; t++) {
            const o: ListReadOptions = { order: a.desc ? "desc" : "asc", limit: a.limit, ...(cursor !== undefined ? { cursor } : {}) };
            const page = store.readList(list("l", a.key), o);
            expect(page).toEqual(model.readList(list("l", a.key), o));
            cursor = page.cursor;
          }
          cursors.set(id, cursor);
        }
        await store.close();
      }),
      { numRuns: process.env.SPOOL_LONG === "1" ? 200 : 25 },
    );
  }, 300_000);
});

describe("a checkpoint that does not match the log is ignored", () => {
  const steps: Step[] = [
    { kind: "bulk", key: "x", n: 1500, every: 40 },
    // A second line of list x: a second segment.
    { kind: "bulk", key: "x", n: 10, every: 4 },
    { kind: "set", key: "a", v: { n: 1 } },
    { kind: "append", key: "y", v: "y0", base: true },
    { kind: "set", key: "b", v: [1, 2] },
  ];

  it.each([
    [
      "a damaged checkpoint header",
      (main: string) =>
        writeFileSync(checkpointPath(main), Buffer.from(readFileSync(checkpointPath(main)).toString("latin1").replace('"lines":', '"lines" :'), "latin1")),
    ],
    ["a truncated checkpoint file", (main: string) => truncateSync(checkpointPath(main), 40)],
    ["a checkpoint cut inside its values", (main: string) => truncateSync(checkpointPath(main), statSync(checkpointPath(main)).size - 3)],
    [
      "a damaged value column (one byte flipped)",
      (main: string) => {
        const buf = readFileSync(checkpointPath(main));
        buf[buf.indexOf(10) + 9]! ^= 0x10;
        writeFileSync(checkpointPath(main), buf);
      },
    ],
    [
      "another session's checkpoint",
      (main: string) => {
        const { head, body } = readCheckpointFile(main);
        head.sessionId = "other";
        writeCheckpointFile(main, head, body);
      },
    ],
    [
      "a forged index pointing past what it covers",
      (main: string) => {
        const { head, body } = readCheckpointFile(main);
        // The first value's line offset: the first uint32 column, after the segments.
        const segments = (head.index.lists as [string, string, number][]).reduce((n, l) => n + l[2], 0);
        body.writeUInt32LE(head.length + 10, 56 * segments);
        writeCheckpointFile(main, head, body);
      },
    ],
    [
      "a forged list segment ending past what it covers",
      (main: string) => {
        const { head, body } = readCheckpointFile(main);
        // The segments come first (the values' columns are uint32 here); the first one's end is its fifth number.
        body.writeDoubleLE(head.length + 10, 4 * 8);
        writeCheckpointFile(main, head, body);
      },
    ],
    [
      "a forged list whose segments are out of order",
      (main: string) => {
        const { head, body } = readCheckpointFile(main);
        const at = 0;
        const first = Buffer.from(body.subarray(at, at + 56));
        body.copy(body, at, at + 56, at + 112);
        first.copy(body, at + 56);
        writeCheckpointFile(main, head, body);
      },
    ],
    [
      "a forged index naming one value twice",
      (main: string) => {
        const { head, body } = readCheckpointFile(main);
        const n = head.index.values as number;
        expect([n, head.index.seqBytes, head.index.lineBytes]).toEqual([2, 4, 4]);
        // Both names made the first one: its bytes twice, the ends moved to match.
        const ends = body.length - head.index.keyBytes - 4 * n;
        const first = body.subarray(ends + 4 * n, ends + 4 * n + body.readUInt32LE(ends));
        body.writeUInt32LE(2 * first.length, ends + 4);
        const forged = Buffer.concat([body.subarray(0, ends + 4 * n), first, first]);
        head.index.keyBytes = 2 * first.length;
        writeCheckpointFile(main, head, forged);
      },
    ],
    [
      "a checkpoint of the previous version (values as JSON arrays)",
      (main: string) => {
        const { head } = readCheckpointFile(main);
        const { state } = loadSession(main, { repair: false, ignoreCheckpoint: true });
        const v1 = { ...head, version: 1, index: { values: [] as unknown[], lists: head.index.lists } };
        delete (v1 as Record<string, unknown>).body;
        for (const r of state.sessionRecords()) if (r.write.op === "set") v1.index.values.push([r.write.ns, r.write.key, r.seq, 0, 0, 0]);
        writeFileSync(checkpointPath(main), sealLine(JSON.stringify(v1)));
      },
    ],
  ])("%s", async (_name, spoil) => {
    const { main, model } = await build(steps, undefined);
    spoil(main);
    const expected = dump(model);
    expect(loadSession(main, { repair: false }).checkpoint).toBeUndefined();
    expect(dump(readJsonlSnapshot(main))).toEqual(expected);
    expect(dump(fullReplay(main))).toEqual(expected);
    const re = await openJsonlStore(main);
    expect(dump(re)).toEqual(expected);
    await re.close();
    // The writer's open replayed the log and wrote a checkpoint that matches again.
    expect(readCheckpointFile(main).head.version).toBe(CHECKPOINT_VERSION);
    expect(loadSession(main, { repair: false }).checkpoint).toBeDefined();
    expect(dump(readJsonlSnapshot(main))).toEqual(expected);
  });

  it("a log cut back below the checkpoint (as a repair leaves it), then grown by a writer that died, is replayed", async () => {
    const { main } = await build(steps, undefined);
    const lines = readFileSync(main, "utf8").split("\n");
    writeFileSync(main, `${lines.slice(0, -3).join("\n")}\n`);
    const cutState = dump(fullReplay(main));
    expect(dump(readJsonlSnapshot(main))).toEqual(cutState);
    // A different line where the checkpoint's last line was (a sealed one, so it verifies).
    appendFileSync(main, sealLine(JSON.stringify({ seq: 9000, w: [{ op: "set", ns: "s", key: "c", value: "new" }] })));
    const grown = dump(fullReplay(main));
    expect((grown as Record<string, unknown>)["v:c"]).toBe("new");
    expect(dump(readJsonlSnapshot(main))).toEqual(grown);
    const re = await openJsonlStore(main);
    expect(dump(re)).toEqual(grown);
    await re.close();
  });

  it("the last covered line rewritten (a valid line, same length) makes the checkpoint stale", async () => {
    const { main } = await build(steps, undefined);
    const lines = readFileSync(main, "utf8").split("\n");
    const last = JSON.parse(lines.at(-2)!);
    delete last.h;
    last.w[0].value = [9, 9];
    lines[lines.length - 2] = sealLine(JSON.stringify(last)).slice(0, -1);
    writeFileSync(main, lines.join("\n"));
    const re = await openJsonlStore(main);
    expect(re.get(value("s", "b"))).toEqual([9, 9]);
    expect(dump(re)).toEqual(dump(fullReplay(main)));
    await re.close();
  });
});

describe("damage and a checkpoint", () => {
  /** A session past VERIFY_WHOLE_BYTES, so the open trusts the checkpoint's prefix; returns the log. */
  async function bigSession(): Promise<string> {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "big" });
    for (let i = 0; statSync(main).size <= VERIFY_WHOLE_BYTES + 65536; i++) {
      await store.commit([appendList(list("l", "x"), `element ${i} ${text(2000)}`, i % 10 === 0 ? "base" : undefined), setValue(value("s", "a"), i)]);
    }
    await store.commit([setValue(value("s", "b"), "hello")]);
    await store.close();
    return main;
  }

  it("damage before the checkpoint of a large log is reported by the read that reaches it, naming file and line, and by repair", async () => {
    const main = await bigSession();
    const text0 = readFileSync(main, "utf8");
    const line = text0.split("\n").findIndex((l) => l.includes('"element 3 ')) + 1;
    writeFileSync(main, text0.replace('"element 3 ', '"elemenT 3 '));
    const store = await openJsonlStore(main);
    // Reads that do not reach the line are served; the tail is recent.
    expect(store.get(value("s", "b"))).toBe("hello");
    expect(store.readList(list("l", "x"), { order: "desc", limit: 5 }).elements).toHaveLength(5);
    const err = (() => {
      try {
        readAll(store, list("l", "x"));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CorruptSessionError);
    expect(err).toMatchObject({ code: "SPOOL_STORE_CORRUPT", file: main, line });
    expect((err as Error).message).toContain(`${main}:${line}: the line is damaged`);
    expect((err as Error).message).toContain("the read failed");
    await store.close();
    // A full load finds it at once; repair cuts there and keeps the cut lines beside the log.
    expect(() => fullReplay(main)).toThrow(CorruptSessionError);
    const cut = repairJsonlSession(main);
    expect(cut).toMatchObject([{ file: main, line }]);
    expect(existsSync(checkpointPath(main))).toBe(false);
    const re = await openJsonlStore(main);
    expect(readAll(re, list("l", "x"))).toHaveLength(3);
    await re.close();
  });

  it("damage after the checkpoint is found by the open, the last line included; a torn tail is cut", async () => {
    const main = await bigSession();
    const store = await openJsonlStore(main);
    await store.commit([setValue(value("s", "c"), "after 1")]);
    await store.commit([setValue(value("s", "c"), "after 2")]);
    const copy = newMain();
    cpSync(main, copy);
    copyFileSync(checkpointPath(main), checkpointPath(copy));
    await store.close();
    const good = readFileSync(copy, "utf8");
    const n = good.split("\n").length - 1;
    writeFileSync(copy, good.replace('"after 1"', '"after X"'));
    await expect(openJsonlStore(copy)).rejects.toMatchObject({ code: "SPOOL_STORE_CORRUPT", file: copy, line: n - 1 });
    writeFileSync(copy, good.replace('"after 2"', '"after X"'));
    const err = await openJsonlStore(copy).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "SPOOL_STORE_CORRUPT", file: copy, line: n });
    expect((err as Error).message).toContain("not a torn write");
    writeFileSync(copy, `${good}{"seq":999,"w":[{"op":"set"`);
    const re = await openJsonlStore(copy);
    expect(re.get(value("s", "c"))).toBe("after 2");
    expect(readFileSync(copy, "utf8")).toBe(good);
    await re.close();
  });

  it("a reader whose log is replaced under it fails the read instead of answering from the new file", async () => {
    const { main } = await build([{ kind: "bulk", key: "x", n: 10, every: 3 }], undefined);
    const snap = readJsonlSnapshot(main);
    expect(snap.readList(list("l", "x")).elements).toHaveLength(10);
    const other = await build([{ kind: "bulk", key: "x", n: 20, every: 3 }], undefined);
    renameSync(other.main, main);
    expect(() => snap.readList(list("l", "x"))).toThrow(SessionChangedError);
    expect(readJsonlSnapshot(main).readList(list("l", "x")).elements).toHaveLength(20);
  });
});
