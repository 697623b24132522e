// `spool run` through the built binary, in a scratch working directory: results, exit codes, the
// live view in pipes and terminals, Ctrl-C, timeouts and usage errors.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killStarted, runSpool, SPOOL_BIN, startSpool } from "../support/cli.js";
import { OTHER_USER, otherUserCanRead } from "../support/other-user.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { until } from "../support/until.js";

const cwd = tempDir("spool-run-");
afterAll(removeTempDirs);
afterEach(killStarted);
const spool = (args: string[]) => runSpool(args, { cwd });

describe("spool run", () => {
  it("reads its stdin when that is a pipe or a file, as the command would without spool", () => {
    // It was closed whatever it was: `printf … | spool run -- wc -l` counted 0 lines.
    const piped = runSpool(["run", "-q", "--", "wc", "-l"], { cwd, input: "a\nb\nc\n" });
    expect(piped.status).toBe(0);
    expect(piped.stdout.split("\n")[0]).toBe("3");
    writeFileSync(join(cwd, "words.txt"), "alpha\nbeta\ngamma\n");
    const fromFile = spawnSync("sh", ["-c", `node ${SPOOL_BIN} run -q -- grep -c a < words.txt`], { cwd, encoding: "utf8" });
    expect(fromFile.stdout.split("\n")[0]).toBe("3");
    // A terminal stays closed: nothing there types into the command, so `cat` ends at once.
    const onTty = spawnSync("script", ["-qfc", `node ${SPOOL_BIN} run -q -- cat; echo "rc=$?"`, "/dev/null"], { cwd, encoding: "utf8", timeout: 20_000 });
    expect(onTty.stdout).toMatch(/rc=0/);
    // --no-stdin: closed whatever spool's is (a caller's idle pipe cannot hold a command that reads).
    const closed = runSpool(["run", "-q", "--no-stdin", "--", "wc", "-l"], { cwd, input: "a\nb\nc\n" });
    expect(closed.stdout.split("\n")[0]).toBe("0");
  });

  it("reads its stdin when that is a device other than a terminal (`< /dev/zero`), as the command would without spool", () => {
    // It was closed: `spool run -- head -c 8 < /dev/zero` printed nothing.
    const r = spawnSync("sh", ["-c", `"${process.execPath}" "${SPOOL_BIN}" run -q -- 'head -c 8 | wc -c' < /dev/zero`], {
      cwd,
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("8");
    const empty = spawnSync("sh", ["-c", `"${process.execPath}" "${SPOOL_BIN}" run -q -- 'wc -c' < /dev/null`], { cwd, encoding: "utf8", timeout: 20_000 });
    expect(empty.stdout.split("\n")[0]).toBe("0");
  });

  it("--json on seq 1 200000: 200000 total lines, the last 2000 kept, a spill file holding all 200000", () => {
    const r = spool(["run", "--json", "-q", "--", "sh", "-c", "seq 1 200000"]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as {
      exitCode: number;
      text: string;
      truncation: { totalLines: number; outputLines: number; truncated: boolean };
      spillPath: string;
      timedOut: boolean;
    };
    expect(out.exitCode).toBe(0);
    expect(out.truncation.totalLines).toBe(200000);
    expect(out.truncation.outputLines).toBe(2000);
    // text is what the model sees: the kept window, then the footer.
    expect(out.text.split("\n").slice(0, 2)).toEqual(["198001", "198002"]);
    expect(out.text).toMatch(/\n200000\n\n\[Showing the last 2000 of 200000 lines/);
    expect(out.spillPath).toMatch(/^\.spool\/sessions\/[^/]+\/spill\/call-1\.log$/);
    const spilled = readFileSync(isAbsolute(out.spillPath) ? out.spillPath : join(cwd, out.spillPath), "utf8");
    expect(spilled.split("\n").length - 1).toBe(200000);
    expect(spilled.startsWith("1\n2\n3\n")).toBe(true);
  });

  it("--pty runs the command on a terminal and shows a redrawn display as its final screen", () => {
    const script = "test -t 1 && echo on-a-tty; printf 'a 0%%\\nb 0%%\\n'; for p in 50 100; do printf '\\033[2A\\033[2Ka %s%%\\n\\033[2Kb %s%%\\n' $p $p; done";
    const r = spool(["run", "--pty", "--json", "-q", "--", script]);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { text: string };
    expect(out.text).toBe("on-a-tty\na 100%\nb 100%\n");
    const piped = JSON.parse(spool(["run", "--json", "-q", "--", "test -t 1 && echo on-a-tty || echo piped"]).stdout) as { text: string };
    expect(piped.text).toBe("piped\n");
  });

  it("--pty: a full-screen spell that scrolls its alternate screen leaves nothing; a scroll-up on the normal screen loses no line", () => {
    // A node program writing the escapes itself, sized to the terminal spool gives it.
    const program = [
      "const w = (s) => process.stdout.write(s); const rows = process.stdout.rows;",
      "w('before\\n\\x1b[?1049h\\x1b[H');",
      "for (let i = 0; i < rows * 2; i++) w(`ALT ${i}\\r\\n`);",
      "w('\\x1b[5S\\x1b[?1049l');",
      "for (let i = 1; i <= rows + 10; i++) w(`${i}\\n`);",
      "w('\\x1b[5Send\\n');",
    ].join("\n");
    writeFileSync(join(cwd, "screens.mjs"), program);
    const r = spool(["run", "--pty", "--json", "-q", "--", "node screens.mjs"]);
    expect(r.status).toBe(0);
    const lines = (JSON.parse(r.stdout) as { text: string }).text.split("\n").filter((l) => l !== "");
    expect(lines[0]).toBe("before");
    expect(lines.some((l) => l.startsWith("ALT"))).toBe(false);
    expect(lines.at(-1)).toBe("end");
    const numbers = lines.slice(1, -1);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => String(i + 1)));
    expect(numbers.length).toBeGreaterThan(10);
  });

  it("exits with the command's status and prints the status sentence once", () => {
    const r = spool(["run", "--", "sh -c 'echo out; exit 3'"]);
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/^out\nCommand exited with code 3\nSession: \.spool\/sessions\/[^/\n]+\n$/);
    expect(r.stdout.match(/exited with code/g)).toHaveLength(1);
  });

  // As root the command runs on pipes; another user's writes its stdout to its spill file, with
  // stderr a pipe spool appends there.
  it.skipIf(process.platform !== "linux" || process.geteuid?.() !== 0)(
    "as root, a set -e script's `echo usage > /dev/stderr` is shown and its exit code kept",
    () => {
      const r = spool(["run", "--json", "-q", "--", "bash", "-c", "set -e; echo a; echo usage > /dev/stderr; exit 2"]);
      expect(r.status).toBe(2);
      expect((JSON.parse(r.stdout) as { text: string }).text).toBe("a\nusage\nCommand exited with code 2");
    },
  );

  it.runIf(otherUserCanRead(SPOOL_BIN))("as another user, a set -e script's `echo usage > /dev/stderr` is shown and its exit code kept", () => {
    // As root, spool runs as `nobody` in a directory that user can write (not the suite's 0700 one).
    const dir = mkdtempSync(join(tmpdir(), "spool-run-user-"));
    chmodSync(dir, 0o777);
    try {
      const r = spawnSync(process.execPath, [SPOOL_BIN, "run", "--json", "-q", "--", "bash", "-c", "set -e; echo a; echo usage > /dev/stderr; exit 2"], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, HOME: dir },
        ...OTHER_USER,
      });
      expect(r.status).toBe(2);
      expect((JSON.parse(r.stdout) as { text: string }).text).toBe("a\nusage\nCommand exited with code 2");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--json counts only the command's output: a silent failing command has 0 bytes and 0 lines", () => {
    const r = spool(["run", "--json", "-q", "--", "false"]);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout) as { text: string; truncation: { totalBytes: number; totalLines: number } };
    expect(out.truncation.totalBytes).toBe(0);
    expect(out.truncation.totalLines).toBe(0);
    expect(out.text).toBe("Command exited with code 1");
  });

  it("--pty at a prompt waits for its --timeout: nobody here answers it, so nothing is handed over", () => {
    const r = spool(["run", "-q", "--pty", "--timeout", "3", "--", "read -p 'Proceed? ' a"]);
    expect(r.status).toBe(124);
    expect(r.ms).toBeGreaterThanOrEqual(2900);
    expect(r.stdout).toContain("Proceed? ");
    expect(r.stdout).not.toContain("process_write");
    expect(r.stderr).toContain(
      "spool run: the command is waiting for input on its terminal, and nothing types into it here; it ends at its --timeout, or give it its input in the command",
    );
  });

  it("--timeout exits 124 (as GNU timeout) and sessions say 'timed out'", () => {
    const r = spool(["run", "--timeout", "1", "--", "sleep", "30"]);
    expect(r.ms).toBeLessThan(5000);
    expect(r.status).toBe(124);
    expect(r.stdout).toContain("Command timed out after 1s");
    const sessions = JSON.parse(spool(["sessions", "--json"]).stdout) as { command: string; status: string }[];
    expect(sessions.find((s) => s.command === "sleep 30")?.status).toBe("timed out");
    const row = spool(["sessions"])
      .stdout.split("\n")
      .find((l) => l.endsWith("sleep 30"));
    // The STATUS column says how it ended, not the kill signal's status (143).
    // Columns: id, started, last activity, status, size, command.
    expect(row).toMatch(/^\S+\s+\S+ \S+\s+\S+ \S+\s+timed out\s+\S+ \S+\s+sleep 30$/);
  });

  it("--timeout takes a unit, as GNU timeout does (5m was refused)", () => {
    const r = spool(["run", "-q", "--timeout", "0.02m", "--", "sleep", "30"]);
    expect(r.status).toBe(124);
    expect(r.ms).toBeLessThan(5000);
    expect(r.stdout).toContain("Command timed out after 1.2s");
  });

  it("the model-facing result says loudly what was kept and where the rest is", () => {
    const r = spool(["run", "-q", "--max-lines", "10", "--", "seq 1 15000"]);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => String(14991 + i)));
    expect(r.stdout).toMatch(
      /\[Showing the last 10 of 15000 lines \(60 B of 77\.0 KB\)\. Full output: \/\S+\/\.spool\/sessions\/[^/]+\/spill\/call-1\.log\]\nSession: \.spool\/sessions\/[^/\n]+\n$/,
    );
  });

  it("--max-spill stops a runaway command: the result ends saying why and where its output is, exit 1", () => {
    const r = spool(["run", "-q", "--max-spill", "3000000", "--", "yes 'runaway output'"]);
    expect(r.status).toBe(1);
    const spill = /in "(\/\S+\/\.spool\/sessions\/[^/]+\/spill\/call-1\.log)"/.exec(r.stdout)?.[1];
    expect(r.stdout).toMatch(
      /\nthe command printed more than 3,000,000 bytes, the most its spill may keep \(spill\.maxBytes, --max-spill\), so its process group was killed\. .*\nSession: \S+\n$/,
    );
    expect(statSync(spill!).size).toBeGreaterThanOrEqual(3_000_000);
  });

  it("--min-free: a command is stopped before its spill leaves less than that free on the disk", () => {
    const fs = statfsSync(cwd);
    const free = fs.bavail * fs.bsize;
    // a reserve 48 MiB under today's free space: reached after ~48 MiB of the 4 GiB it would print
    const r = spool(["run", "-q", "--min-free", String(free - 48 * 1024 * 1024), "--", "yes 'filling the disk' | head -c 4G"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /\nthe disk holding ".*" is down to .* free \(spool leaves .*: spill\.minFreeBytes, --min-free\), so the command's process group was killed/,
    );
  });

  it("--head keeps the start", () => {
    const r = spool(["run", "-q", "--head", "--max-lines", "3", "--json", "--", "seq 1 100"]);
    expect((JSON.parse(r.stdout) as { text: string }).text).toMatch(/^1\n2\n3\n\n\[Showing the first 3 of 100 lines /);
  });

  it("a non-terminal stderr gets each line once; stdout gets only the result", () => {
    const r = spool(["run", "--", "echo live-line"]);
    expect(r.stderr).toBe("live-line\n");
    expect(r.stdout).toMatch(/^live-line\nSession: \.spool\/sessions\/[^/\n]+\n$/);
  });

  it("piped, a long noisy build streams each cleaned line once: stderr ≤ 1.1× the output, no repeated window", () => {
    // ~40k lines over ~1.5 s with progress frames: the window slides many times while it streams.
    const script =
      "for i in $(seq 1 400); do for j in $(seq 1 100); do echo \"step $i.$j compiling module_$j\"; done; printf 'progress %d%%\\r' $i; sleep 0.003; done; echo done";
    const r = spool(["run", "--max-lines", "50", "--", script]);
    expect(r.status).toBe(0);
    const expected = Array.from({ length: 400 }, (_, i) =>
      Array.from({ length: 100 }, (_, j) => `step ${i + 1}.${j + 1} compiling module_${j + 1}`).join("\n"),
    ).join("\n");
    const outputBytes = Buffer.byteLength(`${expected}\ndone\n`);
    expect(Buffer.byteLength(r.stderr)).toBeLessThanOrEqual(outputBytes * 1.1);
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("step "));
    expect(new Set(lines).size).toBe(lines.length);
    // Every line is shown, or accounted for in a "went by faster than shown" line.
    const skipped = [...r.stderr.matchAll(/\[… (\d+) lines? went by/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(lines.length + skipped).toBe(40_000);
    expect(r.stdout.match(/Showing the last 50 of/g)).toHaveLength(1);
  });

  it("stdout and stderr into one pipe: the streamed lines are not printed again, the footer is", () => {
    const r = spawnSync("sh", ["-c", `node ${SPOOL_BIN} run --max-lines 5 -- 'seq 1 20' 2>&1 | cat`], { cwd, encoding: "utf8" });
    const lines = r.stdout.split("\n");
    expect(lines.filter((l) => l === "20")).toHaveLength(1);
    expect(r.stdout).toMatch(/\n16\n17\n18\n19\n20\n\[Showing the last 5 of 20 lines[^\n]*\]\nSession: [^\n]+\n$/);
    const shown = lines.filter((l) => /^\d+$/.test(l)).length;
    const skipped = Number(/\[… (\d+) lines? went by/.exec(r.stdout)?.[1] ?? 0);
    expect(shown + skipped).toBe(20);
  });

  it("a terminal gets a live region with a status line that is erased at the end", () => {
    const r = spawnSync("script", ["-qfc", `stty rows 40 cols 100; node ${SPOOL_BIN} run -- sh -c 'echo hello; sleep 1.3; echo bye'`, "/dev/null"], {
      cwd,
      encoding: "utf8",
    });
    expect(r.stdout).toMatch(/⏵ 1\.\ds · 6 B · 1 line/);
    expect(r.stdout).toContain("\x1b[2K"); // the region erases what it drew
    expect(r.stdout.replace(/\r/g, "")).toMatch(/hello\nbye\nSession: /);
  });

  it("Ctrl-C (SIGINT to spool) aborts the command's whole process group, prints the result and exits 130", async () => {
    const run = startSpool(["run", "--", "echo started; sleep 30 & wait"], { cwd });
    await until(() => run.err().includes("started"), "the command to start");
    const started = Date.now();
    run.child.kill("SIGINT");
    const status = await run.exited;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(status).toBe(130);
    expect(run.out()).toMatch(/^started\n\[aborted\] Command aborted[^\n]*\nSession: /);
    const sessions = JSON.parse(spool(["sessions", "--json"]).stdout) as { command: string; status: string }[];
    expect(sessions.find((s) => s.command.startsWith("echo started"))?.status).toBe("interrupted");
  });

  it("a closed terminal (SIGHUP) ends the run like Ctrl-C: result printed, session finished, exit 129", async () => {
    const run = startSpool(["run", "--", "echo hup-started; sleep 30 & wait"], { cwd });
    await until(() => run.err().includes("hup-started"), "the command to start");
    run.child.kill("SIGHUP");
    expect(await run.exited).toBe(129);
    expect(run.out()).toMatch(/^hup-started\n\[aborted\] Command aborted[^\n]*\nSession: /);
    const sessions = JSON.parse(spool(["sessions", "--json"]).stdout) as { command: string; status: string }[];
    expect(sessions.find((s) => s.command.startsWith("echo hup-started"))?.status).toBe("interrupted");
  });

  it("a stderr that cannot be written stops the live display, not the run: the command finishes and its result and status come out", () => {
    const marker = join(cwd, "stderr-full-marker");
    const r = spawnSync(
      "sh",
      ["-c", `"${process.execPath}" "${SPOOL_BIN}" run -- 'for i in 1 2 3; do echo line$i; sleep .05; done; echo done > ${marker}; exit 7' 2>/dev/full`],
      {
        cwd,
        encoding: "utf8",
      },
    );
    expect(r.status).toBe(7);
    expect(r.stdout).toMatch(/^line1\nline2\nline3\nCommand exited with code 7\nSession: /);
    expect(readFileSync(marker, "utf8")).toBe("done\n");
  });

  it("`spool run -- CMD 2>&1 | head -1` ends the command once the reader is gone, as the pipeline would without spool (exit 141, session interrupted)", () => {
    // It ran on (`yes` into a full disk, 2 min 46 s here): the live lines and the result share the closed pipe.
    const marker = join(cwd, "head-1-marker");
    const loop = `for i in $(seq 1 200); do echo line$i; sleep .05; done; echo done > ${marker}`;
    const r = spawnSync("bash", ["-c", `"${process.execPath}" "${SPOOL_BIN}" run -- '${loop}' 2>&1 | head -1; echo "rc=\${PIPESTATUS[0]}"`], {
      cwd,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.stdout).toBe("line1\nrc=141\n");
    expect(existsSync(marker)).toBe(false);
    const sessions = JSON.parse(spool(["sessions", "--json"]).stdout) as { command: string; status: string }[];
    expect(sessions.find((s) => s.command.startsWith("for i in $(seq 1 200)"))?.status).toBe("interrupted");
  });

  it("`spool run -- CMD 2>/dev/null | true` ends the command once stdout's reader is gone, though nothing was written to it (exit 141, session interrupted)", () => {
    // It ran on: the result is printed only at the end, so no write failed (`yes`: into the disk's free-space floor).
    const marker = join(cwd, "reader-gone-marker");
    const loop = `for i in $(seq 1 200); do echo gone$i; sleep .05; done; echo done > ${marker}`;
    const started = performance.now();
    const r = spawnSync("bash", ["-c", `"${process.execPath}" "${SPOOL_BIN}" run -- '${loop}' 2>/dev/null | true; echo "rc=\${PIPESTATUS[0]}"`], {
      cwd,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.stdout).toBe("rc=141\n");
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(existsSync(marker)).toBe(false);
    const sessions = JSON.parse(spool(["sessions", "--json"]).stdout) as { command: string; status: string }[];
    expect(sessions.find((s) => s.command.includes("echo gone$i"))?.status).toBe("interrupted");
  });

  it("stdout a named FIFO whose reader leaves: the command ends too (exit 141)", () => {
    const fifo = join(cwd, "reader-fifo");
    const marker = join(cwd, "fifo-marker");
    const r = spawnSync(
      "bash",
      [
        "-c",
        `mkfifo ${fifo}; (sleep .3 < ${fifo}) & "${process.execPath}" "${SPOOL_BIN}" run -- 'sleep 5; echo done > ${marker}' > ${fifo} 2>/dev/null; echo "rc=$?"; wait`,
      ],
      { cwd, encoding: "utf8", timeout: 30_000 },
    );
    expect(r.stdout).toBe("rc=141\n");
    expect(existsSync(marker)).toBe(false);
  });

  it("a reader that is still there but reads late gets the whole result (the watch is not a timeout)", () => {
    const r = spawnSync(
      "bash",
      ["-c", `"${process.execPath}" "${SPOOL_BIN}" run -- 'sleep .6; echo late' 2>/dev/null | (sleep 1.2; cat); echo "rc=\${PIPESTATUS[0]}"`],
      {
        cwd,
        encoding: "utf8",
        timeout: 30_000,
      },
    );
    expect(r.stdout).toMatch(/^late\nSession: .*\nrc=0\n$/);
  });

  it("--session on a session of the other local store says which --store continues it", () => {
    expect(spool(["run", "-q", "--store", "sqlite", "--session", "mixed-stores", "--", "echo one"]).status).toBe(0);
    const r = spool(["run", "-q", "--session", "mixed-stores", "--", "echo two"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("session mixed-stores is stored in SQLite; add --store sqlite to continue it");
  });

  it("a disk that fills up: one line naming the file and what to do, exit 1", (ctx) => {
    const mnt = join(cwd, "small-disk");
    const probe = spawnSync("unshare", ["-m", "sh", "-c", `mkdir -p ${mnt} && mount -t tmpfs -o size=2m tmpfs ${mnt} && echo ok`], { encoding: "utf8" });
    if (probe.stdout?.trim() !== "ok") return ctx.skip();
    for (const fill of ["", `head -c 3000000 /dev/zero > ${mnt}/fill 2>/dev/null;`]) {
      const r = spawnSync(
        "unshare",
        [
          "-m",
          "sh",
          "-c",
          `mount -t tmpfs -o size=2m tmpfs ${mnt} && ${fill} exec "${process.execPath}" "${SPOOL_BIN}" run -q --root ${mnt}/s -- 'seq 1000000; exit 3'`,
        ],
        { cwd, encoding: "utf8" },
      );
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        /^spool run: no space left to write \S+ \(the disk is full\); nothing of this write was kept\. Free some space, or record sessions on another disk \(--root DIR\)\.\n$/,
      );
    }
  });

  it("a window smaller than one line: the footer counts the line's text, not its newline", () => {
    const r = spool(["run", "-q", "--max-bytes", "4", "--", "printf 'aaaa\\nbbbb\\ncccc\\n'"]);
    expect(r.stdout).toMatch(/^ccc\n\n\[Showing the last 3 B of line 3 \(the line is 4 B\)\. Full output: /);
  });

  it("the session path run prints is accepted by inspect", () => {
    const printed = /Session: (\S+)/.exec(spool(["run", "-q", "--", "echo via-path"]).stdout)![1]!;
    const r = spool(["inspect", printed]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("echo via-path");
  });

  it('in a directory removed since the shell entered it, run and sessions say so in one line (was "ENOENT: no such file or directory, uv_cwd")', () => {
    for (const args of ["run -- echo hi", "sessions"]) {
      const r = spawnSync("sh", ["-c", `mkdir gone && cd gone && rmdir ../gone && "${process.execPath}" "${SPOOL_BIN}" ${args}`], { cwd, encoding: "utf8" });
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `spool ${args.split(" ")[0]}: the current directory no longer exists (it was removed); cd to a directory that exists and run it again\n`,
      );
    }
  });

  it("without --, spool's options end at the command: its own flags are its own (`spool run grep -q …`), as for timeout or env", () => {
    // `spool run echo -q` printed "(no output)": the -q was taken as --quiet and echo ran without it.
    const echo = spool(["run", "--timeout", "5", "echo", "-q", "--json", "--timeout"]);
    expect(echo.status).toBe(0);
    expect(echo.stdout).toMatch(/^-q --json --timeout\nSession: /);
    // `spool run ls -la` was refused as "Unknown option -l".
    const ls = spool(["run", "-q", "ls", "-d", "/"]);
    expect(ls.status).toBe(0);
    expect(ls.stdout).toMatch(/^\/\nSession: /);
    // Flags before the command are still spool's, and a misspelt one is still refused.
    expect(spool(["run", "--frobnicate", "echo", "x"]).stderr).toBe("spool run: Unknown option --frobnicate\nRun 'spool run --help' for usage.\n");
  });

  it("usage errors exit 2, say what was wrong in one line and how to get help", () => {
    const noCommand = spool(["run"]);
    expect(noCommand.status).toBe(2);
    expect(noCommand.stderr).toBe("spool run: missing a COMMAND (put it after --)\nRun 'spool run --help' for usage.\n");
    const badNumber = spool(["run", "--max-lines", "ten", "--", "true"]);
    expect(badNumber.status).toBe(2);
    expect(badNumber.stderr).toContain('spool run: --max-lines must be a whole number from 1 to 1,000,000, got "ten"');
    const unknown = spool(["run", "--frobnicate", "--", "true"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe("spool run: Unknown option --frobnicate\nRun 'spool run --help' for usage.\n");
    const port = spool(["run", "--serve=70000", "--", "true"]);
    expect(port.status).toBe(2);
    expect(port.stderr).toContain("--serve must be a whole number from 0 to 65,535");
    // Refused before a session is made: a timeout that rounds to no time, an empty command, a window no model reads.
    const before = spool(["sessions", "--json"]).stdout;
    for (const [args, message] of [
      [["--timeout", "0.0001", "--", "true"], "--timeout must be seconds from 0.001 to 2147483, or a number with a unit (s, m, h, d: 90s, 5m)"],
      // Number() read these as 16 s and 1000 s.
      [["--timeout", "0x10", "--", "true"], '--timeout must be seconds from 0.001 to 2147483, or a number with a unit (s, m, h, d: 90s, 5m), got "0x10"'],
      [["--timeout", "1e3", "--", "true"], 'got "1e3"'],
      [["--timeout", "25d", "--", "true"], 'got "25d"'],
      [["--", "  "], "the command after -- is empty"],
      [["--max-bytes", "1000000000", "--", "true"], "--max-bytes must be a size from 1 to 67,108,864 bytes"],
      [["--max-spill", "0", "--", "true"], "--max-spill must be a size of 1 byte or more"],
      [["--min-free", "lots", "--", "true"], "--min-free must be a size of 0 bytes or more"],
    ] as const) {
      const r = spool(["run", ...args]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(message);
    }
    expect(spool(["sessions", "--json"]).stdout).toBe(before);
  });

  it("--help prints the usage with every option and exits 0", () => {
    const r = spool(["run", "--help"]);
    expect(r.status).toBe(0);
    for (const flag of ["--max-bytes N", "--timeout SECONDS", "--serve[=PORT]", "--session ID", "-q, --quiet", "-h, --help"]) expect(r.stdout).toContain(flag);
  });

  it("binary output is reported, not printed", () => {
    const r = spool(["run", "-q", "--", "head -c 10000 /dev/urandom"]);
    expect(r.stdout).toMatch(/^\[Binary output \(9\.8 KB\) not shown\. Full output: \/\S+\/spill\/call-1\.log\]/);
  });

  it("--root under /proc fails at once with the reason, exit 1, and creates nothing", () => {
    const r = spool(["run", "--root", "/proc/spool-test/x", "--", "echo should-not-run"]);
    expect(r.ms).toBeLessThan(5000);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^spool run: cannot create \/proc\/spool-test\/x\/sessions: \w+\. Choose a writable directory/);
    expect(r.stdout).toBe("");
  });

  it("--session ID creates the session when it does not exist yet, and continues it after", () => {
    const first = spool(["run", "-q", "--session", "my-task", "--", "echo one"]);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain("Session: .spool/sessions/my-task");
    const second = spool(["run", "-q", "--session", "my-task", "--", "echo two"]);
    expect(second.status).toBe(0);
    const bad = spool(["run", "-q", "--session", "../escape", "--", "true"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^spool run: .*session id/);
  });

  // inspect said "no session", run said "session already exists … Open it instead": the id was stuck.
  it.each([
    ["jsonl", "an empty directory (mkdir, or a crash before the log was written)", (dir: string) => mkdirSync(dir, { recursive: true })],
    ["jsonl", "a workspace's directory (spill/ only)", (dir: string) => mkdirSync(join(dir, "spill"), { recursive: true })],
    [
      "sqlite",
      "an empty session.sqlite (a crash before its schema was written)",
      (dir: string) => {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, "session.sqlite"), "");
      },
    ],
  ] as const)("--store %s --session ID starts the session in %s", (store, _what, make) => {
    const id = `held-${store}-${Math.random().toString(36).slice(2, 8)}`;
    make(join(cwd, ".spool", "sessions", id));
    const r = spool(["run", "-q", "--store", store, "--session", id, "--", "echo started"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`started\nSession: .spool/sessions/${id}\n`);
    expect(spool(["inspect", id]).stdout).toMatch(new RegExp(`^Session ${id} \\(${store}\\) — succeeded`));
  });

  it("--session ID in a directory holding a lost log's sidecars is refused (exit 1) naming them, and its command does not run", () => {
    const dir = join(cwd, ".spool", "sessions", "lost-log");
    mkdirSync(join(dir, "session.jsonl.scopes"), { recursive: true });
    const r = spool(["run", "-q", "--session", "lost-log", "--", "touch lost-log-ran"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^spool run: \S+\/lost-log\/session\.jsonl:0: the log is missing but \S+\/session\.jsonl\.scopes is still there\. /);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(cwd, "lost-log-ran"))).toBe(false);
    expect(existsSync(join(dir, "session.jsonl"))).toBe(false);
  });
});
