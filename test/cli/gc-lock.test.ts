// `spool gc` judges a session idle (not live, last active before the cutoff), then removes it: a writer
// that opened or resumed the session between the two had its directory removed under it. The removal
// (removeIdleSession) now takes the session's lock first. The window is driven by hand here: the
// session is judged, a writer in another process opens it, then the removal runs.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { listSessions, loadSummary } from "../../src/cli/session-catalog.js";
import { acquireLock } from "../../src/store/jsonl/lock.js";
import { appendList, list, openSessionRepo, removeIdleSession, SessionLockedError, sessionsDir } from "../../src/store/index.js";
import { runSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const here = dirname(fileURLToPath(import.meta.url));
const STORE_MODULE = join(here, "../../dist/store/index.js");
if (!existsSync(STORE_MODULE)) throw new Error("the writer child runs from dist/: run `npm run build` first");
const CHILD = join(here, "../store/fixtures/hold-session-child.mjs");

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});
afterAll(removeTempDirs);

const t = list<string>("t");

/** A writer in another process holding session `id` open (its lock taken) until it is killed. */
async function writerHolding(sessions: string, backend: "jsonl" | "sqlite", id: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CHILD, pathToFileURL(STORE_MODULE).href, sessions, backend, id], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  await until(() => out.includes("ready"), "the writer to hold the session", 15_000);
  return child;
}

const killed = (child: ChildProcess): Promise<unknown> => {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  return exited;
};

/** A root with one finished session `id` holding one record, judged as gc judges it. */
async function judgedIdle(backend: "jsonl" | "sqlite", id = "s") {
  const root = join(tempDir("spool-gc-lock-"), ".spool");
  const repo = openSessionRepo(sessionsDir(root), { backend });
  const { store } = await repo.create({ id });
  await store.commit([appendList(t, "one")]);
  await store.close();
  const entry = listSessions(root).find((e) => e.id === id)!;
  const loaded = await loadSummary(entry);
  expect(loaded.live).toBe(false);
  return { root, repo, entry, mtime: statSync(entry.file).mtimeMs };
}

describe("gc's removal step takes the session's lock", () => {
  it.each(["jsonl", "sqlite"] as const)("%s: judged idle, then opened by a writer in another process before the removal: kept, whole", async (backend) => {
    const { root, repo, entry, mtime } = await judgedIdle(backend);
    const writer = await writerHolding(sessionsDir(root), backend, "s");
    expect(removeIdleSession(entry.dir, entry.file, mtime)).toBe("held");
    expect(existsSync(entry.file)).toBe(true);
    await killed(writer);
    const store = await repo.open("s");
    expect(store.readList(t).elements.map((e) => e.value)).toEqual(["one"]);
    await store.close();
  });

  it.each(["jsonl", "sqlite"] as const)("%s: a lock left by a dead writer is broken as before, and the session removed with it", async (backend) => {
    const { root, entry } = await judgedIdle(backend);
    await killed(await writerHolding(sessionsDir(root), backend, "s"));
    expect(existsSync(`${entry.file}.lock`)).toBe(true);
    expect(removeIdleSession(entry.dir, entry.file, statSync(entry.file).mtimeMs)).toBe("removed");
    expect(existsSync(entry.dir)).toBe(false);
  });

  it.each(["jsonl", "sqlite"] as const)("%s: a writer that came, wrote and went between the judgement and the removal: kept", async (backend) => {
    const { repo, entry, mtime } = await judgedIdle(backend);
    const store = await repo.open("s");
    await store.commit([appendList(t, "two")]);
    await store.close();
    expect(removeIdleSession(entry.dir, entry.file, mtime)).toBe("changed");
    const again = await repo.open("s");
    expect(again.readList(t).elements.map((e) => e.value)).toEqual(["one", "two"]);
    await again.close();
  });

  it("a lock held by another gc removing the session: left to it, neither kept nor removed here", async () => {
    const { entry, mtime } = await judgedIdle("jsonl");
    const release = acquireLock(`${entry.file}.lock`, entry.file, "remove");
    try {
      expect(removeIdleSession(entry.dir, entry.file, mtime)).toBe("gone");
      expect(existsSync(entry.file)).toBe(true);
    } finally {
      release();
    }
  });
});

describe("spool gc with locks in its sessions", () => {
  it("removes idle sessions (one with a dead writer's lock), keeps the one a live writer holds, and reports it", async () => {
    const cwd = tempDir("spool-gc-lock-cli-");
    const sessions = join(cwd, ".spool", "sessions");
    for (const id of ["idle", "stale"]) expect(runSpool(["run", "-q", "--session", id, "--", "seq 3"], { cwd }).status).toBe(0);
    await killed(await writerHolding(sessions, "jsonl", "stale"));
    expect(JSON.parse(readFileSync(join(sessions, "stale", "session.jsonl.lock"), "utf8")).pid).toBeGreaterThan(0);
    await writerHolding(sessions, "sqlite", "live");
    const dry = runSpool(["gc", "--older-than", "0s", "--dry-run"], { cwd });
    expect(dry.stdout).toMatch(/^would remove idle \(\S+ \S+, succeeded\)\nwould remove stale \(\S+ \S+, \S+\)\nWould free \S+ \S+ from 2 sessions; kept 1 /);
    expect(readdirSync(join(sessions, "idle")).filter((n) => n.includes(".lock"))).toEqual([]); // a dry run takes no lock
    const gc = runSpool(["gc", "--older-than", "0s"], { cwd });
    expect(gc.stderr).toBe("");
    expect(gc.status).toBe(0);
    expect(gc.stdout).toMatch(/^removed idle \(\S+ \S+, succeeded\)\nremoved stale \(\S+ \S+, \S+\)\nFreed \S+ \S+ from 2 sessions; kept 1 /);
    expect(readdirSync(sessions)).toEqual(["live"]);
  }, 30_000);
});

describe("a writer refused because gc is removing the session", () => {
  const removing = (file: string) => `session ${file} is being removed, its records with it, by \`spool gc\` or a \`repo.delete\` in process ${process.pid}`;

  it.each(["jsonl", "sqlite"] as const)("%s: is told so, with gc's pid and what to do, under the stable code", async (backend) => {
    const { repo, entry } = await judgedIdle(backend);
    const release = acquireLock(`${entry.file}.lock`, entry.file, "remove");
    try {
      const refused = await repo.open("s").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(SessionLockedError);
      expect(refused).toMatchObject({ code: "SPOOL_STORE_LOCKED", pid: process.pid, purpose: "remove" });
      expect((refused as Error).message).toContain(`${removing(entry.file)}: open another session, or wait for the removal to finish`);
      expect((refused as Error).message).not.toContain("close it there first");
    } finally {
      release();
    }
  });

  it("spool run --session says so too", async () => {
    const { root, entry } = await judgedIdle("jsonl");
    const release = acquireLock(`${entry.file}.lock`, entry.file, "remove");
    try {
      const run = runSpool(["run", "-q", "--session", "s", "--", "true"], { cwd: dirname(root) });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(removing(entry.file));
    } finally {
      release();
    }
  }, 30_000);
});
