// Crash test with real processes: a child commits a random stream and acknowledges each resolved
// commit; we SIGKILL it at a random moment, reopen, and check that every acknowledged transaction is
// present, the in-flight one is all-or-nothing, seqs are never reused and retired scopes stay retired.
// JSONL reopens also equal a replay of every line, ignoring the checkpoint: each reopen is checkpointed
// on close and the next child appends past it and dies without updating it; a second JSONL variant
// checkpoints as often as the store allows (checkpointBytes 1: whenever the log grew 8 × the
// checkpoint's size, every few commits here), so kills also land inside checkpoint writes. A third
// runs one long operation (a batch per flush, a base with a clear every 50) and rewrites its sidecar
// compactly whenever it has grown 4 × (sidecarCompactBytes 1); half of its kills are sent the moment
// a rewrite's temp file appears in the sidecar directory, so they land inside rewrites.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ephemeralScope,
  list,
  openJsonlStore,
  openPostgresStore,
  openSqliteStore,
  SessionLockedError,
  setValue,
  value,
  type Durability,
  type Scope,
  type Store,
  type ValueList,
} from "../../src/store/index.js";
import { loadSession } from "../../src/store/jsonl/replay.js";
import { snapshotOf } from "../../src/store/jsonl/snapshot.js";
import { testDatabase, uniqueSchema } from "./helpers/pg.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";
import { compileStoreForChildren } from "./helpers/compile-store.js";
// @ts-expect-error plain-JS fixture shared with the child process
import { PLANS, SCOPES, SESSION_KEYS } from "./fixtures/crash-plan.mjs";

interface TxWrite {
  op: "set" | "delete" | "append" | "clear" | "retire";
  ns: string;
  key: string;
  value?: unknown;
  tag?: string;
  scope?: string;
}
interface Tx {
  scope: string;
  writes: TxWrite[];
}

const LONG = process.env.SPOOL_LONG === "1";
const LINEAGES = 4;
const KILLS_PER_LINEAGE = LONG ? 250 : 13;
/** A lineage starts a fresh session this often, so replay cost stays flat over a long run. */
const KILLS_PER_SESSION = 10;
const child = join(dirname(fileURLToPath(import.meta.url)), "fixtures/crash-child.mjs");
let storeModule = "";

const live = new Set<ChildProcess>();
let stopped = false;
beforeAll(() => {
  storeModule = compileStoreForChildren();
});
afterAll(() => {
  // A failed or timed-out test must not leave lineages spawning children in the background.
  stopped = true;
  for (const p of live) p.kill("SIGKILL");
  return removeTempDirs();
});

/** The reference model: plain maps, no storage code. */
class Model {
  values = new Map<string, string>();
  lists = new Map<string, { seq: number; value: unknown; tag?: string }[]>();

  clone(): Model {
    const m = new Model();
    m.values = new Map(this.values);
    for (const [k, v] of this.lists) m.lists.set(k, [...v]);
    return m;
  }

  apply(tx: Tx, seq: number): this {
    tx.writes.forEach((w, i) => {
      const k = `${tx.scope}|${w.ns}|${w.key}`;
      switch (w.op) {
        case "set":
          this.values.set(k, JSON.stringify(w.value));
          break;
        case "delete":
          this.values.delete(k);
          break;
        case "append": {
          const l = this.lists.get(k) ?? [];
          l.push(w.tag === undefined ? { seq: seq + i, value: w.value } : { seq: seq + i, value: w.value, tag: w.tag });
          this.lists.set(k, l);
          break;
        }
        case "clear":
          this.lists.delete(k);
          break;
        case "retire":
          for (const m of [this.values, this.lists]) for (const key of [...m.keys()]) if (key.startsWith(`${w.scope}|`)) m.delete(key);
          break;
      }
    });
    return this;
  }

  dump(): unknown {
    const values = Object.fromEntries([...this.values].map(([k, v]) => [k, JSON.parse(v)]));
    const lists = Object.fromEntries([...this.lists].filter(([, l]) => l.length > 0));
    return { values, lists };
  }
}

function dumpStore(store: Pick<Store, "get" | "readList">): unknown {
  const values: Record<string, unknown> = {};
  const lists: Record<string, unknown[]> = {};
  const readAll = (k: string, addr: ValueList<unknown, Scope>) => {
    const out: unknown[] = [];
    let cursor: number | undefined;
    do {
      const page = store.readList(addr, cursor === undefined ? { limit: 10_000 } : { limit: 10_000, cursor });
      out.push(...page.elements);
      cursor = page.cursor;
    } while (cursor !== undefined);
    if (out.length > 0) lists[k] = out;
  };
  for (const key of SESSION_KEYS as string[]) {
    const v = store.get(value("s", key));
    if (v !== undefined) values[`|s|${key}`] = v;
  }
  const probe = store.get(value("probe"));
  if (probe !== undefined) values["|probe|"] = probe;
  readAll("|transcript|", list("transcript"));
  for (const id of SCOPES as string[]) {
    const s = ephemeralScope(id);
    const memo = store.get(value("memo", "", s));
    if (memo !== undefined) values[`${id}|memo|`] = memo;
    readAll(`${id}|out|`, list("out", "", s));
  }
  return { values, lists };
}

const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, b);

/** Resolves when a `*.tmp` file appears in `dir` (a sidecar rewrite has begun), or after `maxMs`. */
function tempAppears(dir: string, maxMs: number): { appeared: Promise<boolean>; stop: () => void } {
  let stop = () => undefined as void;
  const appeared = new Promise<boolean>((resolve) => {
    const w = watch(dir, (_event, name) => name?.endsWith(".tmp") && resolve(true));
    const t = setTimeout(() => resolve(false), maxMs);
    stop = () => {
      clearTimeout(t);
      w.close();
    };
  });
  return { appeared, stop };
}

/**
 * Runs the child and SIGKILLs it `delayMs` after it is ready, or, with `onTempIn`, `delayMs` mod 3 ms
 * after a temp file appears in that directory (at most 2 s after). Returns whether the kill followed a
 * temp file.
 */
async function runChildUntilKilled(args: string[], delayMs: number, onTempIn?: string): Promise<boolean> {
  const p = spawn(process.execPath, [child, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  live.add(p);
  let stderr = "";
  p.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<NodeJS.Signals | number | null>((r) => p.once("exit", (code, sig) => r(sig ?? code)));
  const watcher = onTempIn === undefined ? undefined : tempAppears(onTempIn, 2000);
  let onTemp = false;
  try {
    await new Promise<void>((resolve, reject) => {
      p.stdout!.on("data", (d: Buffer) => d.includes("ready") && resolve());
      exited.then(() => reject(new Error(`crash child exited before it was ready: ${stderr}`)));
    });
    if (watcher !== undefined) {
      onTemp = await watcher.appeared;
      // 0–2 ms later: most kills land before the rename, some after it.
      await new Promise((r) => setTimeout(r, delayMs % 3));
    } else await new Promise((r) => setTimeout(r, delayMs)); // on purpose: a random moment inside the commit stream
  } finally {
    p.kill("SIGKILL");
    watcher?.stop();
  }
  const how = await exited;
  live.delete(p);
  if (how !== "SIGKILL") throw new Error(`crash child ended by ${String(how)} instead of SIGKILL: ${stderr}`);
  return onTemp;
}

type Backend = "jsonl" | "sqlite" | "postgres";
const pgSchema = uniqueSchema("crash");
/** The longest a reopen after SIGKILL waited for the server to drop the dead writer's lease. */
let longestLeaseWaitMs = 0;

/** A PostgreSQL reopen right after SIGKILL may race the server noticing the closed socket. */
async function openPostgres(path: string, durability: Durability): Promise<Store> {
  const [url, schema, sessionId] = path.split("#");
  const t0 = Date.now();
  for (;;) {
    try {
      const s = await openPostgresStore(url, { schema: schema!, sessionId: sessionId!, durability });
      longestLeaseWaitMs = Math.max(longestLeaseWaitMs, Date.now() - t0);
      return s;
    } catch (e) {
      if (!(e instanceof SessionLockedError) || Date.now() - t0 > 5000) throw e;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

interface LineageOptions {
  /** JSONL: checkpoint whenever the store allows (1) instead of at its default interval. */
  readonly checkpointBytes?: number;
  /** JSONL: rewrite sidecars compactly at this size (1: whenever one has grown 4 ×). */
  readonly sidecarCompactBytes?: number;
  /** The transaction stream (crash-plan.mjs). */
  readonly plan?: "random" | "rolling";
  /** JSONL: every other kill is sent when a sidecar rewrite's temp file appears. */
  readonly killInRewrites?: boolean;
}

interface LineageResult {
  kills: number;
  acked: number;
  /** Kills sent as a rewrite's temp file appeared, and how many of those left the temp file behind. */
  onTemp: number;
  tempLeft: number;
}

async function lineage(backend: Backend, durability: Durability, lineageSeed: number, o: LineageOptions = {}): Promise<LineageResult> {
  const plan = PLANS[o.plan ?? "random"] as (seed: number) => Generator<Tx>;
  const dir = tempDir("spool-crash-");
  let path = "";
  const open = () =>
    backend === "jsonl"
      ? openJsonlStore(path, { durability })
      : backend === "postgres"
        ? openPostgres(path, durability)
        : openSqliteStore(path, { durability });
  const pgUrl = backend === "postgres" ? (await testDatabase()).url : "";
  let model = new Model();
  let nextSeq = 1;
  let rnd = lineageSeed;
  const random = () => (rnd = (rnd * 1103515245 + 12345) % 2147483648) / 2147483648;
  let kills = 0;
  let acked = 0;
  let onTemp = 0;
  let tempLeft = 0;
  for (let iter = 0; iter < KILLS_PER_LINEAGE && !stopped; iter++) {
    if (iter % KILLS_PER_SESSION === 0) {
      path =
        backend === "postgres"
          ? `${pgUrl}#${pgSchema}#l${lineageSeed}-${iter}`
          : join(dir, `${iter}`, backend === "jsonl" ? "session.jsonl" : "session.sqlite");
      model = new Model();
      nextSeq = 1;
    }
    const seed = lineageSeed * 10_000 + iter;
    const ackFile = join(dir, `acks-${iter}`);
    const extra = [String(o.checkpointBytes ?? ""), String(o.sidecarCompactBytes ?? ""), o.plan ?? "random"];
    const scopes = `${path}.scopes`;
    const watchTemps = o.killInRewrites === true && iter % 2 === 1;
    if (watchTemps) mkdirSync(scopes, { recursive: true, mode: 0o700 });
    const delay = Math.floor(random() * 25);
    if (await runChildUntilKilled([storeModule, backend, path, String(seed), durability, ackFile, ...extra], delay, watchTemps ? scopes : undefined)) onTemp++;
    kills++;
    if (backend === "jsonl" && existsSync(scopes) && readdirSync(scopes).some((n) => n.endsWith(".tmp"))) tempLeft++;
    const acks = existsSync(ackFile)
      ? readFileSync(ackFile, "utf8")
          .split("\n")
          .filter((l) => /^\d+ \d+$/.test(l))
          .map((l) => l.split(" ").map(Number) as [number, number])
      : [];
    rmSync(ackFile, { force: true });
    acked += acks.length;
    const stream = plan(seed);
    for (let j = 0; j < acks.length; j++) {
      const tx = stream.next().value as Tx;
      // Contiguous, predicted seqs: nothing acknowledged was reused or skipped.
      expect(acks[j], `lineage ${lineageSeed} iteration ${iter} ack ${j}`).toEqual([j, nextSeq]);
      model.apply(tx, nextSeq);
      nextSeq += tx.writes.length;
    }
    const inFlight = stream.next().value as Tx;
    const withInFlight = model.clone().apply(inFlight, nextSeq);

    const store = await open();
    const got = dumpStore(store);
    if (backend === "jsonl") {
      const replayed = loadSession(path, { repair: false, ignoreCheckpoint: true }).state;
      expect(dumpStore(snapshotOf(() => replayed)), `lineage ${lineageSeed} iteration ${iter}: reopen differs from a full replay`).toEqual(got);
      expect(readdirSync(dirname(path)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
      if (existsSync(`${path}.scopes`)) expect(readdirSync(`${path}.scopes`).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    }
    const eqWithout = same(got, model.dump());
    const eqWith = same(got, withInFlight.dump());
    if (!eqWithout && !eqWith) {
      // Show the diff against what every acknowledged commit implies.
      expect(got, `lineage ${lineageSeed} iteration ${iter}: state is neither before nor after the in-flight transaction`).toEqual(model.dump());
    }
    const probe = await store.commit([setValue(value("probe"), iter)]);
    const present = eqWith && (!eqWithout || probe.seq === nextSeq + inFlight.writes.length);
    if (present) {
      model = withInFlight;
      nextSeq += inFlight.writes.length;
    }
    expect(probe.seq, "the first commit after reopen allocates right above every complete record").toBe(nextSeq);
    model.apply({ scope: "", writes: [{ op: "set", ns: "probe", key: "", value: iter }] }, probe.seq);
    nextSeq = probe.seq + 1;
    await store.close();
  }
  return { kills, acked, onTemp, tempLeft };
}

describe("jsonl checkpointing every few commits, under SIGKILL", () => {
  it(
    `keeps every acknowledged commit, and reopens equal to a full replay, across ${LINEAGES * KILLS_PER_LINEAGE} kills`,
    async () => {
      const runs = Array.from({ length: LINEAGES }, (_, i) => lineage("jsonl", i % 2 === 0 ? "process" : "os", i + 50, { checkpointBytes: 1 }));
      const results = await Promise.all(runs);
      const kills = results.reduce((a, r) => a + r.kills, 0);
      expect(kills).toBeGreaterThanOrEqual(LONG ? 1000 : 50);
      expect(results.reduce((a, r) => a + r.acked, 0)).toBeGreaterThan(kills);
    },
    LONG ? 3_600_000 : 600_000,
  );
});

describe("jsonl rewriting a long operation's sidecar compactly, under SIGKILL", () => {
  it(
    `keeps every acknowledged commit, and reopens equal to a full replay, across ${LINEAGES * KILLS_PER_LINEAGE} kills, half of them inside rewrites`,
    async () => {
      const runs = Array.from({ length: LINEAGES }, (_, i) =>
        lineage("jsonl", i % 2 === 0 ? "process" : "os", i + 70, { sidecarCompactBytes: 1, plan: "rolling", killInRewrites: true }),
      );
      const results = await Promise.all(runs);
      const sum = (k: keyof LineageResult) => results.reduce((a, r) => a + r[k], 0);
      expect(sum("kills")).toBeGreaterThanOrEqual(LONG ? 1000 : 50);
      expect(sum("acked")).toBeGreaterThan(sum("kills"));
      // The kills sent on a temp file did land inside rewrites: most found one begun and not renamed yet.
      expect(sum("onTemp")).toBeGreaterThan(sum("kills") / 4);
      expect(sum("tempLeft")).toBeGreaterThan(0);
    },
    LONG ? 3_600_000 : 600_000,
  );
});

describe.each(["jsonl", "sqlite", "postgres"] as const)("%s under SIGKILL", (backend) => {
  it(
    `keeps every acknowledged commit and no half transaction across ${LINEAGES * KILLS_PER_LINEAGE} kills`,
    async () => {
      const offset = { jsonl: 0, sqlite: 100, postgres: 200 }[backend];
      const runs = Array.from({ length: LINEAGES }, (_, i) => lineage(backend, i % 2 === 0 ? "process" : "os", i + 1 + offset));
      const results = await Promise.all(runs);
      const kills = results.reduce((a, r) => a + r.kills, 0);
      expect(kills).toBeGreaterThanOrEqual(LONG ? 1000 : 50);
      // The kills landed while the children were busy committing, not before they started.
      expect(results.reduce((a, r) => a + r.acked, 0)).toBeGreaterThan(kills);
      // The dead writer's lease is gone by the time the server has seen its socket close.
      if (backend === "postgres") expect(longestLeaseWaitMs).toBeLessThan(2000);
    },
    LONG ? 3_600_000 : 600_000,
  );
});
