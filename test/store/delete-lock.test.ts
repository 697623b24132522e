// `repo.delete` looked at the session's lock, then removed: a writer that opened the session between
// the two had its session removed under it. The removal now takes the lock (removeSessionUnderLock, as
// gc's). The window is driven deterministically: the lock path is a FIFO, so delete's read of it waits
// while a writer in another process takes the real lock, then reads an empty file (no holder).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { appendList, list, openSessionRepo, SessionLockedError } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const here = dirname(fileURLToPath(import.meta.url));
const STORE_MODULE = join(here, "../../dist/store/index.js");
if (!existsSync(STORE_MODULE)) throw new Error("the writer child runs from dist/: run `npm run build` first");
const CHILD = join(here, "fixtures", "open-in-window-child.mjs");

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});
afterAll(removeTempDirs);

const t = list<string>("t");

describe.skipIf(process.platform === "win32")("repo.delete removes under the session's lock", () => {
  it.each(["jsonl", "sqlite"] as const)(
    "%s: a writer that opens the session while delete looks at the lock: refused with the writer's error, the session whole",
    async (backend) => {
      const sessions = join(tempDir("spool-delete-lock-"), "sessions");
      const repo = openSessionRepo(sessions, { backend });
      const { file, store } = await repo.create({ id: "s" });
      await store.commit([appendList(t, "one")]);
      await store.close();
      const fifo = `${file}.lock`;
      execFileSync("mkfifo", [fifo]);
      const args = [CHILD, pathToFileURL(STORE_MODULE).href, sessions, backend, "s", fifo, join(tempDir("spool-delete-fifo-"), "fifo")];
      const writer = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
      children.push(writer);
      let out = "";
      writer.stdout!.on("data", (d: Buffer) => (out += d));
      await until(() => out.includes("waiting"), "the writer to wait at the lock", 15_000);

      const refused = await repo.delete("s").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(SessionLockedError);
      expect((refused as SessionLockedError).message).toContain(`session ${file} is open in process ${writer.pid}`);
      await until(() => out.includes("ready"), "the writer to hold the session", 15_000);
      expect(existsSync(file)).toBe(true);

      const exited = new Promise((r) => writer.once("exit", r));
      writer.kill("SIGKILL");
      await exited;
      const again = await repo.open("s");
      expect(again.readList(t).elements.map((e) => e.value)).toEqual(["one"]);
      await again.close();
      await repo.delete("s");
      expect(existsSync(dirname(file))).toBe(false);
    },
  );
});
