// A followed session's view (`spool serve` on a live JSONL, SQLite or PostgreSQL session) must always be what a full
// read gives: after every look, the watched state — and a replica folded from the ops it published, what
// a browser holds — deep-equals viewFromSnapshot over a fresh snapshot of the same session. Driven by random
// sequences of what writers do to a session (calls settling, records written late or never, output
// batches and bases, operations opening, settling and reusing ids, the session record changing, the
// transcript cleared), written in-process between looks so nothing is written while a look reads.
// The real thing — `spool mcp` with streaming, failing and background calls — is in
// session-follow-mcp.test.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { sessionFromSnapshot, summaryFromSnapshot, writerLiveness, type SessionEntry } from "../../src/cli/session-catalog.js";
import { watchSessions } from "../../src/cli/session-watch.js";
import { RUN_INFO, viewFromSnapshot, type RunInfo, type SessionView } from "../../src/cli/session-view.js";
import type { ToolResultMessage } from "../../src/context/index.js";
import { applyImmutable, encoder, type Encoder, type Op } from "../../src/delta/index.js";
import { callRecord, createStateHost, OPEN_OPERATIONS, operationScope, outputList, TRANSCRIPT, type OpenOperation } from "../../src/harness/index.js";
import {
  appendList,
  deleteList,
  list,
  openJsonlStore,
  openPostgresStore,
  openSqliteStore,
  readJsonlSnapshot,
  readPostgresSnapshot,
  retireScope,
  setValue,
  value,
  type SessionSnapshot,
  type Store,
} from "../../src/store/index.js";
import { compileStoreForChildren } from "../store/helpers/compile-store.js";
import { stopTestDatabase, testDatabase, uniqueSession } from "../store/helpers/pg.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

let writerProcess: ChildProcess | undefined;
afterAll(async () => {
  writerProcess?.kill("SIGKILL");
  await stopTestDatabase();
  return removeTempDirs();
});

const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

type Backend = "jsonl" | "sqlite" | "postgres";

/** A fresh full read of the session, as `spool serve` would read it whole. */
async function freshRead<R>(backend: Backend, file: string, id: string, read: (snap: SessionSnapshot) => R): Promise<R> {
  if (backend === "jsonl") return read(readJsonlSnapshot(file));
  if (backend === "postgres") return read(await readPostgresSnapshot((await testDatabase()).url, id));
  const store = await openSqliteStore(file, { create: false, sessionId: id });
  try {
    return read(store);
  } finally {
    await store.close();
  }
}

/** A session under a fresh root whose writer is this process, and a watch following it with a replica of its state. */
async function liveSession(backend: Backend = "jsonl", fileId = "s1") {
  // A database holds every test's sessions: each gets an id of its own there.
  const id = backend === "postgres" ? uniqueSession() : fileId;
  const root = tempDir("spool-follow-");
  const dir = join(root, "sessions", id);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `session.${backend}`);
  const url = backend === "postgres" ? (await testDatabase()).url : undefined;
  const store =
    backend === "jsonl"
      ? await openJsonlStore(file, { sessionId: id })
      : backend === "sqlite"
        ? await openSqliteStore(file, { sessionId: id })
        : await openPostgresStore(url, { sessionId: id });
  // A database session's liveness is its writer's lease (`live`), set by the test as `spool serve`'s
  // listing would see it; every listing shows a new next seq, as if a commit came before each look.
  let live = true;
  let listed = 0;
  const entryNow = (): SessionEntry =>
    backend === "postgres" ? { id, dir, file: `pg#${id}`, backend, url, live, nextSeq: listed } : { id, dir, file, backend };
  const host = createStateHost();
  const reports: string[] = [];
  const watch = watchSessions(host, {
    list: async () => {
      listed++;
      return [entryNow()];
    },
    report: (l) => reports.push(l),
  });
  let replica: SessionView | undefined;
  let subscribed = false;
  /** One look by the watch, then the state and the replica against a full read. */
  const look = async (): Promise<SessionView> => {
    await watch.refresh();
    expect(reports).toEqual([]);
    const state = host.get(`session:${id}`);
    if (state && !subscribed) {
      subscribed = true;
      state.subscribe((ops) => void (replica = applyImmutable(replica, ops as Op[])));
    }
    const expected = await freshRead(backend, file, id, (snap) => {
      // `spool sessions` summarises without building the view: the same summary.
      expect(summaryFromSnapshot(entryNow(), snap).summary).toEqual(sessionFromSnapshot(entryNow(), snap).summary);
      return json(viewFromSnapshot(id, snap, backend === "postgres" ? live : writerLiveness(snap).live));
    });
    expect(json(state?.value)).toEqual(expected);
    expect(json(replica)).toEqual(expected);
    return expected as SessionView;
  };
  /** The writer's lease ended (a database session; a file session's liveness is its writer's pid and status). */
  const ended = (): void => {
    live = false;
  };
  return { root, file, store, watch, look, ended };
}

const minutes = (m: number): string => new Date(Date.parse("2026-05-01T08:00:00.000Z") + m * 60_000).toISOString();
const info = (over: Partial<RunInfo> = {}): RunInfo => ({
  command: "agent",
  cwd: "/w",
  pid: process.pid,
  startedAt: minutes(0),
  endedAt: null,
  status: "running",
  exitCode: null,
  ...over,
});
const result = (id: string, text: string, isError = false, spillPath?: string): ToolResultMessage => ({
  role: "tool",
  toolCallId: id,
  toolName: "bash",
  isError,
  content: [{ type: "text", text }],
  ...(spillPath !== undefined ? { spillPath } : {}),
});

type Cmd =
  | { k: "look" }
  | { k: "direct"; text: string; isError: boolean; spill: boolean }
  | { k: "record"; pick: number; ended: boolean; details: boolean; at: number }
  | { k: "info"; details: boolean; at: number }
  | { k: "open"; calls: number; reuse: boolean }
  | { k: "output"; pick: number; base: boolean; text: string }
  | { k: "settle"; pick: number; isError: boolean }
  | { k: "args"; pick: number; n: number }
  | { k: "clear" }
  | { k: "value"; n: number };

const words = fc.string({ minLength: 0, maxLength: 40 });
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { arbitrary: fc.constant({ k: "look" as const }), weight: 6 },
  { arbitrary: fc.record({ k: fc.constant("direct" as const), text: words, isError: fc.boolean(), spill: fc.boolean() }), weight: 3 },
  {
    arbitrary: fc.record({
      k: fc.constant("record" as const),
      pick: fc.nat(),
      ended: fc.boolean(),
      details: fc.boolean(),
      at: fc.integer({ min: -50, max: 500 }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ k: fc.constant("info" as const), details: fc.boolean(), at: fc.integer({ min: -50, max: 500 }) }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("open" as const), calls: fc.integer({ min: 1, max: 2 }), reuse: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("output" as const), pick: fc.nat(), base: fc.boolean(), text: words }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant("settle" as const), pick: fc.nat(), isError: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("args" as const), pick: fc.nat(), n: fc.nat(3) }), weight: 1 },
  { arbitrary: fc.constant({ k: "clear" as const }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("value" as const), n: fc.nat(5) }), weight: 1 },
);

/** What a writer does to a session, command by command, as the harness and agent sessions write it. */
function writer(store: Store) {
  let n = 0;
  let session = info();
  const open: Record<string, OpenOperation> = {};
  const settledOps: { opId: string; calls: OpenOperation["calls"] }[] = [];
  /** Calls whose record has an end: no writer writes their record again (the watch relies on it). */
  const ended = new Set<string>();
  const ids: string[] = [];
  const outputs = new Map<string, { enc: Encoder; text: string | undefined }>();
  let transcript = 0;
  /** Transcript entries when the watch last looked. */
  let seen = 0;
  /** The looks whose changes the watch cannot follow (it must read the session whole). */
  let unfollowable = false;
  const apply = async (c: Cmd): Promise<void> => {
    switch (c.k) {
      case "look":
        seen = transcript;
        return;
      case "direct": {
        const id = `call-${++n}`;
        ids.push(id);
        transcript++;
        await store.commit([
          appendList(TRANSCRIPT, result(id, c.text, c.isError, c.spill ? `/spill/${id}.log` : undefined)),
          setValue(OPEN_OPERATIONS, { ...open }),
        ]);
        return;
      }
      case "record": {
        const id = ids.length === 0 || c.pick % 5 === 4 ? `call-${n + 1}` : ids[c.pick % ids.length]!;
        if (ended.has(id)) return;
        if (c.ended) ended.add(id);
        const run: RunInfo = {
          ...info({ command: `bash: ${id}`, startedAt: minutes(c.at) }),
          ...(c.ended ? { endedAt: minutes(c.at + 3), status: "failed" as const, exitCode: 2 } : {}),
          ...(c.details ? { details: { exitCode: 2, spillPath: `/spill/${id}` }, truncation: { truncated: true } as unknown as RunInfo["truncation"] } : {}),
        };
        await store.commit([setValue(callRecord(id), run)]);
        return;
      }
      case "info":
        session = json({ ...session, startedAt: minutes(c.at), details: c.details ? { note: c.at } : undefined }) as RunInfo;
        await store.commit([setValue(RUN_INFO, session)]);
        return;
      case "open": {
        // An operation run again under its id, with its calls' ids, at a time the clock does not tell apart.
        const again = c.reuse ? settledOps.shift() : undefined;
        const opId = again?.opId ?? `op-${n + 1}`;
        const calls = [...(again?.calls ?? [])];
        for (let i = calls.length; i < c.calls; i++) {
          const id = `call-${++n}`;
          ids.push(id);
          calls.push({ toolCallId: id, toolName: "bash", args: { command: `make ${id}` } });
        }
        for (const call of calls) outputs.set(`${opId}:${call.toolCallId}`, { enc: encoder(), text: undefined });
        open[opId] = { startedAt: minutes(0), calls };
        await store.commit([setValue(OPEN_OPERATIONS, { ...open })]);
        return;
      }
      case "output": {
        const keys = [...outputs.keys()];
        if (keys.length === 0) return;
        const key = keys[c.pick % keys.length]!;
        const o = outputs.get(key)!;
        const [opId, id] = key.split(":") as [string, string];
        const base = c.base || o.text === undefined;
        o.text = base ? c.text : o.text + c.text;
        const ops: Op[] = base
          ? [["r", { content: [{ type: "text", text: o.text }], details: { n: o.text.length }, terminate: false, truncation: { truncated: false } }]]
          : [["a", ["content", 0, "text"], c.text]];
        await store.commit([appendList(outputList(opId, id), o.enc.encode(ops), base ? "base" : undefined)]);
        return;
      }
      case "settle": {
        const ops = Object.keys(open);
        if (ops.length === 0) return;
        const opId = ops[c.pick % ops.length]!;
        const { calls } = open[opId]!;
        delete open[opId];
        for (const call of calls) outputs.delete(`${opId}:${call.toolCallId}`);
        settledOps.push({ opId, calls });
        transcript += calls.length;
        await store.commit([
          ...calls.map((call) => appendList(TRANSCRIPT, result(call.toolCallId, `done ${call.toolCallId}`, c.isError))),
          setValue(OPEN_OPERATIONS, { ...open }),
          retireScope(operationScope(opId)),
        ]);
        return;
      }
      case "args": {
        // A writer that rewrites an open call's arguments.
        const ops = Object.keys(open);
        if (ops.length === 0) return;
        const opId = ops[c.pick % ops.length]!;
        const op = open[opId]!;
        open[opId] = { ...op, calls: op.calls.map((call, i) => (i === 0 ? { ...call, args: { command: `make again ${c.n}` } } : call)) };
        await store.commit([setValue(OPEN_OPERATIONS, { ...open })]);
        return;
      }
      case "clear":
        // Entries the watch has read are gone: it cannot follow that. Entries it never saw it never shows.
        if (seen > 0) unfollowable = true;
        transcript = 0;
        await store.commit([deleteList(TRANSCRIPT)]);
        return;
      case "value":
        await store.commit([setValue(value<number>("test", `v${c.n}`), n)]);
        return;
    }
  };
  return {
    apply,
    start: () => store.commit([setValue(RUN_INFO, session)]),
    end: () => store.commit([setValue(RUN_INFO, { ...session, endedAt: minutes(900), status: "succeeded", exitCode: 0 })]),
    /** True once per look after something the watch must read whole. */
    takeUnfollowable() {
      const was = unfollowable;
      unfollowable = false;
      return was;
    },
  };
}

// The long run (SPOOL_LONG: 10,000 sequences, 1,000 on PostgreSQL) takes minutes.
const LONG_TIMEOUT = process.env.SPOOL_LONG ? 3_600_000 : 120_000;

describe.each(["jsonl", "sqlite", "postgres"] as const)("a followed %s session's view", (backend) => {
  it(
    "equals a full read after every look, for random sequences of writes (and is read whole only when it must be)",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(cmd, { maxLength: 60 }), async (cmds) => {
          const s = await liveSession(backend);
          const w = writer(s.store);
          await w.start();
          await s.look();
          let rebuilds = 1;
          for (const c of [...cmds, { k: "look" } as Cmd]) {
            await w.apply(c);
            if (c.k !== "look") continue;
            await s.look();
            if (w.takeUnfollowable()) rebuilds++;
            expect(s.watch.rebuilds).toBe(rebuilds);
          }
          // The writer records its end: the last look sees the session finished.
          await w.end();
          s.ended();
          const last = await s.look();
          expect(last.status).toBe("succeeded");
          expect(s.watch.rebuilds).toBe(rebuilds);
          await s.store.close();
        }),
        {
          // A database round trip per read: fewer sequences there.
          numRuns: (process.env.SPOOL_LONG ? 10_000 : 1000) / (backend === "postgres" ? 10 : 1),
          // Rare by chance: an operation that settles and runs again under the same ids between two looks.
          examples: [
            [
              [
                { k: "open", calls: 1, reuse: false },
                { k: "output", pick: 0, base: true, text: "before" },
                { k: "look" },
                { k: "settle", pick: 0, isError: false },
                { k: "open", calls: 1, reuse: true },
              ],
            ],
            // The same, with the transcript cleared before the look: no settled result tells the
            // operation ran again, only its output list, gone with its retired scope.
            [
              [
                { k: "open", calls: 1, reuse: false },
                { k: "output", pick: 0, base: false, text: "" },
                { k: "look" },
                { k: "settle", pick: 0, isError: false },
                { k: "open", calls: 1, reuse: true },
                { k: "clear" },
              ],
            ],
          ],
        },
      );
    },
    LONG_TIMEOUT,
  );

  it("a session of one call recorded before per-call records shows the session record's details, then not once a second call settles", async () => {
    const s = await liveSession(backend);
    await s.store.commit([setValue(RUN_INFO, info({ details: { exitCode: 0, spillPath: "/spill/a" } }))]);
    await s.store.commit([appendList(TRANSCRIPT, result("call-1", "one"))]);
    expect((await s.look()).calls[0]!.output!.details).toEqual({ exitCode: 0, spillPath: "/spill/a" });
    await s.store.commit([setValue(RUN_INFO, info({ details: { exitCode: 1 } }))]);
    expect((await s.look()).calls[0]!.output!.details).toEqual({ exitCode: 1 });
    await s.store.commit([appendList(TRANSCRIPT, result("call-2", "two"))]);
    expect((await s.look()).calls[0]!.output!.details).toEqual({});
    expect(s.watch.rebuilds).toBe(1);
    await s.watch.close();
    await s.store.close();
  });
});

describe("a followed PostgreSQL session", () => {
  it("two refreshes asked for at once follow it once (one whole read, then only what was added)", async () => {
    const s = await liveSession("postgres");
    await s.store.commit([setValue(RUN_INFO, info())]);
    await s.store.commit([appendList(TRANSCRIPT, result("call-1", "one"))]);
    // Each refresh is told of a new commit, as a notification arriving mid-refresh would.
    await Promise.all([s.watch.refresh(), s.watch.refresh()]);
    expect(s.watch.rebuilds).toBe(1);
    await s.store.commit([appendList(TRANSCRIPT, result("call-2", "two"))]);
    expect((await s.look()).calls).toHaveLength(2);
    expect(s.watch.rebuilds).toBe(1);
    await s.watch.close();
    await s.store.close();
  });
});

describe("a followed JSONL session's log", () => {
  it("another session list growing, or the log replaced by another file, makes the watch read the session whole", async () => {
    const s = await liveSession("jsonl");
    await s.store.commit([setValue(RUN_INFO, info())]);
    await s.store.commit([appendList(TRANSCRIPT, result("call-1", "one"))]);
    await s.look();
    await s.store.commit([appendList(list<number>("other"), 1), appendList(TRANSCRIPT, result("call-2", "two"))]);
    await s.look();
    expect(s.watch.rebuilds).toBe(2);
    // Another file in its place with the same writer, the same seqs and counts, other texts: nothing in
    // what the watch counts says so, only the file.
    await s.store.close();
    const copy = `${s.file}.new`;
    const store = await openJsonlStore(copy, { sessionId: "s1" });
    await store.commit([setValue(RUN_INFO, info())]);
    await store.commit([appendList(TRANSCRIPT, result("call-1", "uno"))]);
    await store.commit([appendList(list<number>("other"), 1), appendList(TRANSCRIPT, result("call-2", "dos"))]);
    await store.close();
    renameSync(copy, s.file);
    const seen = await s.look();
    expect(seen.calls.map((c) => c.output!.content[0].text)).toEqual(["uno", "dos"]);
    expect(s.watch.rebuilds).toBe(3);
  });
});

describe("a followed SQLite session whose writer commits while the watch looks", () => {
  it("shows every call once, open or settled: a look reads one committed state", async () => {
    const root = tempDir("spool-follow-");
    const dir = join(root, "sessions", "s1");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "session.sqlite");
    const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures/settle-loop-child.mjs");
    writerProcess = spawn(process.execPath, [child, compileStoreForChildren(), file, "s1"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    writerProcess.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    await until(() => out.includes("ready"));
    const host = createStateHost();
    const entry: SessionEntry = { id: "s1", dir, file, backend: "sqlite" };
    const watch = watchSessions(host, { list: async () => [entry], report: (l) => expect.fail(l) });
    let looks = 0;
    let last = 0;
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline || looks < 50) {
      await watch.refresh();
      const view = host.get(`session:s1`)?.value as SessionView | undefined;
      if (!view) continue;
      const ids = view.calls.map((c) => Number(c.id.slice("call-".length)));
      // Calls 1…n in order, each once: settled ones from the transcript, then the one still open.
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
      if (ids.length > last) looks++;
      last = ids.length;
    }
    expect(watch.rebuilds).toBe(1);
    writerProcess.kill("SIGKILL");
  }, 30_000);
});
