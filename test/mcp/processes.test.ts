// Long-running and interactive commands through `spool mcp`, driven by the MCP SDK's own client over
// stdio: the same scenarios as the harness's, with the same tool names and arguments — background
// polling, early wake-up on output, a shell and python under a pty, Ctrl-C, redrawn progress bars,
// the alternate screen, and a SIGKILLed server leaving no process behind and an interrupted record.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callRecord, readTranscript } from "../../dist/harness/index.js";
import { readJsonlSnapshot } from "../../dist/store/index.js";
import { groupMembers } from "../support/process-group.js";
import { SPOOL_BIN as BIN } from "../support/cli.js";
import { alive, connect, textOf, until, type Connected } from "./helpers.js";

const open: Connected[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});
async function start(): Promise<Connected> {
  const c = await connect();
  open.push(c);
  return c;
}

type Call = (name: string, args: Record<string, unknown>) => Promise<{ text: string; isError: boolean; structured: Record<string, unknown> | undefined }>;
function caller(c: Connected): Call {
  return async (name, args) => {
    const r = await c.client.callTool({ name, arguments: args });
    if (process.env["DEBUG_MCP"]) console.log(name, JSON.stringify(args), JSON.stringify(textOf(r)));
    return { text: textOf(r), isError: r.isError === true, structured: r.structuredContent as Record<string, unknown> | undefined };
  };
}
const body = (text: string): string => text.replace(/\[process [^\]]*\]$/, "");

/** Reads until `done` holds for everything read so far (bounded), returning it all. */
async function readUntil(call: Call, processId: string, done: (all: string, last: string) => boolean, already = ""): Promise<string> {
  let all = already;
  if (already !== "" && done(all, already)) return all;
  for (let i = 0; i < 40; i++) {
    const r = await call("process_output", { processId, waitSeconds: 5 });
    all += body(r.text);
    if (done(all, r.text)) return all;
  }
  throw new Error(`gave up reading ${processId}; so far: ${all}`);
}

/** Prints a line every few ms with no process forked between lines (a loaded machine delays forks). */
const SPINNING_WRITER = "while :; do echo tick; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done";

describe("spool mcp: long-running and interactive commands", () => {
  it("a pty command at a prompt comes back at once with a processId, and process_write answers it", async () => {
    const call = caller(await start());
    const began = Date.now();
    const asked = await call("bash", { command: "read -p 'Continue? ' a; echo got $a", pty: true, timeout: 120 });
    expect(Date.now() - began).toBeLessThan(20_000);
    expect(asked.isError).toBe(false);
    expect(asked.text).toContain("Continue? ");
    expect(asked.text).toContain("[It has gone quiet while reading its terminal, most likely at a prompt: answer with process_write");
    const processId = asked.structured!["processId"] as string;
    expect(processId).toMatch(/^proc-/);
    const answered = await call("process_write", { processId, input: "yes\n", waitSeconds: 5 });
    const all = await readUntil(call, processId, (text, last) => /exited with code 0/.test(last) && /^got yes\r?$/m.test(text), body(answered.text));
    expect(all).toMatch(/^got yes\r?$/m);
  });

  it("bash 'server &' tells the model its server was stopped at the exit and how to keep one running; a job done within the grace is not mentioned", async () => {
    const call = caller(await start());
    const r = await call("bash", { command: "sleep 304 & echo $!" });
    expect(r.isError).toBe(false);
    const pid = Number(r.text.split("\n")[0]);
    await until(() => !alive(pid) || undefined, "the background sleep to be gone (a zombie waits on init)", 5000);
    expect(r.text).toMatch(
      /\n\n\[The command left processes running in the background \(such as `… &`\); they were stopped when it exited\. To keep a server or watcher running, start it with background: true/,
    );
    const done = await call("bash", { command: "(sleep 0.1; echo late) & echo early" });
    expect(done.text).toBe("early\nlate\n");
  });

  it("on a pty the same: a job's output within the grace is shown, and 'server &' is stopped with the note, nothing of it left", async () => {
    // Before, the shell's exit hung its jobs up (SIGHUP from the kernel): no "late", and no note.
    const call = caller(await start());
    // The job prints well inside the 500 ms grace (at 0.5 s, as here before, it raced the grace under load).
    const done = await call("bash", { command: "(sleep 0.2; echo late) & echo early", pty: true });
    expect(done.isError).toBe(false);
    expect(done.text).toBe("early\nlate\n");
    const r = await call("bash", { command: "sleep 308 & echo $!; exit 5", pty: true });
    expect(r.isError).toBe(true);
    const pid = Number(r.text.split("\n")[0]);
    await until(() => !alive(pid) || undefined, "the background sleep to be gone (a zombie waits on init)", 5000);
    expect(r.text).toContain("[The command left processes running in the background (such as `… &`); they were stopped when it exited.");
    expect(r.text).toContain("Command exited with code 5");
  });

  it("bash with a setsid process writing to its output comes back and says why the rest is not there", async () => {
    const call = caller(await start());
    const began = Date.now();
    // It spins between lines (a few ms) instead of forking `sleep 0.05`: on a loaded machine the fork
    // stretched a pause past the grace's 100 ms, and a writer that pauses that long is judged quiet,
    // without the note (2 runs of 4 beside two test suites).
    const r = await call("bash", { command: `setsid sh -c '${SPINNING_WRITER}' & echo started`, timeout: 60 });
    expect(Date.now() - began).toBeLessThan(15_000);
    expect(r.isError).toBe(false);
    expect(r.text).toContain("started\n");
    // As root the command writes to pipes, which the writer holds (on the file path, the file is read
    // up to its size when the command's group is gone, and the writer's later lines are not waited for).
    if (process.geteuid?.() === 0)
      expect(r.text).toContain("[A process the command started outside its process group (setsid, a daemon) kept writing to its output;");
  });

  it("a background process's over-long line, cut in process_output, names the spill file that holds it whole (once)", async () => {
    const call = caller(await start());
    const started = await call("bash", { command: "sleep 0.3; head -c 20000 /dev/zero | tr '\\0' q; echo; echo after; sleep 30", background: true });
    const processId = started.structured!["processId"] as string;
    const all = await readUntil(call, processId, (text) => text.includes("after\n"));
    expect(all).toMatch(/^q{1000,} \[… \d+ bytes cut from this line\]\n/);
    const note = /\n\[1 over-long line was cut\. Full output: (\S+)\]\n/.exec(all);
    expect(note, all.slice(-300)).not.toBeNull();
    expect(readFileSync(note![1]!, "utf8")).toBe(`${"q".repeat(20_000)}\nafter\n`);
    const again = await call("process_output", { processId });
    expect(again.text).not.toMatch(/over-long/);
    await call("process_kill", { processId });
  });

  it("a background command polled three times returns each line exactly once, then its final status", async () => {
    const call = caller(await start());
    const started = await call("bash", {
      command: "for i in 1 2 3; do echo line-$i; done; read a; for i in 4 5 6; do echo line-$i; done; read b; for i in 7 8 9; do echo line-$i; done",
      background: true,
    });
    const processId = started.structured!["processId"] as string;
    expect(processId).toMatch(/^proc-/);
    const seen = body(started.text)
      .split("\n")
      .filter((l) => l.startsWith("line-"));
    const take = (t: string) =>
      seen.push(
        ...body(t)
          .split("\n")
          .filter((l) => l.startsWith("line-")),
      );
    take((await call("process_output", { processId, waitSeconds: 1 })).text);
    take((await call("process_write", { processId, input: "\n", waitSeconds: 5 })).text);
    take((await call("process_write", { processId, input: "\n", waitSeconds: 5 })).text);
    const rest = await readUntil(call, processId, (_all, last) => last.includes("exited"));
    take(rest);
    expect(seen).toEqual(["line-1", "line-2", "line-3", "line-4", "line-5", "line-6", "line-7", "line-8", "line-9"]);
    const final = await call("process_output", { processId });
    expect(final.text).toBe(`(no new output)\n[process ${processId} exited with code 0]`);
  });

  it("a wait returns as soon as output arrives, while the process is still running", async () => {
    const call = caller(await start());
    const { structured } = await call("bash", { command: "read x; echo got-$x; sleep 60", background: true });
    const processId = structured!["processId"] as string;
    let resolved = false;
    const waiting = call("process_output", { processId, waitSeconds: 60 }).finally(() => (resolved = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(resolved).toBe(false);
    // Another request on the same connection provokes the output the first one waits for.
    await call("process_write", { processId, input: "ping\n", waitSeconds: 0 });
    const r = await waiting;
    expect(r.text).toContain("got-ping\n");
    expect(r.text).toContain("is still running");
    expect((await call("process_list", {})).text).toMatch(new RegExp(`${processId}  running  read x`));
  });

  it("process_list stays small: one line per process (a heredoc's newlines shown as ⏎, a long command clipped), at most 100, running ones kept", async () => {
    const call = caller(await start());
    const script = `cat > /dev/null <<'EOF'\n${"# a long script line\n".repeat(200)}EOF\nsleep 300`;
    const running: string[] = [];
    for (let i = 0; i < 3; i++) running.push((await call("bash", { command: `${script} # ${i}`, background: true })).structured!["processId"] as string);
    // 102 that end soon: the 5 oldest (started one by one, so they are the oldest) are over the 100 shown.
    const bg = async (i: number): Promise<string> => {
      const r = await call("bash", { command: `sleep 0.5; : ${"x".repeat(2000)} ${i}`, background: true });
      const id = r.structured?.["processId"];
      if (typeof id !== "string") throw new Error(`bash ${i} did not become a background process: ${r.text.slice(0, 300)}`);
      return id;
    };
    const oldest: string[] = [];
    for (let i = 0; i < 5; i++) oldest.push(await bg(i));
    const ended = [...oldest];
    for (let batch = 0; batch < 97; batch += 10)
      ended.push(...(await Promise.all(Array.from({ length: Math.min(10, 97 - batch) }, (_, i) => bg(5 + batch + i)))));
    for (const id of ended) await until(async () => !(await call("process_output", { processId: id })).text.includes("still running"));
    const list = await call("process_list", {});
    const lines = list.text.split("\n").filter((l) => l !== "");
    // It listed every process whole: 105 lines of 2 KB, and each running script over 200 lines.
    expect(lines).toHaveLength(101);
    expect(lines.at(-1)).toBe("[5 older processes that have ended are not shown.]");
    for (const id of running)
      expect(list.text).toMatch(new RegExp(`^${id}  running  cat > /dev/null <<'EOF' ⏎ # a long script line ⏎ # a long.*… \\(\\d+ chars\\)$`, "m"));
    for (const id of oldest) expect(list.text).not.toContain(`${id}  `);
    for (const id of ended.slice(5)) expect(list.text).toMatch(new RegExp(`^${id}  exited with code 0  sleep 0\\.5; : x{100}.*… \\(\\d+ chars\\)$`, "m"));
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(260);
    expect(list.text.length).toBeLessThan(26_000);
  });

  it("sh -i and python3 -i under a pty answer through process_write", async () => {
    const call = caller(await start());
    const shStarted = await call("bash", { command: "sh -i", background: true, pty: true });
    const sh = shStarted.structured!["processId"] as string;
    // Typing before the shell is ready can be lost, on any terminal (the shell flushes typeahead as it
    // sets the terminal up): wait for the prompt, as a person would.
    await readUntil(call, sh, (all) => /[#$] \n?$/.test(all), body(shStarted.text));
    const first = body((await call("process_write", { processId: sh, input: "echo $((6*7))\n", waitSeconds: 5 })).text);
    if (!/^42$/m.test(first)) await readUntil(call, sh, (all) => /^42$/m.test(all));
    const pyStarted = await call("bash", { command: "PYTHON_BASIC_REPL=1 python3 -i -q", background: true, pty: true });
    const py = pyStarted.structured!["processId"] as string;
    await readUntil(call, py, (all) => /^>>> \n?$/m.test(all), body(pyStarted.text));
    const answer = body((await call("process_write", { processId: py, input: "print(6*7)\n", waitSeconds: 5 })).text);
    if (!/^42$/m.test(answer)) await readUntil(call, py, (all) => /^42$/m.test(all));
    expect((await call("process_kill", { processId: py })).text).toContain(`process ${py} was killed by SIGTERM`);
  });

  it("Ctrl-C through process_write stops a running command in a pty", async () => {
    const call = caller(await start());
    const started = await call("bash", { command: "echo waiting; sleep 60; echo never", background: true, pty: true });
    const processId = started.structured!["processId"] as string;
    // Ctrl-C reaches the terminal's foreground job: once it prints, the command is that job.
    await readUntil(call, processId, (all) => all.includes("waiting"), body(started.text));
    let r = await call("process_write", { processId, input: "\u0003", waitSeconds: 10 });
    if (r.text.includes("still running")) r = { ...r, text: await readUntil(call, processId, (_a, last) => !last.includes("still running")) };
    const status = await call("process_output", { processId });
    expect(status.text).toContain(`process ${processId} was killed by SIGINT`);
    expect(r.text).not.toContain("never");
  });

  it("three progress bars redrawn with cursor-up and erase-line end as exactly three lines; the alternate screen leaves nothing", async () => {
    const call = caller(await start());
    const bars =
      "printf 'a 0%%\\nb 0%%\\nc 0%%\\n'; for p in 25 50 75 100; do sleep 0.01; printf '\\033[3A'; for l in a b c; do printf '\\033[2K%s %d%%\\n' $l $p; done; done";
    const r = await call("bash", { command: bars, pty: true });
    expect(r.text).toBe("a 100%\nb 100%\nc 100%\n");
    expect(r.structured).toMatchObject({ exitCode: 0, totalLines: 3 });
    const alt = await call("bash", { command: "echo before; tput smcup; echo junk; tput cup 3 3; echo more; tput rmcup; echo after", pty: true });
    expect(alt.text).toBe("before\nafter\n");
  });

  it("process_write with end: true closes a background command's input, so sort and wc finish; a later write is refused", async () => {
    const call = caller(await start());
    const started = await call("bash", { command: "sort; echo sorted", background: true });
    const processId = started.structured!["processId"] as string;
    const first = await call("process_write", { processId, input: "pear\napple\n", waitSeconds: 0.5 });
    expect(first.isError).toBe(false);
    expect(first.text).toContain("still running");
    const ended = await call("process_write", { processId, input: "fig\n", end: true, waitSeconds: 5 });
    const all = await readUntil(call, processId, (_, last) => /exited with code 0/.test(last), body(first.text) + body(ended.text));
    expect(all).toContain("apple\nfig\npear\nsorted\n");
    const late = await call("process_write", { processId, input: "x\n" });
    expect(late.isError).toBe(true);

    // An empty input with end: a command that reads to the end of its input.
    const wc = await call("bash", { command: "wc -l", background: true });
    const wcId = wc.structured!["processId"] as string;
    await call("process_write", { processId: wcId, input: "a\nb\nc\n" });
    const counted = await call("process_write", { processId: wcId, input: "", end: true, waitSeconds: 5 });
    expect(await readUntil(call, wcId, (_, last) => /exited with code 0/.test(last), body(counted.text))).toMatch(/^\s*3$/m);
    const again = await call("process_write", { processId: wcId, input: "d\n" });
    expect(again.isError).toBe(true);

    const wrong = await call("process_write", { processId: wcId, input: "", end: "yes" });
    expect(wrong.isError).toBe(true);
    expect(wrong.text).toContain('"end" must be true or false');
  });

  it("after end: true the wait lasts until the process finishes, so one call gives its last output and its exit", async () => {
    const call = caller(await start());
    const started = await call("bash", { command: "cat; sleep 0.4; echo done", background: true });
    const processId = started.structured!["processId"] as string;
    const ended = await call("process_write", { processId, input: "x\n", end: true, waitSeconds: 10 });
    expect(ended.isError).toBe(false);
    expect(body(ended.text)).toContain("x\ndone\n");
    expect(ended.text).toContain("exited with code 0");
  });

  it("a background process that ends with a job of its own still running says that job was stopped", async () => {
    const call = caller(await start());
    const started = await call("bash", { command: "sleep 100 & echo started; sleep 0.3", background: true });
    const processId = started.structured!["processId"] as string;
    const all = await readUntil(call, processId, (_, last) => /exited with code 0/.test(last), body(started.text));
    expect(all).toContain("started");
    const last = await call("process_output", { processId });
    expect(last.text).toContain("exited with code 0; what it left running in the background (`… &`) was stopped as it exited");
  });

  it("on a pty, end: true is Ctrl-D at the start of a line: cat ends, and its text was read first", async () => {
    const call = caller(await start());
    const started = await call("bash", { command: "cat > /dev/null; echo cat-done", pty: true, background: true });
    const processId = started.structured!["processId"] as string;
    const ended = await call("process_write", { processId, input: "no newline", end: true, waitSeconds: 5 });
    const all = await readUntil(call, processId, (_, last) => /exited with code 0/.test(last), body(ended.text));
    expect(all).toContain("cat-done");
  });

  it("a SIGKILLed server leaves no background process behind, and spool inspect shows it interrupted with its output so far", async () => {
    const c = await start();
    const call = caller(c);
    const started = await call("bash", {
      command: "echo PGID $(ps -o pgid= $$); i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.05; done",
      background: true,
    });
    const processId = started.structured!["processId"] as string;
    const seen = await readUntil(call, processId, (all) => all.includes("tick-3"), body(started.text));
    const pgid = Number(/PGID\s+(\d+)/.exec(seen)![1]);
    expect(groupMembers(pgid).length).toBeGreaterThan(0);
    // Let the ticks reach the durable log (the sink flushes at least every 100 ms).
    await new Promise((r) => setTimeout(r, 400));
    const serverPid = c.transport.pid!;
    process.kill(serverPid, "SIGKILL");
    // Reaped (not a zombie any more): only then does the session's writer count as gone.
    await until(() => !alive(serverPid) || undefined, "the server to be reaped", 5000);
    await until(() => groupMembers(pgid).length === 0 || undefined, "the background group to be gone", 5000);
    expect(groupMembers(pgid)).toEqual([]);

    const sessionId = c.sessionDir().split("/").pop()!;
    const inspect = spawnSync(process.execPath, [BIN, "inspect", sessionId, "--root", c.root, "--json"], { encoding: "utf8" });
    expect(inspect.status).toBe(0);
    const report = JSON.parse(inspect.stdout) as { status: string; calls: { id: string; settled: boolean; recoveredOutput?: string }[] };
    expect(report.status).toBe("interrupted");
    const bg = report.calls.find((x) => x.id === processId)!;
    expect(bg.settled).toBe(false);
    expect(bg.recoveredOutput).toContain("tick-3");
  });

  it("a cancelled process_write or process_output wait is recorded as interrupted, not failed; the process and the next call are fine", async () => {
    const c = await start();
    const call = caller(c);
    const started = await call("bash", { command: "cat; sleep 300", background: true });
    const processId = started.structured!["processId"] as string;
    const cancel = async (name: string, args: Record<string, unknown>): Promise<void> => {
      const abort = new AbortController();
      const pending = c.client.callTool({ name, arguments: { processId, waitSeconds: 60, ...args } }, undefined, { signal: abort.signal });
      await new Promise((r) => setTimeout(r, 300));
      abort.abort("the host cancels");
      await expect(pending).rejects.toThrow();
    };
    await cancel("process_output", {});
    await cancel("process_write", { input: "typed\n", end: true }); // end: true waits for the process to finish
    const snap = () => readJsonlSnapshot(join(c.sessionDir(), "session.jsonl"));
    const settled = await until(() => {
      const s = snap();
      const ids = readTranscript(s)
        .filter((m) => m.toolName === "process_output" || m.toolName === "process_write")
        .map((m) => m.toolCallId);
      if (ids.length !== 2) return undefined;
      // Both in the transcript is not both settled: the second's record can still say running then.
      const records = ids.map((id) => s.get(callRecord(id)) as { status?: string } | undefined);
      return records.every((r) => r !== undefined && r.status !== "running") ? records : undefined;
    }, "both cancelled calls to settle");
    expect(settled.map((r) => r?.status)).toEqual(["interrupted", "interrupted"]);
    // Nothing was read by the cancelled calls: the echo is still there, and the process still runs.
    const next = await call("process_output", { processId, waitSeconds: 2 });
    expect(next.text).toBe(`typed\n[process ${processId} is still running; process_output reads what it prints next]`);
  });

  it("two process_output waits at once: each waits for output of its own, none lost or read twice", async () => {
    const call = caller(await start());
    const bg = await call("bash", { command: "sleep 1; echo one; sleep 2; echo two; sleep 60", background: true });
    const processId = bg.structured!["processId"] as string;
    const began = Date.now();
    const wait = async () => {
      const r = await call("process_output", { processId, waitSeconds: 20 });
      return { text: body(r.text), ms: Date.now() - began };
    };
    // The second to end used to end with the first, at 1 s, with "(no new output)".
    const [a, b] = await Promise.all([wait(), wait()]);
    const [first, second] = a.ms <= b.ms ? [a, b] : [b, a];
    expect(first.text).toBe("one\n");
    expect(second.text).toBe("two\n");
    expect(second.ms).toBeGreaterThan(2000);
  });

  it("three readers polling one process at once see every line exactly once", async () => {
    const call = caller(await start());
    const bg = await call("bash", { command: "sleep 0.5; for i in $(seq 1 12); do echo line$i; sleep 0.2; done", background: true });
    const processId = bg.structured!["processId"] as string;
    const reader = async () => {
      const seen: string[] = [];
      for (;;) {
        const r = await call("process_output", { processId, waitSeconds: 10 });
        const text = body(r.text);
        // Still running, a wait of 10 s ends only with output: never empty between lines 0.2 s apart.
        if (text.startsWith("(no new output)")) {
          expect(r.text).toMatch(/exited with code 0\]$/);
          return seen;
        }
        seen.push(...text.split("\n").filter((l) => l !== ""));
        if (/exited with code 0\]$/.test(r.text)) return seen;
      }
    };
    const all = (await Promise.all([reader(), reader(), reader()])).flat();
    expect(all.sort((x, y) => Number(x.slice(4)) - Number(y.slice(4)))).toEqual(Array.from({ length: 12 }, (_, i) => `line${i + 1}`));
  });
});
