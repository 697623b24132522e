// `spool mcp` driven by the MCP SDK's own client over stdio: the pinned tools, bounded bash output with
// a spill file that `read` pages through byte-identically, paced progress, cancellation that kills the
// process group and is recorded, errors as tool errors, recall, and disconnect handling.
import { execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callRecord, readTranscript, SESSION_RECORD } from "../../dist/harness/index.js";
import { readJsonlSnapshot } from "../../dist/store/index.js";
import { runSpool } from "../support/cli.js";
import { groupMembers } from "../support/process-group.js";
import { followReads } from "../support/read-pages.js";
import { alive, connect, textOf, until, type Connected } from "./helpers.js";

const open: Connected[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});
/** The process group of `pid`, from /proc/PID/stat. */
function groupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}
async function start(args: string[] = []): Promise<Connected> {
  const c = await connect(args);
  open.push(c);
  return c;
}

describe("spool mcp", () => {
  it("lists bash, read and the process tools with their pinned arguments and model-facing descriptions (no recall: nothing is cut from an MCP client's history)", async () => {
    const { client, dir } = await start();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(["bash", "process_kill", "process_list", "process_output", "process_write", "read"]);
    expect(Object.keys(byName["bash"]!.inputSchema.properties ?? {}).sort()).toEqual(["background", "command", "pty", "timeout", "yieldSeconds"]);
    expect(Object.keys(byName["process_output"]!.inputSchema.properties ?? {}).sort()).toEqual(["processId", "waitSeconds"]);
    expect(Object.keys(byName["process_write"]!.inputSchema.properties ?? {}).sort()).toEqual(["end", "input", "processId", "waitSeconds"]);
    expect(byName["process_write"]!.inputSchema.required).toEqual(["processId", "input"]);
    expect(Object.keys(byName["process_kill"]!.inputSchema.properties ?? {})).toEqual(["processId"]);
    expect(byName["bash"]!.inputSchema.required).toEqual(["command"]);
    expect(Object.keys(byName["read"]!.inputSchema.properties ?? {}).sort()).toEqual(["column", "limit", "offset", "path"]);
    expect(byName["bash"]!.description).toMatch(/read tool/);
    // the server's instructions say how to page a spill and answer a prompt
    expect(client.getInstructions()).toMatch(/page through it with `read` \(offset\/limit; column inside a line too long for one answer\)/);
    expect(client.getInstructions()).toMatch(/a pty command that stops at a prompt returns at once with a processId to answer/);
    expect(byName["bash"]!.outputSchema?.required).toEqual(["exitCode", "signal", "timedOut", "truncated", "totalLines", "totalBytes", "spillPath"]);
    // What a model reads holds no control character: bash's said "ANSI codes removed, <CR> redraws collapsed".
    const texts: string[] = [];
    JSON.stringify({ tools, instructions: client.getInstructions() }, (_key, v: unknown) => (typeof v === "string" && texts.push(v), v));
    expect(texts.filter((t) => /[\u0000-\u0009\u000b-\u001f\u007f]/.test(t))).toEqual([]);
    expect(byName["bash"]!.description).toContain("\\r redraws collapsed");
    // A prompt in a foreground command meets an empty stdin: the model learns it here, not from a cut-short run.
    expect(byName["bash"]!.description).toContain("Its stdin is empty, so a prompt gets end of file at once");
    // Where commands run, and that nothing carries over: `cd sub` in one call, the build in the next, ran in the wrong place.
    const command = (byName["bash"]!.inputSchema.properties as Record<string, { description: string }>)["command"]!.description;
    expect(command).toBe(`The command line, run with bash -c in ${dir}: each call is a fresh shell, so cd and variables do not carry over (cd dir && …).`);
    // read gives its bound in numbers, as bash does.
    expect(byName["read"]!.description).toContain("An answer holds at most 2000 lines or 50.0 KB");
  });

  it("tool descriptions give the limits in numbers, as this server is set (the window, the timeout's default and range, waits, input size)", async () => {
    const { client } = await start(["--max-lines", "300", "--max-bytes", "20000", "--timeout", "90"]);
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const prop = (tool: string, name: string) => (byName[tool]!.inputSchema.properties as Record<string, Record<string, unknown>>)[name]!;
    expect(byName["bash"]!.description).toContain("bounded to the last 300 lines or 19.5 KB, whichever is less");
    expect(prop("bash", "timeout")["description"]).toBe("Seconds before the command's process group is killed (above 0, at most 2147483; default 90).");
    expect(prop("bash", "yieldSeconds")).toMatchObject({ minimum: 0, maximum: 600 });
    expect(prop("process_output", "waitSeconds")).toMatchObject({ minimum: 0, maximum: 600 });
    expect(prop("process_write", "input")["description"]).toContain("at most 1 MiB");
    const defaults = await start();
    const bash = (await defaults.client.listTools()).tools.find((t) => t.name === "bash")!;
    expect(bash.description).toContain("bounded to the last 2000 lines or 50.0 KB, whichever is less");
    expect((bash.inputSchema.properties as Record<string, { description: string }>)["timeout"]!.description).toContain("default none");
  });

  it("bash on seq 1 300000 returns a bounded tail with a footer, and read pages through the spill byte-identically", async () => {
    const { client } = await start();
    const raw = execFileSync("seq", ["1", "300000"], { maxBuffer: 64 * 1024 * 1024 });
    const result = await client.callTool({ name: "bash", arguments: { command: "seq 1 300000" } });
    const text = textOf(result);
    expect(result.isError).toBeFalsy();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(51_200 + 300);
    expect(text).toContain("300000\n");
    expect(text).not.toContain("\n1\n2\n");
    const s = result.structuredContent as Record<string, unknown>;
    expect(s).toMatchObject({ exitCode: 0, signal: null, timedOut: false, truncated: true, totalLines: 300000, totalBytes: raw.length });
    const spillPath = s["spillPath"] as string;
    expect(text).toContain(`Full output: ${spillPath}`);
    expect(readFileSync(spillPath).equals(raw)).toBe(true);

    // Page through it with read, as a model would: follow each footer's "Next: offset=N". Pages larger
    // than the tool's bound are cut, and the footer then says where to continue.
    const pages: string[] = [];
    let offset: number | undefined = 1;
    while (offset !== undefined) {
      const page = await client.callTool({ name: "read", arguments: { path: spillPath, offset, limit: 20_000 } });
      expect(page.isError).toBeFalsy();
      const body = textOf(page);
      const footer = /\n\n(\[Showing the first[^\n]*\]\n)?(\[Lines \d+–\d+ of 300000\. Next: offset=(\d+)\.\])?$/.exec(body);
      if (footer && footer[0] !== "\n\n") {
        pages.push(body.slice(0, footer.index + 1));
        offset = footer[3] !== undefined ? Number(footer[3]) : undefined;
      } else {
        pages.push(body);
        offset = undefined;
      }
    }
    expect(pages.length).toBeGreaterThan(3);
    expect(Buffer.from(pages.join("")).equals(raw)).toBe(true);
  });

  it("bash printing 3 MB on one line names its spill, and read gives back every byte of that line by the footers' offset and column", async () => {
    const { client } = await start();
    const result = await client.callTool({ name: "bash", arguments: { command: `node -e 'process.stdout.write("{\\"k\\":\\"é😀\\"},".repeat(200000))'` } });
    expect(result.isError).toBeFalsy();
    const spillPath = (result.structuredContent as { spillPath: string }).spillPath;
    const raw = readFileSync(spillPath);
    expect(raw.length).toBe(3_000_000);
    expect(raw.includes(10)).toBe(false);
    const read = async (args: Record<string, unknown>) => {
      const page = await client.callTool({ name: "read", arguments: args });
      return { text: textOf(page), isError: page.isError === true };
    };
    const answers = await followReads(read, spillPath);
    expect(answers.length).toBeGreaterThanOrEqual(Math.ceil(3_000_000 / 51_200));
    expect(answers[0]!.next).toEqual({ offset: 1, column: answers[0]!.body.length + 1 });
    expect(Buffer.from(answers.map((a) => a.body).join("")).equals(raw)).toBe(true);
  });

  it("sends paced progress notifications (bytes so far, latest line) while a 3-second command runs", async () => {
    const { client } = await start();
    const seen: { progress: number; message?: string; at: number }[] = [];
    const started = Date.now();
    const result = await client.callTool({ name: "bash", arguments: { command: "for i in $(seq 1 60); do echo tick $i; sleep 0.05; done" } }, undefined, {
      onprogress: (p) => seen.push({ progress: p.progress, ...(p.message !== undefined ? { message: p.message } : {}), at: Date.now() - started }),
    });
    expect(result.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(5);
    // ≤ 10 per second over the run (plus one for the boundary).
    const span = (seen.at(-1)!.at - seen[0]!.at) / 1000;
    expect(seen.length).toBeLessThanOrEqual(Math.ceil(span * 10) + 1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    for (const p of seen) expect(p.message).toMatch(/^tick \d+$/);
    expect(seen.at(-1)!.progress).toBeLessThanOrEqual((result.structuredContent as { totalBytes: number }).totalBytes);
  });

  it("a \\r progress bar's redraws reach the client as progress, though its line never grows", async () => {
    const { client } = await start();
    const seen: { progress: number; message?: string }[] = [];
    // 15 frames of one length over 1.5 s, coloured and erased to the end of the line as real bars are.
    const frames = "for i in $(seq 10 24); do printf '\\r\\e[32mbuilding %d/24\\e[0m\\e[K' $i; sleep 0.1; done; echo";
    const result = await client.callTool({ name: "bash", arguments: { command: frames } }, undefined, {
      onprogress: (p) => seen.push({ progress: p.progress, ...(p.message !== undefined ? { message: p.message } : {}) }),
    });
    expect(textOf(result)).toBe("building 24/24\n");
    // A frame went out only when the output's size grew: 2 in 1.5 s, the line stuck at its first frames.
    expect(new Set(seen.map((p) => p.message)).size).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    for (const p of seen) expect(p.message).toMatch(/^building \d\d\/24$/);
  });

  it("cancellation kills the command's whole process group and the session records the call as aborted", async () => {
    const c = await start();
    const pidFile = join(c.dir, "child.pid");
    const abort = new AbortController();
    const call = c.client.callTool({ name: "bash", arguments: { command: `echo started; (sleep 300 & echo $! > ${pidFile}; wait) ; echo never` } }, undefined, {
      signal: abort.signal,
    });
    call.catch(() => undefined);
    const pid = await until(() => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8").trim()), "the grandchild's pid");
    expect(alive(pid)).toBe(true);
    abort.abort("test cancels");
    await expect(call).rejects.toThrow();
    await until(() => !alive(pid), "the grandchild to be gone");
    const snap = () => readJsonlSnapshot(join(c.sessionDir(), "session.jsonl"));
    const settled = await until(() => readTranscript(snap()).find((m) => m.toolName === "bash"), "the aborted call in the transcript");
    expect(settled.isError).toBe(true);
    const text = settled.content[0]!.type === "text" ? settled.content[0]!.text : "";
    expect(text).toContain("started");
    expect(text).toMatch(/aborted/i);
    // The server is still serving.
    expect((await c.client.callTool({ name: "bash", arguments: { command: "echo ok" } })).isError).toBeFalsy();
  });

  it("read refuses a FIFO at once (it would block for ever), a device and a NUL in the path with what they are; an empty file says so", async () => {
    const c = await start();
    execFileSync("mkfifo", [join(c.dir, "pipe")]);
    const read = async (path: string) => {
      const r = await c.client.callTool({ name: "read", arguments: { path } });
      return { isError: r.isError === true, text: textOf(r) };
    };
    expect(await read("pipe")).toEqual({
      isError: true,
      text: "read: pipe is a FIFO (named pipe), not a regular file; read reads files only (bash can read it, with a timeout)",
    });
    expect(await read("/dev/zero")).toEqual({
      isError: true,
      text: "read: /dev/zero is a device, not a regular file; read reads files only (bash can read it, with a timeout)",
    });
    expect(await read(".")).toEqual({ isError: true, text: "read: . is a directory; list it with bash (ls)" });
    expect(await read("a\0b")).toEqual({ isError: true, text: 'read: the path "a\\u0000b" contains a NUL character (\\u0000); no file has one' });
    writeFileSync(join(c.dir, "empty.txt"), "");
    expect(await read("empty.txt")).toEqual({ isError: false, text: "[The file is empty.]" });
    writeFileSync(join(c.dir, "one.txt"), "only\n");
    const past = await c.client.callTool({ name: "read", arguments: { path: "one.txt", offset: 5 } });
    expect(textOf(past)).toBe("[The file has 1 line; offset 5 is past the end.]");
  });

  it("a file the OS refuses to read names the file (it was the bare 'EIO: i/o error, read')", async () => {
    const c = await start();
    const r = await c.client.callTool({ name: "read", arguments: { path: "/proc/self/mem" } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("read: cannot read /proc/self/mem: EIO: i/o error, read");
  });

  it("a failing command is isError with its output, exit code in structuredContent, and a record of its own", async () => {
    const c = await start();
    const { client } = c;
    const result = await client.callTool({ name: "bash", arguments: { command: "echo compiling; echo 'error: boom' >&2; exit 3" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("error: boom");
    expect(textOf(result)).toContain("code 3");
    expect(result.structuredContent).toMatchObject({ exitCode: 3, timedOut: false });
    const timedOut = await client.callTool({ name: "bash", arguments: { command: "sleep 5", timeout: 0.3 } });
    expect(timedOut.isError).toBe(true);
    expect(timedOut.structuredContent).toMatchObject({ timedOut: true });
    // A lone command is exec'd by bash: killed by a signal (the OOM killer's SIGKILL), the model is told so.
    const killed = await client.callTool({ name: "bash", arguments: { command: "echo start; kill -KILL $$" } });
    expect(killed.isError).toBe(true);
    expect(textOf(killed)).toBe("start\nCommand was killed by SIGKILL (exit 137)");
    expect(killed.structuredContent).toMatchObject({ exitCode: 137, signal: "SIGKILL" });
    // Each call keeps its own record: what ran, its times, how it ended.
    const snap = readJsonlSnapshot(join(c.sessionDir(), "session.jsonl"));
    const failed = snap.get(callRecord("call-1"));
    expect(failed).toMatchObject({ command: "echo compiling; echo 'error: boom' >&2; exit 3", status: "failed", exitCode: 3 });
    expect(Date.parse(failed!.endedAt!)).toBeGreaterThanOrEqual(Date.parse(failed!.startedAt));
    expect(snap.get(callRecord("call-2"))).toMatchObject({ command: "sleep 5", status: "timed out" });
    expect(snap.get(SESSION_RECORD)).toMatchObject({ command: "mcp", status: "running" });
  });

  it("--max-spill stops a runaway command: an error result that says why and where its output is", async () => {
    const { client } = await start(["--max-spill", "2000000"]);
    const result = await client.callTool({ name: "bash", arguments: { command: "yes 'runaway output'" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("runaway output\n");
    expect(textOf(result)).toMatch(/the command printed more than 2,000,000 bytes, the most its spill may keep \(spill\.maxBytes, --max-spill\)/);
    const fine = await client.callTool({ name: "bash", arguments: { command: "echo still serving" } });
    expect(textOf(fine)).toBe("still serving\n");
  });

  it("bad arguments are tool errors with a clear message, and the server keeps serving", async () => {
    const { client } = await start();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["bash", { command: 42 }, /"command" string/],
      ["bash", {}, /"command" string/],
      ["bash", { command: "true", timeout: -1 }, /timeout/],
      ["bash", { command: "true", timeout: "soon" }, /timeout/],
      ["bash", { command: "printf 'a\0b'" }, /^bash "command" contains a NUL character/],
      ["read", { path: "/definitely/not/here" }, /no file/],
      ["read", { path: "." }, /is a directory; list it with bash \(ls\)/],
      ["read", { path: "x", offset: 0 }, /offset/],
      ["recall", { key: "0123456789abcdef" }, /Unknown tool "recall"/],
      ["nope", {}, /Unknown tool "nope"/],
    ];
    for (const [name, args, message] of cases) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(textOf(r)).toMatch(message);
      expect(textOf(r)).not.toMatch(/\n\s+at /); // no stack trace
    }
    expect((await client.callTool({ name: "bash", arguments: { command: "echo alive" } })).isError).toBeFalsy();
  });

  it("a result is never empty or only whitespace (an API refuses such a text block): a silent command says '(no output)', blank output is shown escaped", async () => {
    const c = await start();
    const text = async (name: string, args: Record<string, unknown>) => textOf(await c.client.callTool({ name, arguments: args }));
    expect(await text("bash", { command: "mkdir made" })).toBe("(no output)");
    expect(await text("bash", { command: "echo" })).toBe('(only whitespace: "\\n")');
    expect(await text("bash", { command: "printf ' \\t \\n\\n'" })).toBe('(only whitespace: " \\t \\n\\n")');
    writeFileSync(join(c.dir, "blank.txt"), "\n".repeat(100));
    expect(await text("read", { path: "blank.txt" })).toBe(`(only whitespace, 100 characters: "${"\\n".repeat(29)}…)`);
    // Text with anything visible in it is as it was.
    expect(await text("bash", { command: "echo; echo x" })).toBe("\nx\n");
  });

  it("a bad argument's value is shown clipped: a 1 MB value or a 100,000-char path comes back as one short line", async () => {
    const { client } = await start();
    const big = "9".repeat(1_000_000);
    const background = await client.callTool({ name: "bash", arguments: { command: "sleep 30", background: true } });
    const processId = (background.structuredContent as { processId: string }).processId;
    // Each was echoed whole: a 1 MB error for a wrong `timeout`, 200 KB (the path twice) for a long path.
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["bash", { command: "true", timeout: big }, /^bash "timeout" must be a number of seconds .* got "9{50,}…$/],
      ["bash", { command: "true", yieldSeconds: Array.from({ length: 100_000 }, (_, i) => i) }, /^bash "yieldSeconds" must be .* got \[0,1,2,.*…$/],
      ["bash", { command: "true", pty: big }, /^bash "pty" must be true or false, got "9+…$/],
      ["read", { path: "x", offset: big }, /^read "offset" must be .* got "9+…$/],
      ["read", { path: `a\0${big}` }, /^read: the path "a\\u00009+… contains a NUL character/],
      ["read", { path: "x".repeat(100_000) }, /^read: the path "x+… \(100000 characters\) is too long to be a file's: .*\(ENAMETOOLONG\)$/],
      ["read", { path: "y".repeat(300) }, /^read: the path "y+… \(300 characters\) is too long to be a file's/],
      ["process_output", { processId, waitSeconds: big }, /^process_output: "waitSeconds" must be .* got "9+…$/],
      ["process_write", { processId, input: "", end: big }, /^process_write: "end" must be true or false, got "9+…$/],
      ["x".repeat(100_000), {}, /^Unknown tool "x+…\. This server offers: bash, read/],
    ];
    for (const [name, args, message] of cases) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, name.slice(0, 20)).toBe(true);
      expect(textOf(r)).toMatch(message);
      expect(textOf(r).length, textOf(r).slice(0, 100)).toBeLessThan(300);
    }
  });

  it("a client that disconnects ends every running command; the session shows as interrupted, then lists", async () => {
    const c = await start();
    const pidFile = join(c.dir, "child.pid");
    void c.client.callTool({ name: "bash", arguments: { command: `(sleep 300 & echo $! > ${pidFile}; wait)` } }).catch(() => undefined);
    const pid = await until(() => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8").trim()), "the grandchild's pid");
    const serverPid = c.transport.pid!;
    const t0 = Date.now();
    await c.client.close(); // ends stdin; the SDK waits 2 s before it would send SIGTERM
    expect(Date.now() - t0).toBeLessThan(1900);
    expect(alive(serverPid)).toBe(false);
    await until(() => !alive(pid), "the grandchild to be gone", 3000);
    const record = readJsonlSnapshot(join(c.sessionDir(), "session.jsonl")).get(SESSION_RECORD);
    expect(record).toMatchObject({ command: "mcp", status: "interrupted" });
    expect(record?.endedAt).toBeTruthy();
    const listed = JSON.parse(runSpool(["sessions", "--root", c.root, "--json"], { cwd: c.dir }).stdout) as {
      command: string;
      status: string;
    }[];
    expect(listed).toMatchObject([{ command: "mcp", status: "interrupted" }]);
  });

  it("a client that disconnects while process_output waits: the wait ends at once, the process is killed, every call settles", async () => {
    const c = await start();
    const pidFile = join(c.dir, "bg.pid");
    const started = await c.client.callTool({ name: "bash", arguments: { command: `echo $$ > ${pidFile}; sleep 300`, background: true } });
    const processId = /process (proc-\w+)/.exec(textOf(started))![1]!;
    const pid = await until(() => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8").trim()), "the process's pid");
    void c.client.callTool({ name: "process_output", arguments: { processId, waitSeconds: 60 } }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const serverPid = c.transport.pid!;
    const t0 = Date.now();
    await c.client.close(); // ends stdin; the SDK sends SIGTERM after 2 s, which must not cut the close short
    expect(Date.now() - t0).toBeLessThan(1900);
    expect(alive(serverPid)).toBe(false);
    await until(() => !alive(pid), "the background process to be gone", 3000);
    const inspected = runSpool(["inspect", "--root", c.root, basename(c.sessionDir())], { cwd: c.dir });
    expect(inspected.stdout + inspected.stderr).not.toMatch(/UNSETTLED|still open|missing/);
  });

  it("SIGTERM (a client's second step of closing, before SIGKILL) ends every process the server started, settles the session and exits 0", async () => {
    const c = await start();
    // The SDK keeps its child private (and never reads its exit code): reached here for how it ended.
    const server = (c.transport as unknown as { _process: ChildProcess })._process;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      server.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const bgFile = join(c.dir, "bg.pid");
    const fgFile = join(c.dir, "fg.pid");
    // Each command leaves a grandchild that ignores SIGTERM behind its shell: only its group's end takes it.
    const stubborn = "(trap '' TERM; sleep 300) & sleep 300 & wait";
    await c.client.callTool({ name: "bash", arguments: { command: `echo $$ > ${bgFile}; ${stubborn}`, background: true } });
    void c.client.callTool({ name: "bash", arguments: { command: `echo $$ > ${fgFile}; ${stubborn}` } }).catch(() => undefined);
    const groups = [bgFile, fgFile].map((f) =>
      until(() => existsSync(f) && readFileSync(f, "utf8").endsWith("\n") && groupOf(Number(readFileSync(f, "utf8"))), f),
    );
    const pgids = await Promise.all(groups);
    await until(() => pgids.every((g) => groupMembers(g).length >= 3), "each command's shell and its two sleeps");
    process.kill(server.pid!, "SIGTERM");
    const how = await exited;
    for (const g of pgids) expect(groupMembers(g), `process group ${g}`).toEqual([]);
    expect(how).toEqual({ code: 0, signal: null });
    const record = readJsonlSnapshot(join(c.sessionDir(), "session.jsonl")).get(SESSION_RECORD);
    expect(record).toMatchObject({ command: "mcp", status: "interrupted" });
    const inspected = runSpool(["inspect", "--root", c.root, basename(c.sessionDir())], { cwd: c.dir });
    expect(inspected.stdout + inspected.stderr).not.toMatch(/UNSETTLED|still open|missing/);
  });

  it("after a SIGKILL of the server mid-command, the session shows the call with its output so far and no command survives", async () => {
    const c = await start();
    const pidFile = join(c.dir, "child.pid");
    void c.client
      .callTool({ name: "bash", arguments: { command: `for i in $(seq 1 20); do echo before-crash $i; done; (sleep 300 & echo $! > ${pidFile}; wait)` } })
      .catch(() => undefined);
    const pid = await until(() => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8").trim()), "the grandchild's pid");
    // The crash comes once the output is durable, as spool inspect reads it from the running session.
    const recovered = () => {
      const [session] = JSON.parse(runSpool(["sessions", "--root", c.root, "--json"], { cwd: c.dir }).stdout) as { id: string }[];
      if (!session) return undefined;
      const inspected = JSON.parse(runSpool(["inspect", session.id, "--root", c.root, "--json"], { cwd: c.dir }).stdout) as {
        calls: { recoveredOutput?: string }[];
      };
      return inspected.calls[0]?.recoveredOutput;
    };
    await until(() => recovered()?.includes("before-crash 20"), "the output to be durable");
    process.kill(c.transport.pid!, "SIGKILL");
    await until(() => !alive(c.transport.pid!), "the server to die");
    await until(() => !alive(pid), "the orphaned command to be killed", 5000);
    const listed = JSON.parse(runSpool(["sessions", "--root", c.root, "--json"], { cwd: c.dir }).stdout) as {
      id: string;
      status: string;
    }[];
    expect(listed).toMatchObject([{ status: "interrupted" }]);
    const report = JSON.parse(runSpool(["inspect", listed[0]!.id, "--root", c.root, "--json"], { cwd: c.dir }).stdout) as {
      calls: { tool: string; settled: boolean; recoveredOutput?: string }[];
    };
    expect(report.calls).toHaveLength(1);
    expect(report.calls[0]).toMatchObject({ tool: "bash", settled: false });
    expect(report.calls[0]!.recoveredOutput).toContain("before-crash 20");
  });

  it("the live session is visible to spool sessions and spool inspect while the server runs", async () => {
    const c = await start();
    await c.client.callTool({ name: "bash", arguments: { command: "seq 1 50000" } });
    await c.client.callTool({ name: "bash", arguments: { command: "exit 4" } });
    const listed = JSON.parse(runSpool(["sessions", "--root", c.root, "--json"], { cwd: c.dir }).stdout) as {
      id: string;
      command: string;
      status: string;
    }[];
    expect(listed).toMatchObject([{ command: "mcp", status: "running" }]);
    const report = JSON.parse(runSpool(["inspect", listed[0]!.id, "--root", c.root, "--json"], { cwd: c.dir }).stdout) as {
      live: boolean;
      calls: { tool: string; isError: boolean; settled: boolean }[];
      spillFiles: unknown[];
    };
    expect(report.live).toBe(true);
    expect(report.calls).toMatchObject([
      { tool: "bash", isError: false, settled: true },
      { tool: "bash", isError: true, settled: true },
    ]);
    expect(report.spillFiles).toHaveLength(1);
  });

  it("--serve prints the viewer URL on stderr and keeps stdout for the protocol", async () => {
    const c = await start(["--serve"]);
    const url = await until(() => /spool mcp: viewer at (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(c.stderr())?.[1], "the viewer URL");
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect((await c.client.callTool({ name: "bash", arguments: { command: "echo served" } })).isError).toBeFalsy();
  });
});
