// The pseudo-terminal and the terminal model, with real processes: programs see a terminal, redrawn
// displays end as their final frame, the alternate screen leaves nothing, the spill keeps the raw bytes.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exec, OutputCapture, resolveLimits, start, InputClosedError } from "../../src/capture/index.js";

const dir = mkdtempSync(join(tmpdir(), "spool-terminal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Three bars drawn with cursor-up and erase-line, redrawn ten times: what docker pull and friends do. */
const BARS = String.raw`
printf 'pulling 3 layers\n'
printf 'layer-a   0%%\nlayer-b   0%%\nlayer-c   0%%\n'
for p in 10 20 30 40 50 60 70 80 90 100; do
  sleep 0.01
  printf '\033[3A'
  for l in a b c; do printf '\033[2K\rlayer-%s %3d%%\n' $l $p; done
done
`;

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("terminal model", () => {
  it("three progress bars redrawn with cursor-up and erase-line end as exactly three final lines", async () => {
    for (const pty of [false, true]) {
      const r = await exec(BARS, { pty });
      expect(r.text).toBe("pulling 3 layers\nlayer-a 100%\nlayer-b 100%\nlayer-c 100%\n");
      expect(r.truncation.totalLines).toBe(4);
    }
  });

  it("a display that moves up over lines printed by an earlier read redraws them, not new ones", () => {
    const c = new OutputCapture(resolveLimits({}));
    c.push(Buffer.from("a 0%\nb 0%\n"));
    expect(c.emulated).toBe(false);
    c.push(Buffer.from("\x1b[2A\x1b[2Ka 100%\n\x1b[2Kb 100%\n"));
    c.end();
    expect(c.emulated).toBe(true);
    expect(c.view().text).toBe("a 100%\nb 100%\n");
  });

  it("the alternate screen (tput smcup … rmcup) leaves no garbage", async () => {
    const r = await exec(
      'echo before; tput smcup; tput clear; for i in 1 2 3; do echo "full-screen frame $i"; done; tput cup 5 5; echo x; tput rmcup; echo after',
      {
        pty: true,
      },
    );
    expect(r.text).toBe("before\nafter\n");
  });

  it("plain appended output keeps the fast path, under a pipe and under a pty", () => {
    const c = new OutputCapture(resolveLimits({}));
    c.push(Buffer.from("\x1b[32mok\x1b[0m one\r\nprogress 1\rprogress 2\n"));
    c.end();
    expect(c.emulated).toBe(false);
    expect(c.view().text).toBe("ok one\nprogress 2\n");
  });

  it("lines scrolled off the screen are committed, so a long redrawn run stays bounded with exact totals", () => {
    const c = new OutputCapture(resolveLimits({ maxLines: 5 }), { cols: 80, rows: 10 });
    c.push(Buffer.from("\x1b[2J"));
    let all = "";
    for (let i = 0; i < 50_000; i++) all += `line ${i}\n`;
    for (let i = 0; i < all.length; i += 65536) c.push(Buffer.from(all.slice(i, i + 65536)));
    c.push(Buffer.from("spinner |\x1b[1D/\x1b[1D-"));
    c.end();
    const v = c.view();
    expect(v.text).toBe("line 49996\nline 49997\nline 49998\nline 49999\nspinner -");
    expect(v.truncation.totalLines).toBe(50_001);
    expect(v.truncation.totalBytes).toBe(Buffer.byteLength(all) + "spinner -".length);
  });

  it("a line longer than the terminal is one line again, not its wrapped rows", async () => {
    const long = "x".repeat(250);
    const r = await exec(`printf '\\033[2J\\033[H'; echo ${long}; echo end`, { pty: true, cols: 80, rows: 5 });
    expect(r.text).toBe(`${long}\nend\n`);
  });
});

describe("pseudo-terminal", () => {
  it("the program sees a terminal of the requested size", async () => {
    const r = await exec("test -t 1 && echo tty; stty size", { pty: true, cols: 99, rows: 33 });
    expect(r.text).toBe("tty\n33 99\n");
    const piped = await exec("test -t 1 && echo tty || echo pipe");
    expect(piped.text).toBe("pipe\n");
  });

  it("the spill holds the terminal's raw bytes, byte-identical", async () => {
    const script = `${BARS}
printf '\\033[31mred\\033[0m\\n'; seq 1 3000`;
    const r = await exec(script, { pty: true, capture: { limits: { maxLines: 10 }, spill: { dir, id: "pty-raw" } } });
    expect(r.spillPath).toBeDefined();
    const raw = readFileSync(r.spillPath!);
    expect(raw.length).toBe(r.rawBytes);
    expect(raw.toString("latin1")).toContain("\x1b[3A\x1b[2K\rlayer-a  10%\r\n");
    expect(raw.toString("latin1")).toContain("\x1b[31mred\x1b[0m\r\n");
    expect(r.text.split("\n").slice(-2)).toEqual(["3000", ""]);
  });

  it("a command that prints and exits at once loses none of its output", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await exec("seq 1 3000", { pty: true, capture: { limits: { maxLines: 3 } } });
      expect(r.truncation.totalLines).toBe(3000);
      expect(r.text).toBe("2998\n2999\n3000\n");
    }
  });

  it("an interactive shell answers through write", async () => {
    const h = start("sh -i", { pty: true });
    await waitFor(() => h.view().text.includes("$") || h.view().text.includes("#"), "the prompt");
    h.write("echo $((6*7))\n");
    await waitFor(() => /^42$/m.test(h.view().text), "the answer");
    h.write("exit\n");
    const r = await h.result;
    expect(r.exitCode).toBe(0);
    expect(() => h.write("echo late\n")).toThrow(InputClosedError);
  });

  it("Ctrl-C written to the terminal stops the running command", async () => {
    const h = start("echo started; sleep 30; echo never", { pty: true });
    await waitFor(() => h.view().text.includes("started"), "the start");
    h.write("\u0003");
    const r = await h.result;
    expect(r.signal).toBe("SIGINT");
    expect(r.text).not.toContain("never");
  });

  it("without a pty, stdin: pipe takes input and the default keeps it closed", async () => {
    const h = start("read line; echo got $line", { stdin: "pipe" });
    h.write("hello\n");
    expect((await h.result).text).toBe("got hello\n");
    const closed = start("read line; echo status $?");
    expect(() => closed.write("x\n")).toThrow(InputClosedError);
    expect((await closed.result).text).toBe("status 1\n");
  });

  it("a bad terminal size is refused before anything runs", () => {
    expect(() => start("true", { pty: true, cols: 0 })).toThrow(/cols must be a whole number/);
    expect(() => start("true", { pty: true, rows: 1.5 })).toThrow(/rows must be a whole number/);
  });
});
