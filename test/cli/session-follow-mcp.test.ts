// `spool serve`'s view of a real live session — the built `spool mcp`, driven by the MCP SDK's client
// with random sequences of calls that start, stream, finish, fail, spill, and of background processes
// read and killed — after every look deep-equals a full read (viewFromSnapshot over a fresh snapshot),
// and so does a replica folded from the ops it published. The server is stopped (SIGSTOP) while a look
// and the full read run, so both see the same files; it writes the log synchronously, so a stopped
// server has no write half done. Needs `npm run build` first, as `npm test` does.
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { listSessions, writerLiveness } from "../../src/cli/session-catalog.js";
import { watchSessions } from "../../src/cli/session-watch.js";
import { viewFromSnapshot, type SessionView } from "../../src/cli/session-view.js";
import { applyImmutable, type Op } from "../../src/delta/index.js";
import { createStateHost } from "../../src/harness/index.js";
import { readJsonlSnapshot } from "../../src/store/index.js";
import { connect, until, type Connected } from "../mcp/helpers.js";

const open: Connected[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The process's state letter (R, S, T, Z…), or undefined once it is gone. */
function state(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0]!;
  } catch {
    return undefined;
  }
}

type Action =
  | { k: "stream"; lines: number; ms: number; exit: number }
  | { k: "fail" }
  | { k: "spill"; lines: number }
  | { k: "background"; lines: number }
  | { k: "read"; pick: number }
  | { k: "kill"; pick: number }
  | { k: "wait"; ms: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    arbitrary: fc.record({
      k: fc.constant("stream" as const),
      lines: fc.integer({ min: 1, max: 25 }),
      ms: fc.integer({ min: 5, max: 60 }),
      exit: fc.constantFrom(0, 0, 1, 7),
    }),
    weight: 4,
  },
  { arbitrary: fc.constant({ k: "fail" as const }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("spill" as const), lines: fc.integer({ min: 5000, max: 30000 }) }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("background" as const), lines: fc.integer({ min: 1, max: 30 }) }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("read" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("kill" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("wait" as const), ms: fc.integer({ min: 10, max: 400 }) }), weight: 3 },
);

describe("spool serve following a live spool mcp session", () => {
  it("after every look, the view and its replica equal a full read", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 3, maxLength: 12 }), async (actions) => {
        const c = await connect();
        open.push(c);
        const pid = c.transport.pid!;
        const sdir = await until(() => {
          try {
            return c.sessionDir();
          } catch {
            return undefined;
          }
        }, "the session directory");
        const id = basename(sdir);
        const file = join(sdir, "session.jsonl");
        const host = createStateHost();
        const reports: string[] = [];
        const watch = watchSessions(host, { list: async () => listSessions(c.root), report: (l) => reports.push(l) });
        let replica: SessionView | undefined;
        let looks = 0;
        let changes = 0;
        let last = "";
        /** One look while the server is stopped, checked against a full read of the same files. */
        const look = async (): Promise<SessionView> => {
          const s0 = state(pid);
          const running = s0 !== undefined && s0 !== "Z" && s0 !== "X";
          if (running) {
            process.kill(pid, "SIGSTOP");
            await until(() => state(pid) === "T", "the server to stop");
          }
          try {
            await watch.refresh();
            const s = host.get(`session:${id}`);
            if (s && looks++ === 0) s.subscribe((ops) => void (replica = applyImmutable(replica, ops as Op[])));
            const snap = readJsonlSnapshot(file);
            const expected = json(viewFromSnapshot(id, snap, writerLiveness(snap).live));
            expect(reports).toEqual([]);
            expect(json(s?.value)).toEqual(expected);
            expect(json(replica)).toEqual(expected);
            const now = JSON.stringify(expected);
            if (now !== last) changes++;
            last = now;
            return expected as SessionView;
          } finally {
            if (running) process.kill(pid, "SIGCONT");
          }
        };
        const calls: Promise<unknown>[] = [];
        const processes: string[] = [];
        const call = (name: string, args: Record<string, unknown>) => c.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
        await look();
        // Actions that change the session: a call, or a read/kill of a process that exists (with none,
        // they do nothing, and a run of waits and such is no evidence either way).
        let effective = 0;
        for (const a of actions) {
          if (a.k !== "wait" && ((a.k !== "read" && a.k !== "kill") || processes.length > 0)) effective++;
          switch (a.k) {
            case "stream":
              calls.push(
                call("bash", {
                  command: `for i in $(seq 1 ${a.lines}); do echo "stream line $i of ${a.lines}"; sleep 0.0${String(a.ms).padStart(2, "0")}; done; exit ${a.exit}`,
                }),
              );
              break;
            case "fail":
              calls.push(call("bash", { command: "echo 'FAIL test/parser.test.ts' >&2; exit 3" }));
              break;
            case "spill":
              calls.push(call("bash", { command: `seq 1 ${a.lines}` }));
              break;
            case "background": {
              const r = await call("bash", { command: `for i in $(seq 1 ${a.lines}); do echo "bg line $i"; sleep 0.05; done`, background: true });
              processes.push((r.structuredContent as { processId: string }).processId);
              break;
            }
            case "read":
              if (processes.length > 0) await call("process_output", { processId: processes[a.pick % processes.length] });
              break;
            case "kill":
              if (processes.length > 0) await call("process_kill", { processId: processes[a.pick % processes.length] });
              break;
            case "wait":
              await sleep(a.ms);
              break;
          }
          await look();
          await sleep(30);
          await look();
        }
        // Everything settles while it is watched, then the session ends with the server.
        const settled = Promise.all(calls);
        let done = false;
        void settled.finally(() => (done = true));
        while (!done) {
          await sleep(100);
          await look();
        }
        await c.client.close();
        await until(() => state(pid) === undefined || state(pid) === "Z", "the server to exit");
        const final = await look();
        expect(final.status).not.toBe("running");
        // Followed from what it held all along: read whole once, when first seen.
        expect(watch.rebuilds).toBe(1);
        // The view moved with the session: at least once per two actions that changed it, and at the end.
        expect(changes).toBeGreaterThan(effective / 2);
        expect(changes).toBeGreaterThanOrEqual(2);
      }),
      { numRuns: process.env.SPOOL_LONG ? 25 : 3, endOnFailure: true },
    );
  }, 600_000);
});
