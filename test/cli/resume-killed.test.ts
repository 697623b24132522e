// `spool run --session ID` SIGKILLed mid-command, and the next `spool run --session ID` started at
// once — while the killed one is still a zombie its parent has not reaped, as under a harness that
// kills spool and restarts it. The second run must start (the dead writer holds no lock), and settle
// the dead call first: interrupted, with the output of its last durable flush, its scope retired, so
// the transcript holds a result for every call. `inspect` shows each call with its own output, and
// the session under the latest command. Real processes and stores: JSONL, SQLite, PostgreSQL.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { findEntry, withSnapshot } from "../../src/cli/session-catalog.js";
import { storeTarget } from "../../src/cli/store-option.js";
import { outputList, readTranscript } from "../../src/harness/index.js";
import { stopTestDatabase, testDatabase, uniqueSession } from "../store/helpers/pg.js";
import { runSpool, SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";
import { stateOf } from "../support/process-group.js";

const parents: ChildProcess[] = [];
afterEach(() => {
  // The parent that never reaps: killed, its zombie goes to init, which reaps it.
  for (const p of parents.splice(0)) p.kill("SIGKILL");
});
afterAll(async () => {
  removeTempDirs();
  await stopTestDatabase();
});

const env = { ...process.env, SPOOL_STORE: "" };
const TICKS = "for i in $(seq 1 400); do echo tick $i; sleep 0.05; done";

/** `spool run` under a parent that never waits for it (`sh -c 'spool & exec sleep'`): its pid and its stderr so far. */
function unreapedRun(args: readonly string[], cwd: string): { pid: () => number | undefined; err: () => string } {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const spool = [process.execPath, SPOOL_BIN, ...args].map(quote).join(" ");
  const parent = spawn("sh", ["-c", `${spool} & echo "pid $!"; exec sleep 60`], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  parents.push(parent);
  let out = "";
  let err = "";
  parent.stdout!.on("data", (d: Buffer) => (out += d));
  parent.stderr!.on("data", (d: Buffer) => (err += d));
  return { pid: () => Number(/pid (\d+)/.exec(out)?.[1]) || undefined, err: () => err };
}

interface ReportCall {
  id: string;
  settled: boolean;
  isError: boolean;
  command?: string;
  endedAt?: string | null;
  status?: string;
  recoveredOutput?: string;
}
interface Report {
  command: string;
  status: string;
  live: boolean;
  calls: ReportCall[];
  openScopes: string[];
  transcriptEntries: number;
}

describe.skipIf(!existsSync("/proc/self/stat"))("a `spool run` SIGKILLed mid-command, then run again at once in its session", () => {
  it.each(["jsonl", "sqlite", "postgres"] as const)(
    "%s: the next run starts though the killed one is not reaped, and settles its call as interrupted with its own saved output",
    async (backend) => {
      const cwd = tempDir("spool-resume-killed-");
      const store = backend === "postgres" ? (await testDatabase()).url : backend;
      const id = uniqueSession("killed");
      const inStore = ["--store", store];
      const inspect = (): { report: Report; text: string; stderr: string } => {
        const json = runSpool(["inspect", ...inStore, id, "--json"], { cwd, env });
        const text = runSpool(["inspect", ...inStore, id], { cwd, env });
        expect(json.status, json.stderr).toBe(0);
        return { report: JSON.parse(json.stdout) as Report, text: text.stdout, stderr: json.stderr };
      };

      const first = unreapedRun(["run", ...inStore, "--session", id, "--", TICKS], cwd);
      await until(() => first.err().includes("tick 20\n"), "tick 20 on stderr");
      const pid = first.pid()!;
      process.kill(pid, "SIGKILL");
      await until(() => stateOf(pid) === "Z", "the killed run to be a zombie", 5000);

      // What it left: one call, unsettled, with the output of its last durable flush — its own.
      const left = inspect();
      expect(left.report).toMatchObject({ status: "interrupted", live: false, transcriptEntries: 0 });
      expect(left.report.calls).toHaveLength(1);
      const saved = left.report.calls[0]!.recoveredOutput!;
      expect(saved.startsWith("tick 1\ntick 2\n")).toBe(true);
      expect(saved.split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(10);

      expect(stateOf(pid)).toBe("Z"); // not reaped yet: restarted "at once"
      const second = runSpool(["run", "-q", ...inStore, "--session", id, "--", "echo after"], { cwd, env });
      expect(second.stderr).toBe("");
      expect(second.status).toBe(0);
      expect(second.stdout.startsWith("after\n")).toBe(true);

      const after = inspect();
      expect(after.stderr).toBe(""); // no warning of a missing sidecar or an open operation
      expect(after.report).toMatchObject({ command: "echo after", status: "succeeded", live: false, openScopes: [], transcriptEntries: 2 });
      const [dead, next] = after.report.calls;
      expect(dead).toMatchObject({ id: "call-1", settled: true, isError: true, command: TICKS, status: "interrupted", endedAt: expect.any(String) });
      expect(next).toMatchObject({ id: "call-2", settled: true, isError: false, command: "echo after", status: "succeeded" });
      expect(after.text).toContain("  command:   echo after\n");
      expect(after.text).toContain("  call call-1 (bash): error (interrupted), ");
      expect(after.text).not.toContain("UNSETTLED");

      // Every call has its result; the dead one's is what it had saved, and says why it stops there.
      const entry = await findEntry(join(cwd, ".spool"), storeTarget(backend === "postgres" ? store : backend), id);
      const { transcript, listed } = await withSnapshot(entry, (snap) => ({
        transcript: readTranscript(snap),
        listed: snap.readList(outputList("op-1", "call-1")).elements.length,
      }));
      expect(transcript.map((m) => m.toolCallId)).toEqual(["call-1", "call-2"]);
      expect((transcript[0]!.content[0] as { text: string }).text).toBe(
        `${saved}${saved.endsWith("\n") ? "" : "\n"}[interrupted: spool stopped while this call was running (it was killed or crashed); the output above is what it had saved; it was not run again because the tool is not replay-safe]`,
      );
      expect(listed).toBe(0);
      if (backend === "jsonl") expect(readdirSync(join(entry.dir, "session.jsonl.scopes"))).toEqual([]);
    },
    60_000,
  );
});
