// `spool inspect` streams a session (inspect-report.ts): calls are made page by page and held back
// until the header is known, then written at the reader's pace. What it prints must stay what building
// the whole view first printed: the oracle below is that report, kept as it was, over viewFromSnapshot
// (the path `spool serve` still takes). Compared byte for byte with the built binary (npm test builds
// first) on sessions of 5,000 calls in every backend, while their writer is still open and after,
// and on a session of one call recorded before per-call records.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBytes } from "../../src/capture/index.js";
import { DeferredText, MEMORY_BYTES } from "../../src/cli/deferred-text.js";
import { writeInspectReport } from "../../src/cli/inspect-report.js";
import { countOf } from "../../src/errors/index.js";
import { PacedOutput } from "../../src/cli/paced-output.js";
import { findEntry, loadSession, withSnapshot, type LoadedSession, type SessionEntry } from "../../src/cli/session-catalog.js";
import type { RunInfo } from "../../src/cli/session-view.js";
import { shownCommand } from "../../src/cli/shown-command.js";
import { storeTarget } from "../../src/cli/store-option.js";
import type { ToolResultMessage } from "../../src/context/index.js";
import type { WireOp } from "../../src/delta/index.js";
import { callRecord, OPEN_OPERATIONS, outputList, SESSION_RECORD, TRANSCRIPT, type OpenOperation } from "../../src/harness/index.js";
import type { ToolOutputState } from "../../src/output/index.js";
import { appendList, listPostgresSpills, openPostgresStore, openSessionRepo, setValue, sidecarDir, type Store, type Write } from "../../src/store/index.js";
import { testDatabase, uniqueSession } from "../store/helpers/pg.js";
import { runSpool, SPOOL_BIN } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

let pgUrl = "";
beforeAll(async () => {
  pgUrl = (await testDatabase()).url;
});
afterAll(() => removeTempDirs());

type Backend = "jsonl" | "sqlite" | "postgres";

// ---- the oracle: the report as inspect printed it from the whole view ----

function oracleListings(entry: SessionEntry) {
  return (async () => {
    const spillDir = join(entry.dir, "spill");
    const spills = existsSync(spillDir)
      ? readdirSync(spillDir).map((name) => ({ path: join(spillDir, name), bytes: statSync(join(spillDir, name)).size }))
      : [];
    for (const s of entry.backend === "postgres" ? await listPostgresSpills(entry.url, entry.id) : [])
      spills.push({ path: `${entry.file}/spill/${s.name}${s.complete ? "" : " (incomplete)"}`, bytes: s.bytes });
    const scopesDir = sidecarDir(entry.file);
    const openScopes = entry.backend !== "postgres" && existsSync(scopesDir) ? readdirSync(scopesDir).filter((f) => !f.endsWith(".tmp")) : [];
    return { spills, openScopes };
  })();
}

async function oracleReport(entry: SessionEntry, json: boolean): Promise<{ stdout: string; stderr: string }> {
  const { view, summary, live, warnings }: LoadedSession = await loadSession(entry);
  const stderr = warnings.map((w) => `spool inspect: warning: ${w}\n`).join("");
  const { spills, openScopes } = await oracleListings(entry);
  const calls = view.calls.map((c) => ({
    id: c.id,
    tool: c.name,
    settled: c.ended,
    isError: c.isError,
    ...(c.run ? { command: c.run.command, startedAt: c.run.startedAt, endedAt: c.run.endedAt, exitCode: c.run.exitCode, status: c.run.status } : {}),
    outputChars: c.output?.content[0].text.length ?? 0,
    truncation: c.output?.truncation,
    ...(c.ended ? {} : { recoveredOutput: c.output?.content[0].text ?? "" }),
  }));
  const report = { ...summary, backend: entry.backend, dir: entry.dir, live, calls, spillFiles: spills, openScopes, transcriptEntries: view.transcript.length };
  if (json) return { stdout: JSON.stringify(report) + "\n", stderr };
  const lines = [
    `Session ${summary.id} (${entry.backend}) — ${summary.status}${summary.exitCode !== null ? `, exit code ${summary.exitCode}` : ""}${live ? ", still running" : ""}`,
    // A command is shown on one printable line (the generated ones hold newlines).
    `  command:   ${shownCommand(summary.command)}`,
    `  started:   ${summary.startedAt || "?"}${summary.endedAt ? `   ended: ${summary.endedAt}` : ""}${summary.lastActivityAt ? `   last activity: ${summary.lastActivityAt}` : ""}`,
    `  directory: ${entry.dir} (${formatBytes(summary.bytes)})`,
    `  transcript entries: ${view.transcript.length}; open scopes: ${openScopes.length ? openScopes.join(", ") : "none"}`,
  ];
  for (const c of calls) {
    const t = c.truncation;
    lines.push(
      `  call ${c.id} (${c.tool}): ${c.settled ? `${c.isError ? "error" : "ok"}${c.status === "interrupted" || c.status === "timed out" ? ` (${c.status})` : ""}` : "UNSETTLED"}, ${countOf(c.outputChars, "char")} shown` +
        (t && t.totalLines !== undefined
          ? `, ${countOf(t.totalLines, "line")} / ${formatBytes(t.totalBytes)} of cleaned text${t.cutLines > 0 ? ` (${countOf(t.cutLines, "over-long line")} cut)` : ""}${t.truncated ? `, truncated by ${t.truncatedBy}` : ""}`
          : ""),
    );
    if (c.command !== undefined)
      lines.push(
        `    $ ${shownCommand(c.command)}   started ${c.startedAt}${c.endedAt ? `, ended ${c.endedAt}` : ""}${c.exitCode !== null && c.exitCode !== undefined ? `, exit ${c.exitCode}` : ""}`,
      );
    if (!c.settled) {
      const text = c.recoveredOutput ?? "";
      const tail = text.replace(/\n$/, "").split("\n").slice(-15);
      if (text === "") lines.push("    recovered output (last durable flush): none, nothing of its output was saved");
      else lines.push(`    recovered output (last durable flush, ${countOf(text.length, "char")}; last lines):`, ...tail.map((l) => `    | ${l}`));
    }
  }
  for (const s of spills) lines.push(`  spill: ${s.path} (${formatBytes(s.bytes)} raw)`);
  return { stdout: lines.join("\n") + "\n", stderr };
}

/** Equal strings, or a failure that shows where they part (the reports are megabytes long). */
function expectSame(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && actual[i] === expected[i]) i++;
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 200), i + 200));
  expect.fail(`${what}: differs at char ${i} of ${actual.length} (expected ${expected.length})\nactual:   ${around(actual)}\nexpected: ${around(expected)}`);
}

// ---- sessions as `spool run --session` leaves them, written the quick way (many calls a commit) ----

const WORDS = "lorem ipsum dolor sit amet élan naïve 漢字 🙂 consectetur\tadipiscing elit sed do".split(" ");
let seed = 11;
function text(n: number, tag: string): string {
  let s = `${tag}:`;
  while (s.length < n) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    s += WORDS[seed % WORDS.length] + (seed % 5 === 0 ? "\n" : " ");
  }
  return s;
}

const T0 = Date.parse("2026-11-01T09:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const LATEST = "2027-03-01T00:00:00.000Z";
/** A process id no process has (above Linux's largest pid_max): the session's writer is gone. */
const DEAD_PID = 2 ** 22 + 1;

function truncationOf(chars: number, cut: boolean): ToolOutputState["truncation"] {
  return {
    truncated: cut,
    truncatedBy: cut ? "bytes" : null,
    totalLines: Math.ceil(chars / 40) * (cut ? 3 : 1),
    totalBytes: chars * (cut ? 3 : 1),
    outputLines: Math.ceil(chars / 40),
    outputBytes: chars,
    maxLines: 2000,
    maxBytes: 51200,
    cutLines: 0,
    lastLinePartial: false,
  };
}

/** Settled calls 1…n: most with a record, some without, errors, spills, one whose end is the session's latest activity. */
async function writeCalls(store: Store, n: number, pid: number): Promise<void> {
  await store.commit([setValue(SESSION_RECORD, { command: "make check", cwd: "/w", pid, startedAt: at(0), endedAt: null, status: "running", exitCode: null })]);
  for (let first = 1; first <= n; first += 10) {
    const writes: Write[] = [];
    for (let i = first; i < first + 10 && i <= n; i++) {
      const id = `call-${i}`;
      const r = (i * 2654435761) % 100;
      const body = text(r < 70 ? 20 + ((r * 37) % 400) : r < 95 ? 1000 + ((r * 7919) % 6000) : 20000, `out${i}`);
      const msg: ToolResultMessage = {
        role: "tool",
        toolCallId: id,
        toolName: i % 17 === 0 ? "read" : "bash",
        isError: i % 13 === 0,
        content: [{ type: "text", text: body }],
        ...(i % 211 === 0 ? { spillPath: `/w/.spool/sessions/s/spill/${id}.log` } : {}),
      };
      if (i % 97 !== 0) {
        const ended = i === 1234 ? LATEST : i % 101 === 0 ? null : at(i * 1000 + 700);
        const rec: RunInfo = {
          command: `make step-${i} ${text(30, "args")}`,
          cwd: "/w",
          pid,
          startedAt: at(i * 1000),
          endedAt: ended,
          status: ended === null ? "running" : i % 13 === 0 ? "failed" : "succeeded",
          exitCode: ended === null ? null : i % 13 === 0 ? 2 : 0,
          truncation: truncationOf(body.length, r >= 95),
          details: { exitCode: i % 13 === 0 ? 2 : 0 },
        };
        writes.push(setValue(callRecord(id), rec));
      }
      writes.push(appendList(TRANSCRIPT, msg));
    }
    await store.commit(writes);
  }
}

/** Two operations still open: three calls, two with durable output (one flushed twice), one with a record. */
async function openOperations(store: Store): Promise<void> {
  const ops: Record<string, OpenOperation> = {
    "op-a": {
      startedAt: at(9_000_000),
      calls: [
        { toolCallId: "open-1", toolName: "bash", args: { command: "tail -f log" } },
        { toolCallId: "open-2", toolName: "bash", args: { command: "sleep 100" } },
      ],
    },
    "op-b": { startedAt: at(9_000_100), calls: [{ toolCallId: "open-3", toolName: "read", args: { path: "x" } }] },
  };
  await store.commit([
    setValue(OPEN_OPERATIONS, ops),
    setValue(callRecord("open-1"), { command: "tail -f log", cwd: "/w", pid: 1, startedAt: at(9_000_000), endedAt: null, status: "running", exitCode: null }),
  ]);
  const base = (t: string, truncation?: ToolOutputState["truncation"]): WireOp[] => [
    ["r", { content: [{ type: "text", text: t }], details: {}, terminate: false, ...(truncation ? { truncation } : {}) }],
  ];
  await store.commit([appendList(outputList("op-a", "open-1"), base(text(3000, "flush1")), "base")]);
  await store.commit([appendList(outputList("op-a", "open-1"), base(text(5000, "flush2")), "base")]);
  await store.commit([appendList(outputList("op-b", "open-3"), base(text(800, "read"), truncationOf(800, false)), "base")]);
}

interface Made {
  readonly store: Store;
  readonly root: string;
  readonly id: string;
  /** How the CLI names the store: `--store …` (empty for the root's own files). */
  readonly storeArgs: string[];
  readonly target: ReturnType<typeof storeTarget>;
}

async function makeSession(backend: Backend): Promise<Made> {
  const root = tempDir("spool-inspect-stream-");
  if (backend === "postgres") {
    const id = uniqueSession("inspect");
    const store = await openPostgresStore(pgUrl, { sessionId: id });
    return { store, root, id, storeArgs: ["--store", pgUrl], target: storeTarget(pgUrl) };
  }
  const repo = openSessionRepo(join(root, "sessions"), { backend });
  const { store, id } = await repo.create();
  // A spill file beside the log, as `spool run` leaves one.
  mkdirSync(join(root, "sessions", id, "spill"));
  writeFileSync(join(root, "sessions", id, "spill", "call-211.log"), text(70_000, "spill"));
  return { store, root, id, storeArgs: ["--store", backend], target: storeTarget(backend) };
}

async function expectInspectUnchanged(m: Made, label: string): Promise<void> {
  const entry = await findEntry(m.root, m.target, m.id);
  for (const json of [false, true]) {
    const expected = await oracleReport(entry, json);
    const r = runSpool(["inspect", m.id, "--root", m.root, ...m.storeArgs, ...(json ? ["--json"] : [])], { cwd: m.root });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(expected.stderr);
    expectSame(r.stdout, expected.stdout, `${label}${json ? " --json" : ""}`);
  }
}

describe.each<Backend>(["jsonl", "sqlite", "postgres"])("spool inspect on a %s session of 5,000 calls", (backend) => {
  it("prints what the whole view printed, text and --json, byte for byte: writer still open, then stopped", async () => {
    const m = await makeSession(backend);
    await writeCalls(m.store, 5000, process.pid);
    await openOperations(m.store);
    await expectInspectUnchanged(m, `${backend}, live`);
    const report = JSON.parse(runSpool(["inspect", m.id, "--root", m.root, ...m.storeArgs, "--json"], { cwd: m.root }).stdout) as {
      live: boolean;
      lastActivityAt: string;
      transcriptEntries: number;
      calls: { settled: boolean }[];
    };
    // The oracle agrees with what the session holds, so the comparison above was not of two empty reports.
    expect(report).toMatchObject({ live: true, lastActivityAt: LATEST, transcriptEntries: 5000 });
    expect(report.calls.filter((c) => !c.settled)).toHaveLength(3);
    // The writer dies (its record still says running): interrupted, open calls recovered from their flushes.
    await m.store.commit([
      setValue(SESSION_RECORD, { command: "make check", cwd: "/w", pid: DEAD_PID, startedAt: at(0), endedAt: null, status: "running", exitCode: null }),
    ]);
    await m.store.close();
    await expectInspectUnchanged(m, `${backend}, stopped`);
    // Five binary runs and four whole-view oracles over 5,000 calls: about 15 s for JSONL on a quiet machine.
  }, 180_000);
});

describe("spool inspect, the rest of what streaming changed", () => {
  it("a session of one call recorded before per-call records takes the call's details from the session record", async () => {
    for (const backend of ["jsonl", "sqlite"] as const) {
      const m = await makeSession(backend);
      const truncation = truncationOf(120, true);
      await m.store.commit([
        setValue(SESSION_RECORD, {
          command: "ls",
          cwd: "/w",
          pid: 1,
          startedAt: at(0),
          endedAt: at(5000),
          status: "succeeded",
          exitCode: 0,
          truncation,
          details: { exitCode: 0 },
        }),
        appendList(TRANSCRIPT, { role: "tool", toolCallId: "call-1", toolName: "bash", isError: false, content: [{ type: "text", text: text(120, "only") }] }),
      ]);
      await m.store.close();
      await expectInspectUnchanged(m, `${backend}, one legacy call`);
      const r = runSpool(["inspect", m.id, "--root", m.root, ...m.storeArgs], { cwd: m.root });
      expect(r.stdout).toContain(", truncated by bytes");
    }
  });

  it("writes at the reader's pace: a slow stream never holds more than a chunk or two", async () => {
    const m = await makeSession("jsonl");
    await writeCalls(m.store, 5000, DEAD_PID);
    await openOperations(m.store);
    await m.store.close();
    const entry = await findEntry(m.root, m.target, m.id);
    const expected = (await oracleReport(entry, true)).stdout;
    const chunks: Buffer[] = [];
    let most = 0;
    const slow = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        setTimeout(done, 1);
      },
    });
    const { spills, openScopes } = await oracleListings(entry);
    const deferDir = tempDir("spool-inspect-defer-");
    await withSnapshot(entry, async (snap) => {
      const out = new PacedOutput(slow);
      const watch = setInterval(() => (most = Math.max(most, slow.writableLength)), 0);
      try {
        await writeInspectReport(out, entry, snap, { live: false, spills, openScopes }, true, deferDir);
      } finally {
        clearInterval(watch);
      }
      most = Math.max(most, slow.writableLength);
    });
    await new Promise<void>((resolve) => slow.end(resolve));
    expectSame(Buffer.concat(chunks).toString("utf8"), expected, "slow stream --json");
    expect(expected.length).toBeGreaterThan(2_000_000);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThan(512 * 1024);
    // The held-back calls went to a temporary file, gone from the directory as soon as it was opened.
    expect(readdirSync(deferDir)).toEqual([]);
  });

  it("a reader that closes the pipe early ends inspect quietly (exit 0, nothing on stderr)", async () => {
    const m = await makeSession("jsonl");
    await writeCalls(m.store, 5000, DEAD_PID);
    await m.store.close();
    const child = spawn(process.execPath, [SPOOL_BIN, "inspect", m.id, "--root", m.root], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    let first = "";
    child.stdout.once("data", (d: Buffer) => {
      first = d.toString("utf8");
      child.stdout.destroy();
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(first).toMatch(/^Session /);
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });
});

describe("DeferredText", () => {
  it("gives back exactly what it was given, from memory and past MEMORY_BYTES from an unlinked file", async () => {
    for (const total of [10_000, 3 * MEMORY_BYTES]) {
      const dir = tempDir("spool-deferred-");
      const d = new DeferredText(dir);
      const parts: string[] = [];
      let n = 0;
      for (let i = 0; n < total; i++) {
        const p = `${i}:${text(1 + ((i * 7919) % 3000), "p")}\n`;
        parts.push(p);
        d.append(p);
        n += Buffer.byteLength(p);
      }
      expect(d.spilled).toBe(total > MEMORY_BYTES);
      expect(readdirSync(dir)).toEqual([]);
      const got: Buffer[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          got.push(chunk);
          done();
        },
      });
      const out = new PacedOutput(sink);
      await d.writeTo(out);
      await out.flush();
      d.close();
      expectSame(Buffer.concat(got).toString("utf8"), parts.join(""), `deferred ${total}`);
    }
  });
});
