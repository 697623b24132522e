// The viewer page in a real chromium against a real wire server built from src: the page folds the SSE
// stream with the library's subscribe() and must show what a reader needs while a command runs.
// The output text goes through the real capture layer (ANSI stripped, \r frames collapsed, tail window).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OutputCapture, resolveLimits } from "../../src/capture/index.js";
import type { ToolResultMessage } from "../../src/context/messages.js";
import { createStateHost, type MutableState, type StateHost } from "../../src/harness/index.js";
import type { ToolOutputState } from "../../src/output/sink.js";
import { createWireServer, serveViewer, type WireServer } from "../../src/wire/index.js";
import type { SessionState, SessionsState, SessionStatus, SessionSummary } from "../../web/src/contract.js";
import { buildViewer } from "../../web/build.mjs";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { openPage, outputScroll, outputShows, outputText, topVisibleLine, type OpenedPage } from "./browser.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };
type Draft = Mutable<SessionState> & {
  calls: { id: string; name: string; args: unknown; output: ToolOutputState | undefined; ended: boolean; isError: boolean }[];
  transcript: ToolResultMessage[];
};

const TOKEN = "viewer-test-token";
const ESC = "\x1b";
let dir: string;
let host: StateHost;
let server: WireServer;
let sessions: MutableState<SessionsState>;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  dir = await buildViewer(tempDir("spool-viewer-"));
});
afterAll(removeTempDirs);
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startServer(): Promise<string> {
  host = createStateHost();
  sessions = host.state<SessionsState>("sessions", { sessions: [] });
  server = await createWireServer({ states: host, token: TOKEN, fallback: serveViewer(dir) });
  cleanups.push(() => server.close());
  return `${server.url}/?token=${TOKEN}`;
}

async function open(url: string): Promise<OpenedPage> {
  const opened = await openPage(url);
  cleanups.push(() => opened.close());
  return opened;
}

function summary(s: SessionState, bytes: number): SessionSummary {
  return { id: s.id, command: s.command, status: s.status, startedAt: s.startedAt, endedAt: s.endedAt, exitCode: s.exitCode, bytes };
}

/** A session whose one bash call's output is produced by the real capture layer from raw terminal bytes. */
function startRun(id: string, command: string, startedAt = new Date().toISOString()) {
  const capture = new OutputCapture(resolveLimits({ maxLines: 400, retain: "tail" }));
  const state = host.state<Draft>(`session:${id}`, {
    id,
    command,
    status: "running",
    exitCode: null,
    startedAt,
    endedAt: null,
    calls: [{ id: "call-1", name: "bash", args: { command }, output: undefined, ended: false, isError: false }],
    transcript: [],
  });
  const publishSummary = (): void =>
    sessions.mutate((d) => {
      const row = summary(state.value, capture.rawBytes);
      const i = d.sessions.findIndex((s) => s.id === id);
      if (i < 0) (d.sessions as SessionSummary[]).push(row);
      else (d.sessions as SessionSummary[])[i] = row;
    });
  publishSummary();
  const publishOutput = (spillPath?: string): void => {
    const view = capture.view();
    state.mutate((d) => {
      const call = d.calls[0]!;
      if (!call.output) {
        call.output = { content: [{ type: "text", text: view.text }], details: {}, terminate: false, truncation: { ...view.truncation } };
      } else {
        call.output.content[0].text = view.text;
        call.output.truncation = { ...view.truncation };
      }
      if (spillPath) call.output.details["spillPath"] = spillPath;
    });
  };
  return {
    state,
    write(raw: string, spillPath?: string): void {
      capture.push(Buffer.from(raw));
      publishOutput(spillPath);
    },
    finish(status: SessionStatus, exitCode: number): void {
      capture.end();
      publishOutput();
      const text = capture.view().text;
      state.mutate((d) => {
        d.status = status;
        d.exitCode = exitCode;
        d.endedAt = new Date().toISOString();
        d.calls[0]!.ended = true;
        d.calls[0]!.isError = exitCode !== 0;
        d.transcript.push({
          role: "tool",
          toolCallId: "call-1",
          toolName: "bash",
          isError: exitCode !== 0,
          content: [{ type: "text", text: `${text}\n\nexit code ${exitCode}` }],
        });
      });
      publishSummary();
    },
  };
}

const green = (s: string): string => `${ESC}[32m${s}${ESC}[0m`;
const yellow = (s: string): string => `${ESC}[1;33m${s}${ESC}[0m`;
function compileLines(from: number, count: number): string {
  let out = "";
  for (let i = from; i < from + count; i++) out += `${green("  CC")}      src/module_${i}/unit_${(i * 7919) % 1000}.c  (${i})\n`;
  return out;
}
function progress(label: string): string {
  let out = "";
  for (let p = 0; p <= 10; p++) out += `\r${label} [${"#".repeat(p)}${" ".repeat(10 - p)}] ${p * 10}%`;
  return `${out}\n`;
}

describe("viewer page", () => {
  it("streams a running call's output, pauses auto-scroll while the reader is scrolled up, and ends with the exit code, the error line and the transcript", async () => {
    const url = await startServer();
    const run = startRun("x", "node examples/noisy-build.mjs");
    run.write(compileLines(1, 30));
    const { page, errors } = await open(url);

    // Auto-selected (the only running session), with its status and the output so far.
    await expect.poll(() => page.textContent("#status-state")).toBe("running");
    await expect.poll(() => page.getAttribute('#sessions li[data-session="x"]', "aria-current")).toBe("true");
    await expect.poll(() => outputText(page)).toContain("src/module_30/");
    const first = (await outputText(page)).length;

    // Grows while running; the progress bar is its last frame, no ANSI or \r reaches the page.
    run.write(`${yellow("linking")}\n`);
    run.write(progress("  LD  libnet.so"));
    run.write(compileLines(31, 30));
    await expect.poll(() => outputText(page)).toContain("src/module_60/");
    const grown = await outputText(page);
    expect(grown.length).toBeGreaterThan(first);
    expect(grown).toContain("  LD  libnet.so [##########] 100%\n");
    expect(grown).not.toMatch(/\[#{1,9} +\]/);
    expect(grown).not.toContain(ESC);
    expect(grown).not.toContain("\r");
    await expect.poll(async () => (await outputScroll(page)).atBottom).toBe(true);
    expect(await page.isVisible("#jump")).toBe(false);

    // The reader scrolls up: following stops, and new output does not move the view.
    await page.hover("#output-scroll");
    await page.mouse.wheel(0, -600);
    await expect.poll(() => page.getAttribute("#output-scroll", "data-following")).toBe("false");
    const held = await outputScroll(page);
    expect(held.atBottom).toBe(false);
    run.write(compileLines(61, 60));
    await expect.poll(() => outputText(page)).toContain("src/module_120/");
    const after = await outputScroll(page);
    expect(after.height).toBeGreaterThan(held.height);
    expect(after.top).toBe(held.top);
    expect(after.atBottom).toBe(false);
    expect(await page.isVisible("#jump")).toBe(true);

    // Back at the bottom it follows again, also when the tail window slides past its line limit.
    await page.mouse.wheel(0, 100_000);
    await expect.poll(() => page.getAttribute("#output-scroll", "data-following")).toBe("true");
    expect(await page.isVisible("#jump")).toBe(false);
    run.write(compileLines(121, 400), "/tmp/sessions/x/spill/call-1.log");
    await expect.poll(() => outputText(page)).toContain("src/module_520/");
    await expect.poll(async () => (await outputScroll(page)).atBottom).toBe(true);
    expect(await outputText(page)).not.toContain("src/module_1/");
    expect(await page.textContent("#status-truncated")).toMatch(/^truncated: yes \(400 of \d+ lines shown\)$/);
    expect(await page.getAttribute("#status-spill", "href")).toBe(`/files/x/spill/call-1.log?token=${TOKEN}`);
    expect(await page.isVisible("#status-spill")).toBe(true);

    // Paused inside a sliding window: evicted head lines must not drag the reader's lines upward.
    await page.mouse.wheel(0, -900);
    await expect.poll(() => page.getAttribute("#output-scroll", "data-following")).toBe("false");
    const reading = await topVisibleLine(page);
    expect(reading).toMatch(/src\/module_\d+\//);
    run.write(compileLines(521, 60));
    await expect.poll(() => outputText(page)).toContain("src/module_580/");
    expect(await outputText(page)).not.toContain("src/module_140/");
    expect(await topVisibleLine(page)).toBe(reading);
    await page.mouse.wheel(0, 100_000);
    await expect.poll(() => page.getAttribute("#output-scroll", "data-following")).toBe("true");

    // The error near the end, then the run fails with exit code 1.
    const errorLine = "src/net/socket.c:214:9: error: 'struct sock_opts' has no member named 'linger_ms'";
    run.write(`${ESC}[1msrc/net/socket.c:180:5:${ESC}[0m ${ESC}[1;35mwarning:${ESC}[0m unused variable ‘rc’ [-Wunused-variable]\n`);
    run.write(
      `${ESC}[1m${errorLine.slice(0, 24)}${ESC}[31m${errorLine.slice(24)}${ESC}[0m\n  214 |   opts->linger_ms = 0;\n      |         ^~\n1 error generated.\nmake: *** [Makefile:41: build/net/socket.o] Error 1\n`,
    );
    run.finish("failed", 1);
    await expect.poll(() => page.textContent("#status-state")).toBe("failed · exit 1");
    expect(await page.getAttribute("#status-state", "data-status")).toBe("failed");
    await expect.poll(() => outputShows(page, errorLine)).toBe(true);
    // Error lines are marked (CSS highlight ranges over the text), warnings too, ordinary lines not.
    const marked = await page.evaluate(() => {
      const reg = CSS.highlights as unknown as Map<string, Highlight>;
      const lines = (name: string) => Array.from((reg.get(name) as unknown as Iterable<Range> | undefined) ?? [], (r) => r.toString());
      return { error: lines("spool-error"), warning: lines("spool-warning") };
    });
    expect(marked.error).toContain(errorLine);
    expect(marked.error).toContain("make: *** [Makefile:41: build/net/socket.o] Error 1");
    expect(marked.warning).toEqual(["src/net/socket.c:180:5: warning: unused variable ‘rc’ [-Wunused-variable]"]);
    expect(marked.error.some((l) => l.includes("CC "))).toBe(false);
    await expect.poll(() => page.textContent('#sessions li[data-session="x"]')).toContain("failed · exit 1");
    await expect.poll(() => page.textContent("#transcript")).toContain(errorLine);
    expect(await page.textContent("#transcript .badge")).toBe("error");
    const lines = await page.textContent("#status-lines");
    expect(lines).toBe(`${run.state.value.calls[0]!.output!.truncation.totalLines} lines`);
    // Elapsed stops at endedAt.
    const elapsed = await page.textContent("#status-elapsed");
    await new Promise((r) => setTimeout(r, 400)); // on purpose: time passes, the clock must not move
    expect(await page.textContent("#status-elapsed")).toBe(elapsed);

    await mkdir("test-artifacts", { recursive: true });
    await page.screenshot({ path: join("test-artifacts", "viewer.png") });
    expect(errors).toEqual([]);
  });

  it("auto-selects the newest running session until the reader picks one", async () => {
    const url = await startServer();
    const old = startRun("a", "make old", new Date(Date.now() - 60_000).toISOString());
    old.write("old output\n");
    old.finish("succeeded", 0);
    const b = startRun("b", "make b", new Date(Date.now() - 30_000).toISOString());
    b.write("b output\n");
    const { page, errors } = await open(url);

    await expect.poll(() => page.textContent("#session-title")).toBe("make b");
    await expect.poll(() => outputText(page)).toBe("b output\n");
    // One line of output is "1 line", not "1 lines".
    expect(await page.textContent("#status-lines")).toBe("1 line");
    // Newest first in the list.
    expect(await page.$$eval("#sessions li", (li) => li.map((n) => n.getAttribute("data-session")))).toEqual(["b", "a"]);

    startRun("c", "make c").write("c output\n");
    await expect.poll(() => page.textContent("#session-title")).toBe("make c");
    await expect.poll(() => outputText(page)).toBe("c output\n");

    await page.click('#sessions li[data-session="a"]');
    await expect.poll(() => page.textContent("#status-state")).toBe("succeeded · exit 0");
    expect(await outputText(page)).toBe("old output\n");
    expect(new URL(page.url()).searchParams.get("session")).toBe("a");

    startRun("d", "make d").write("d output\n");
    await expect.poll(() => page.$$eval("#sessions li", (li) => li.length)).toBe(4);
    expect(await page.textContent("#session-title")).toBe("make old");
    expect(errors).toEqual([]);
  });

  it("a session removed while it is shown is marked removed, and picking it again once it is back shows the new one", async () => {
    const url = await startServer();
    const a = startRun("a", "make a");
    a.write("first life\n");
    a.finish("succeeded", 0);
    const { page, errors } = await open(`${url}&session=a`);
    await expect.poll(() => outputText(page)).toBe("first life\n");
    a.state.close();
    sessions.mutate((d) => {
      const list = d.sessions as SessionSummary[];
      list.splice(
        list.findIndex((s) => s.id === "a"),
        1,
      );
    });
    await expect.poll(() => page.textContent("#session-title")).toBe("make a (removed)");
    expect(await outputText(page)).toBe("first life\n");
    startRun("a", "make a again").write("second life\n");
    await page.click('#sessions li[data-session="a"]');
    await expect.poll(() => outputText(page)).toBe("second life\n");
    expect(await page.textContent("#session-title")).toBe("make a again");
    expect(errors).toEqual([]);
  });

  it("a session's recorded reason is in its row's tooltip; a row without one shows the id alone", async () => {
    const url = await startServer();
    const a = startRun("a", "ai-sdk");
    a.finish("failed", 0);
    sessions.mutate((d) => {
      (d.sessions as SessionSummary[])[0]!.reason = "AI_APICallError (HTTP 500): quota exceeded";
    });
    startRun("b", "make b").finish("succeeded", 0);
    const { page, errors } = await open(url);
    await expect.poll(() => page.getAttribute('#sessions li[data-session="a"]', "title")).toBe("a\nfailed: AI_APICallError (HTTP 500): quota exceeded");
    expect(await page.getAttribute('#sessions li[data-session="b"]', "title")).toBe("b");
    expect(errors).toEqual([]);
  });

  it("tells the reader to use the printed URL when the token is missing", async () => {
    const url = await startServer();
    const { page } = await open(url.replace(`?token=${TOKEN}`, ""));
    await expect.poll(() => page.getAttribute("#output", "data-empty")).toMatch(/needs the token/);
    expect(await page.textContent("#conn")).toBe("disconnected");
  });
});
