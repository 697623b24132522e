// JSONL focused tests: sidecar layout, replay order, torn tails, corruption,
// crash windows around retirement, the single-writer lock.
import { spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  appendList,
  CorruptSessionError,
  ephemeralScope,
  list,
  openJsonlStore,
  retireScope,
  SessionLockedError,
  setValue,
  UnsupportedFormatError,
  value,
} from "../../src/store/index.js";
import { encodeHeader, encodeTransaction } from "../../src/store/jsonl/records.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);

const A = ephemeralScope("op:A");
const B = ephemeralScope("op/B é");
const frames = (s = A) => list<string>("frames", "", s);
const scopesDir = (main: string) => `${main}.scopes`;
const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "");
const sidecarOf = (main: string, id: string) => join(scopesDir(main), `scope-${encodeURIComponent(id)}.scope`);
const newMain = () => join(tempDir(), "session.jsonl");

/** What is on disk right now, as a crash would leave it: the logs without the lock. */
function crashCopy(main: string): string {
  const copy = newMain();
  cpSync(main, copy);
  if (existsSync(scopesDir(main))) cpSync(scopesDir(main), scopesDir(copy), { recursive: true });
  return copy;
}

describe("JSONL sidecars", () => {
  it("the first scoped write creates exactly one valid sidecar and no main record", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "s1" });
    await store.commit([appendList(frames(), "f0"), setValue(value("memo", "", A), 1)]);
    expect(lines(main)).toHaveLength(1);
    expect(readdirSync(scopesDir(main))).toEqual([`scope-${encodeURIComponent("op:A")}.scope`]);
    const side = lines(sidecarOf(main, "op:A")).map((l) => JSON.parse(l));
    expect(side[0]).toMatchObject({ format: "spool-scope", version: 1, sessionId: "s1", scopeId: "op:A" });
    expect(side).toHaveLength(2); // a multi-write transaction is one line
    expect(side[1]).toMatchObject({
      seq: 1,
      scope: "op:A",
      w: [
        { op: "append", value: "f0" },
        { op: "set", value: 1 },
      ],
    });
    await store.close();
  });

  it("encodes separators, dots, percent signs and Unicode in scope ids into distinct sidecars that round-trip", async () => {
    const ids = ["a/b", "..", ".", "%41", "A", "日本語", "🙂", "x\\y", "a b?c#d", "a".repeat(180)];
    const main = newMain();
    let store = await openJsonlStore(main);
    for (const id of ids) await store.commit([appendList(frames(ephemeralScope(id)), id)]);
    await store.close();
    expect(readdirSync(scopesDir(main))).toHaveLength(ids.length);
    for (const name of readdirSync(scopesDir(main))) expect(name).toMatch(/^scope-[A-Za-z0-9%!'()*._~-]+\.scope$/);
    store = await openJsonlStore(main);
    for (const id of ids) expect(store.readList(frames(ephemeralScope(id))).elements.map((e) => e.value)).toEqual([id]);
    await store.close();
  });

  it("replays main and several sidecars in global order across reopen", async () => {
    const main = newMain();
    let store = await openJsonlStore(main);
    const seqs: number[] = [];
    seqs.push((await store.commit([appendList(list<string>("t"), "t1")])).seq);
    seqs.push((await store.commit([appendList(frames(A), "a1")])).seq);
    seqs.push((await store.commit([appendList(frames(B), "b1")])).seq);
    seqs.push((await store.commit([appendList(list<string>("t"), "t2")])).seq);
    seqs.push((await store.commit([appendList(frames(A), "a2")])).seq);
    await store.close();
    store = await openJsonlStore(main);
    const got = [...store.readList(list<string>("t")).elements, ...store.readList(frames(A)).elements, ...store.readList(frames(B)).elements]
      .sort((x, y) => x.seq - y.seq)
      .map((e) => [e.seq, e.value]);
    expect(got).toEqual([
      [seqs[0], "t1"],
      [seqs[1], "a1"],
      [seqs[2], "b1"],
      [seqs[3], "t2"],
      [seqs[4], "a2"],
    ]);
    expect((await store.commit([setValue(value("x"), 1)])).seq).toBe(seqs[4]! + 1);
    await store.close();
  });

  it("the header's nextSeq and sidecar records both feed the high-water mark", async () => {
    const main = newMain();
    writeFileSync(main, encodeHeader({ format: "spool-session", version: 1, sessionId: "h", nextSeq: 100, createdAt: "x" }));
    let store = await openJsonlStore(main);
    expect((await store.commit([setValue(value("x"), 1)])).seq).toBe(100);
    await store.close();
    mkdirSync(scopesDir(main), { recursive: true });
    writeFileSync(
      sidecarOf(main, "op:A"),
      encodeHeader({ format: "spool-scope", version: 1, sessionId: "h", scopeId: "op:A" }) +
        encodeTransaction(500, "op:A", [{ op: "append", ns: "frames", key: "", json: '"f"', tag: undefined }]),
    );
    store = await openJsonlStore(main);
    expect(store.readList(frames()).elements).toEqual([{ seq: 500, value: "f" }]);
    expect((await store.commit([setValue(value("x"), 2)])).seq).toBe(501);
    await store.close();
  });

  it.each([
    ["a partial line without newline", (f: string) => appendFileSync(f, '{"seq":99,"w":[{"op":"ap')],
    ["a run of NUL bytes", (f: string) => appendFileSync(f, Buffer.alloc(300))],
    ["an unparsable final line with a newline", (f: string) => appendFileSync(f, "\u0000\u0000]}\n")],
  ])("cuts a torn sidecar tail (%s) whole and repairs the file", async (_name, tear) => {
    const main = newMain();
    let store = await openJsonlStore(main);
    await store.commit([appendList(frames(), "f1"), appendList(frames(), "f2")]);
    await store.close();
    const good = readFileSync(sidecarOf(main, "op:A"));
    tear(sidecarOf(main, "op:A"));
    store = await openJsonlStore(main);
    expect(readFileSync(sidecarOf(main, "op:A"))).toEqual(good);
    expect(store.readList(frames()).elements.map((e) => e.value)).toEqual(["f1", "f2"]);
    await store.commit([appendList(frames(), "f3")]);
    await store.close();
    store = await openJsonlStore(main);
    expect(store.readList(frames()).elements.map((e) => e.value)).toEqual(["f1", "f2", "f3"]);
    await store.close();
  });

  it("cuts a torn main tail before appending, discarding every write of that transaction", async () => {
    const main = newMain();
    let store = await openJsonlStore(main);
    await store.commit([setValue(value("a"), 1)]);
    await store.close();
    const good = readFileSync(main);
    const torn = encodeTransaction(2, "", [
      { op: "set", ns: "b", key: "", json: "2" },
      { op: "set", ns: "c", key: "", json: "3" },
    ]);
    appendFileSync(main, torn.slice(0, torn.length - 5));
    store = await openJsonlStore(main);
    expect(readFileSync(main)).toEqual(good);
    expect(store.get(value("b"))).toBeUndefined();
    expect(store.get(value("c"))).toBeUndefined();
    expect((await store.commit([setValue(value("d"), 4)])).seq).toBe(2);
    await store.close();
    expect(lines(main).map((l) => JSON.parse(l).seq)).toEqual([undefined, 1, 2]);
  });

  it("fails open on a damaged interior line, naming the file and line", async () => {
    const main = newMain();
    const store = await openJsonlStore(main);
    await store.commit([setValue(value("a"), "hello")]);
    await store.commit([setValue(value("b"), 2)]);
    await store.close();
    writeFileSync(main, readFileSync(main, "utf8").replace('"hello"', '"hellp"'));
    const err = await openJsonlStore(main).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptSessionError);
    expect(err).toMatchObject({ code: "SPOOL_STORE_CORRUPT", file: main, line: 2 });
    expect((err as Error).message).toContain(`${main}:2`);
  });

  it("fails open on a damaged interior sidecar record and on a sidecar header naming another session or scope", async () => {
    const main = newMain();
    const store = await openJsonlStore(main, { sessionId: "mine" });
    await store.commit([appendList(frames(), "x")]);
    await store.commit([appendList(frames(), "y")]);
    await store.close();
    const path = sidecarOf(main, "op:A");
    const original = readFileSync(path, "utf8");
    writeFileSync(path, original.replace('"x"', '"z"'));
    await expect(openJsonlStore(main)).rejects.toMatchObject({ code: "SPOOL_STORE_CORRUPT", file: path, line: 2 });
    writeFileSync(path, encodeHeader({ format: "spool-scope", version: 1, sessionId: "other", scopeId: "op:A" }) + original.split("\n").slice(1).join("\n"));
    await expect(openJsonlStore(main)).rejects.toThrow(/names session "other"/);
    writeFileSync(path, original);
    renameSync(path, sidecarOf(main, "op:C"));
    await expect(openJsonlStore(main)).rejects.toThrow(/expected "mine" \/ "op:C"/);
  });

  it("refuses a file written in an unknown format version", async () => {
    const main = newMain();
    writeFileSync(main, encodeHeader({ format: "spool-session", version: 9, sessionId: "v", nextSeq: 1, createdAt: "x" }));
    await expect(openJsonlStore(main)).rejects.toBeInstanceOf(UnsupportedFormatError);
  });
});

describe("JSONL crash windows around retirement", () => {
  it("a crash before the retirement commits leaves the scope live", async () => {
    const main = newMain();
    const store = await openJsonlStore(main);
    await store.commit([appendList(frames(), "f")]);
    const copy = crashCopy(main);
    await store.commit([retireScope(A)]);
    await store.close();
    const re = await openJsonlStore(copy);
    expect(re.readList(frames()).elements.map((e) => e.value)).toEqual(["f"]);
    await re.close();
  });

  it("a crash after the retirement but before the unlink hides the records and the unlink is retried", async () => {
    const main = newMain();
    const store = await openJsonlStore(main);
    await store.commit([appendList(frames(), "f")]);
    const sidecar = readFileSync(sidecarOf(main, "op:A"));
    await store.commit([retireScope(A)]);
    expect(existsSync(sidecarOf(main, "op:A"))).toBe(false);
    const copy = crashCopy(main);
    mkdirSync(scopesDir(copy), { recursive: true });
    writeFileSync(sidecarOf(copy, "op:A"), sidecar);
    await store.close();
    const re = await openJsonlStore(copy);
    expect(re.readList(frames()).elements).toEqual([]);
    expect(existsSync(sidecarOf(copy, "op:A"))).toBe(false);
    // Those hidden records still count for the high-water mark, and the scope id can be reused.
    const { seq } = await re.commit([appendList(frames(), "g")]);
    expect(seq).toBe(3);
    await re.close();
  });

  it("an unlink failure does not reject the terminal transaction", async () => {
    const main = newMain();
    const store = await openJsonlStore(main);
    await store.commit([appendList(frames(), "f")]);
    const path = sidecarOf(main, "op:A");
    // Make unlink() fail for real: the name now points at a non-empty directory.
    renameSync(path, `${path}.moved`);
    mkdirSync(path);
    writeFileSync(join(path, "keep"), "x");
    await expect(store.commit([setValue(value("op"), "done"), retireScope(A)])).resolves.toMatchObject({ seq: 2 });
    expect(store.get(value("op"))).toBe("done");
    expect(store.readList(frames()).elements).toEqual([]);
    await store.close();
    rmSync(path, { recursive: true });
  });

  it("replays only records after the latest retirement when one file holds several lifetimes", async () => {
    const main = newMain();
    const store = await openJsonlStore(main);
    await store.commit([appendList(frames(), "life1")]); // seq 1
    const life1 = readFileSync(sidecarOf(main, "op:A"), "utf8");
    await store.commit([retireScope(A)]); // seq 2
    await store.commit([appendList(frames(), "life2")]); // seq 3
    const life2 = readFileSync(sidecarOf(main, "op:A"), "utf8");
    await store.commit([retireScope(A)]); // seq 4
    await store.commit([appendList(frames(), "life3")]); // seq 5
    const life3 = readFileSync(sidecarOf(main, "op:A"), "utf8");
    await store.close();
    // As if no unlink had ever succeeded: one file with all three lifetimes.
    const tx = (s: string) => s.split("\n").slice(1).join("\n");
    writeFileSync(sidecarOf(main, "op:A"), life1 + tx(life2) + tx(life3));
    const re = await openJsonlStore(main);
    expect(re.readList(frames()).elements).toEqual([{ seq: 5, value: "life3" }]);
    expect((await re.commit([setValue(value("x"), 1)])).seq).toBe(6);
    await re.close();
  });

  it("serialises cleanup against reuse: a retirement and an immediate reuse both land", async () => {
    for (const durability of ["process", "os"] as const) {
      const main = newMain();
      const store = await openJsonlStore(main, { durability });
      await store.commit([appendList(frames(), "old")]);
      const [r, w] = await Promise.all([store.commit([retireScope(A)]), store.commit([appendList(frames(), "new")])]);
      expect(w.seq).toBe(r.seq + 1);
      expect(store.readList(frames()).elements.map((e) => e.value)).toEqual(["new"]);
      await store.close();
      const re = await openJsonlStore(main);
      expect(re.readList(frames()).elements.map((e) => e.value)).toEqual(["new"]);
      await re.close();
    }
  });

  it("close and reopen preserve active scoped progress without retiring it", async () => {
    const main = newMain();
    let store = await openJsonlStore(main);
    await store.commit([appendList(frames(), "base", "base"), appendList(frames(), "d1")]);
    await store.close();
    expect(lines(main)).toHaveLength(1);
    store = await openJsonlStore(main);
    expect(store.readList(frames(), { order: "desc", stopAtTag: "base" }).elements.map((e) => e.value)).toEqual(["d1", "base"]);
    await store.close();
  });

  it("leftover temp files are removed on open and never replayed", async () => {
    const main = newMain();
    let store = await openJsonlStore(main);
    await store.commit([appendList(frames(), "f")]);
    await store.close();
    const tmp = `${sidecarOf(main, "op:Z")}.abc.tmp`;
    writeFileSync(tmp, "half a header");
    store = await openJsonlStore(main);
    expect(existsSync(tmp)).toBe(false);
    expect(readdirSync(dirname(tmp))).toHaveLength(1);
    await store.close();
  });
});

describe("JSONL single-writer lock", () => {
  it("a second opener in the same process gets a clear error naming the process", async () => {
    const main = newMain();
    const store = await openJsonlStore(main);
    const err = await openJsonlStore(main).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionLockedError);
    expect((err as Error).message).toContain(`session ${main} is open in process ${process.pid} (this process)`);
    await store.close();
    await (await openJsonlStore(main)).close();
  });

  it("a lock from another host is respected, and the error says which file to delete once its holder is gone", async () => {
    const main = newMain();
    await (await openJsonlStore(main)).close();
    writeFileSync(`${main}.lock`, JSON.stringify({ pid: 1, host: "a-container", nonce: "0123456789abcdef" }));
    const err = await openJsonlStore(main).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionLockedError);
    expect((err as Error).message).toContain(`is open in process 1 on a-container`);
    expect((err as Error).message).toContain(`stays until you delete ${main}.lock`);
    rmSync(`${main}.lock`);
    await (await openJsonlStore(main)).close();
  });

  // Same host, another PID namespace (a container): its pid 1 is not this machine's init. Seen from
  // the initial namespace, which sees every container's processes, a namespace nothing runs in any
  // more holds nobody; from anywhere else nothing can be told, and the lock stands.
  const initialNamespace = (() => {
    try {
      return readlinkSync("/proc/self/ns/pid") === "pid:[4026531836]";
    } catch {
      return false;
    }
  })();
  it.skipIf(!initialNamespace)("a lock from a container that is gone is cleared, though its pid is alive here", async () => {
    const main = newMain();
    await (await openJsonlStore(main)).close();
    const host = (await import("node:os")).hostname();
    writeFileSync(`${main}.lock`, JSON.stringify({ pid: 1, host, pidns: "pid:[1]", nonce: "0123456789abcdef" }));
    const store = await openJsonlStore(main);
    expect(JSON.parse(readFileSync(`${main}.lock`, "utf8"))).toMatchObject({ pid: process.pid, host, pidns: readlinkSync("/proc/self/ns/pid") });
    await store.close();
  });

  it("a lock from an earlier boot of this host is cleared, though its pid is alive now", async () => {
    const main = newMain();
    await (await openJsonlStore(main)).close();
    const host = (await import("node:os")).hostname();
    writeFileSync(`${main}.lock`, JSON.stringify({ pid: 1, host, boot: "00000000-0000-0000-0000-000000000000", nonce: "0123456789abcdef" }));
    const store = await openJsonlStore(main);
    expect(JSON.parse(readFileSync(`${main}.lock`, "utf8")).pid).toBe(process.pid);
    await store.close();
  });

  it("a lock whose pid was taken again by another process (its start time differs) is cleared; with the holder's own start time it is respected", async () => {
    const main = newMain();
    await (await openJsonlStore(main)).close();
    const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    try {
      const host = (await import("node:os")).hostname();
      const stat = readFileSync(`/proc/${holder.pid}/stat`, "latin1");
      const start = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
      writeFileSync(`${main}.lock`, JSON.stringify({ pid: holder.pid, host, start, nonce: "n" }));
      await expect(openJsonlStore(main)).rejects.toThrow(`open in process ${holder.pid}`);
      writeFileSync(`${main}.lock`, JSON.stringify({ pid: holder.pid, host, start: start - 1, nonce: "n" }));
      const store = await openJsonlStore(main);
      expect(JSON.parse(readFileSync(`${main}.lock`, "utf8"))).toMatchObject({ pid: process.pid, start: expect.any(Number) });
      await store.close();
    } finally {
      holder.kill("SIGKILL");
      await new Promise((r) => holder.once("exit", r));
    }
  });

  it("a live lock held by another process is respected and a dead one's is cleared", async () => {
    const main = newMain();
    await (await openJsonlStore(main)).close();
    const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    try {
      writeFileSync(`${main}.lock`, JSON.stringify({ pid: holder.pid, host: (await import("node:os")).hostname(), nonce: "n" }));
      await expect(openJsonlStore(main)).rejects.toThrow(`open in process ${holder.pid}`);
    } finally {
      holder.kill("SIGKILL");
      await new Promise((r) => holder.once("exit", r));
    }
    const store = await openJsonlStore(main);
    expect(JSON.parse(readFileSync(`${main}.lock`, "utf8")).pid).toBe(process.pid);
    await store.close();
    expect(existsSync(`${main}.lock`)).toBe(false);
  });
});
