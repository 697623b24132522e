// waitingForTerminalInput through RunningCommand.waitingForInput, with real processes on a real pty:
// waits in epoll (Node's REPL, a readline question) and in poll are recognised when a watched
// descriptor is the terminal, and so is a read on any thread; a Node program that waits for a timer, one that watches a pipe, and a
// busy one are not.
import { describe, expect, it } from "vitest";
import { start } from "../../src/capture/index.js";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const linux = process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64");
const question = `node -e 'require("readline").createInterface({ input: process.stdin, output: process.stdout }).question("name? ", (a) => { console.log("hi " + a); process.exit(0); })'`;
// The main thread joins (a futex), another reads the terminal: how Go programs read their stdin.
const threadRead = `python3 -c 'import sys, threading; t = threading.Thread(target=lambda: print("got " + sys.stdin.readline(), flush=True)); t.start(); t.join()'`;
const pollTerminal = `python3 -c 'import select, sys; print("ready", flush=True); p = select.poll(); p.register(sys.stdin, select.POLLIN); p.poll()'`;

/** Whether the command is judged waiting within `ms` (checked as the bash tool does, every 200 ms). */
async function judgedWaiting(command: string, ms: number): Promise<boolean> {
  const running = start(command, { pty: true });
  try {
    for (const until = Date.now() + ms; Date.now() < until; await pause(200)) if (running.waitingForInput()) return true;
    return false;
  } finally {
    running.kill();
    await running.result.catch(() => undefined);
    expect(running.waitingForInput()).toBe(false);
  }
}

describe.runIf(linux)("waitingForInput in epoll and poll", () => {
  it.each([
    ["node's REPL", "node"],
    ["node -i", "node -i"],
    ["a readline question", question],
    ["poll(2) on the terminal", pollTerminal],
    ["a read on a thread other than the main one", threadRead],
  ])("%s is waiting for input", async (_, command) => {
    expect(await judgedWaiting(command, 15_000)).toBe(true);
  });

  it.each([
    ["a Node timer", `node -e 'setTimeout(() => {}, 30000)'`],
    ["Node reading a pipe", `sleep 30 | node -e 'process.stdin.resume()'`],
    ["poll(2) on a pipe", `sleep 30 | ${pollTerminal}`],
    ["a busy Node loop", `node -e 'for (;;) {}'`],
    ["sleep", "sleep 30"],
    // `script` is in util-linux; where it is missing, the quiet command alone.
    ["a terminal relay (script) running a quiet command", "if command -v script >/dev/null; then script -qc 'sleep 30' /dev/null; else sleep 30; fi"],
    [
      "a thread asleep while another waits for it",
      `python3 -c 'import threading, time; t = threading.Thread(target=lambda: time.sleep(30)); t.start(); t.join()'`,
    ],
  ])("%s is not", async (_, command) => {
    expect(await judgedWaiting(command, 3_000)).toBe(false);
  });
});
