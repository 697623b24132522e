// The session repository over both durable backends: create / open / list / delete / fork.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  appendList,
  CorruptSessionError,
  ephemeralScope,
  list,
  openSessionRepo,
  retireScope,
  SessionExistsError,
  SessionIdError,
  SessionLockedError,
  SessionNotFoundError,
  setValue,
  value,
} from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "./helpers/backends.js";

afterAll(removeTempDirs);
const A = ephemeralScope("op:A");

describe.each(["jsonl", "sqlite"] as const)("%s session repository", (backend) => {
  it("creates, lists, reopens and refuses duplicate, unknown and unsafe ids", async () => {
    const repo = openSessionRepo(join(tempDir(), "sessions"), { backend });
    expect(await repo.list()).toEqual([]);
    const s = await repo.create({ id: "b-session" });
    await s.store.commit([setValue(value("k"), "v")]);
    await s.store.close();
    const generated = await repo.create();
    await generated.store.close();
    expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await repo.list()).map((x) => x.id)).toEqual(["b-session", generated.id].sort());
    const re = await repo.open("b-session");
    expect(re.get(value("k"))).toBe("v");
    await re.close();
    await expect(repo.create({ id: "b-session" })).rejects.toBeInstanceOf(SessionExistsError);
    await expect(repo.open("nope")).rejects.toBeInstanceOf(SessionNotFoundError);
    for (const bad of ["../x", "", ".hidden", "a/b", "x".repeat(129)]) await expect(repo.open(bad)).rejects.toBeInstanceOf(SessionIdError);
  });

  it("open with create starts a session that does not exist yet, also in a directory holding none, and continues one that does", async () => {
    const root = join(tempDir(), "sessions");
    const repo = openSessionRepo(root, { backend });
    const fresh = await repo.open("fresh", { create: true });
    await fresh.commit([setValue(value("k"), "v")]);
    await fresh.close();
    const again = await repo.open("fresh", { create: true });
    expect(again.get(value("k"))).toBe("v");
    await again.close();
    // `create` refuses the directory as existing and `open` finds no session in it.
    // What a run killed before its log was written leaves: a lock, a temp file of the first write.
    mkdirSync(join(root, "bare", "spill"), { recursive: true });
    writeFileSync(join(root, "bare", `${backend === "jsonl" ? "session.jsonl" : "session.sqlite"}.lock`), "{}");
    writeFileSync(join(root, "bare", `${backend === "jsonl" ? "session.jsonl" : "session.sqlite"}.1a-0.tmp`), "");
    await expect(repo.create({ id: "bare" })).rejects.toBeInstanceOf(SessionExistsError);
    await expect(repo.open("bare")).rejects.toBeInstanceOf(SessionNotFoundError);
    const bare = await repo.open("bare", { create: true });
    await bare.close();
    expect((await repo.list()).map((x) => x.id)).toEqual(["bare", "fresh"]);
    // While one holds it, a second opener is refused by the lock.
    const held = await repo.open("held", { create: true });
    await expect(repo.open("held", { create: true })).rejects.toBeInstanceOf(SessionLockedError);
    await held.close();
  });

  it("open with create refuses a directory that still holds a lost log's files or the other backend's log", async () => {
    const root = join(tempDir(), "sessions");
    const repo = openSessionRepo(root, { backend });
    const log = backend === "jsonl" ? "session.jsonl" : "session.sqlite";
    mkdirSync(join(root, "lost"), { recursive: true });
    if (backend === "jsonl") mkdirSync(join(root, "lost", "session.jsonl.scopes"));
    else writeFileSync(join(root, "lost", "session.sqlite-wal"), "");
    await expect(repo.open("lost", { create: true })).rejects.toBeInstanceOf(CorruptSessionError);
    expect(existsSync(join(root, "lost", log))).toBe(false);
    mkdirSync(join(root, "other"), { recursive: true });
    writeFileSync(join(root, "other", backend === "jsonl" ? "session.sqlite" : "session.jsonl"), "");
    await expect(repo.open("other", { create: true })).rejects.toBeInstanceOf(SessionExistsError);
    expect(existsSync(join(root, "other", log))).toBe(false);
  });

  it("lists neither sidecars, temp files nor foreign directories", async () => {
    const root = join(tempDir(), "sessions");
    const repo = openSessionRepo(root, { backend });
    const s = await repo.create({ id: "one" });
    await s.store.commit([appendList(list("out", "", A), "frame")]);
    writeFileSync(join(root, "stray.tmp"), "x");
    writeFileSync(join(s.dir, "session.jsonl.abc.tmp"), "x");
    mkdirSync(join(root, "not-a-session"));
    mkdirSync(join(root, "one.scopes"));
    expect((await repo.list()).map((x) => x.id)).toEqual(["one"]);
    await s.store.close();
  });

  it("delete removes the main log, the sidecars and the session directory", async () => {
    const repo = openSessionRepo(join(tempDir(), "sessions"), { backend });
    const s = await repo.create({ id: "gone" });
    await s.store.commit([appendList(list("out", "", A), "frame")]);
    if (backend === "jsonl") {
      expect(readdirSync(`${s.file}.scopes`)).toHaveLength(1);
      await expect(repo.delete("gone")).rejects.toBeInstanceOf(SessionLockedError);
    }
    await s.store.close();
    await repo.delete("gone");
    expect(existsSync(s.dir)).toBe(false);
    expect(await repo.list()).toEqual([]);
    await expect(repo.delete("gone")).rejects.toBeInstanceOf(SessionNotFoundError);
  });

  it("forks copy session-scoped state only and allocate above the source", async () => {
    const repo = openSessionRepo(join(tempDir(), "sessions"), { backend });
    const s = await repo.create({ id: "src" });
    await s.store.commit([setValue(value("k"), "v1"), appendList(list("t"), "e1")]);
    await s.store.commit([setValue(value("memo", "", A), 1), appendList(list("out", "", A), "live frame")]);
    await s.store.commit([appendList(list("out", "", ephemeralScope("op:B")), "retired frame")]);
    await s.store.commit([setValue(value("k"), "v2"), retireScope(ephemeralScope("op:B"))]);
    const last = await s.store.commit([appendList(list("t"), "e2")]);
    // The source stays open (and, for JSONL, locked) while it is forked.
    const f = await repo.fork("src", { id: "fork" });
    const fork = await repo.open(f.id);
    expect(fork.get(value("k"))).toBe("v2");
    expect(fork.readList(list("t")).elements).toEqual(s.store.readList(list("t")).elements);
    expect(fork.get(value("memo", "", A))).toBeUndefined();
    expect(fork.readList(list("out", "", A)).elements).toEqual([]);
    expect(fork.stats()).toEqual(s.store.stats());
    const { seq } = await fork.commit([appendList(list("out", "", A), "fork frame")]);
    expect(seq).toBeGreaterThan(last.seq);
    expect(fork.readList(list("out", "", A)).elements.map((e) => e.value)).toEqual(["fork frame"]);
    // The source is untouched by the fork's writes.
    expect(s.store.readList(list("out", "", A)).elements.map((e) => e.value)).toEqual(["live frame"]);
    await fork.close();
    await s.store.close();
    expect((await repo.list()).map((x) => x.id)).toEqual(["fork", "src"]);
  });
});
