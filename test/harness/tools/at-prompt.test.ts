// The prompt watch on a real pty command: a command that stays quiet without prompting is looked at
// less and less often (each look scans /proc), one that reaches a prompt in silence after a quiet
// spell is still found, and output starts the schedule again.
import { describe, expect, it } from "vitest";
import { start } from "../../../src/capture/index.js";
import { atPrompt, promptCheckDelay } from "../../../src/harness/tools/at-prompt.js";

const linux = process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64");
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real pty command whose looks at /proc are counted. */
function counted(command: string) {
  const running = start(command, { pty: true });
  let looks = 0;
  const handle = {
    onActivity: (l: () => void) => running.onActivity(l),
    waitingForInput: () => {
      looks++;
      return running.waitingForInput();
    },
  };
  return { running, handle, looks: () => looks };
}

describe("promptCheckDelay", () => {
  it("is a quarter of the quiet so far, from 200 ms to 5 s", () => {
    expect(promptCheckDelay(0)).toBe(200);
    expect(promptCheckDelay(1000)).toBe(250);
    expect(promptCheckDelay(8000)).toBe(2000);
    expect(promptCheckDelay(60_000)).toBe(5000);
    for (let q = 0; q < 100_000; q += 997) expect(promptCheckDelay(q + 997)).toBeGreaterThanOrEqual(promptCheckDelay(q));
  });
});

describe.runIf(linux)("atPrompt on a real pty", () => {
  it("looks at a quiet command that is not prompting less and less often", async () => {
    const { running, handle, looks } = counted("sleep 30");
    const watch = atPrompt(handle);
    let found = false;
    void watch.promise.then(() => (found = true));
    await pause(7000);
    watch.cancel();
    running.kill();
    await running.result.catch(() => undefined);
    expect(found).toBe(false);
    // Every 200 ms from the first second on would be 30 looks; the schedule makes it ~8.
    expect(looks()).toBeGreaterThanOrEqual(4);
    expect(looks()).toBeLessThanOrEqual(12);
  }, 20_000);

  it("still finds a prompt reached in silence after a quiet spell", async () => {
    const { running, handle } = counted("sleep 4; read answer; echo got $answer");
    const watch = atPrompt(handle);
    const t0 = Date.now();
    await watch.promise;
    const after = Date.now() - t0;
    watch.cancel();
    running.write("yes\r");
    const result = await running.result;
    expect(result.text).toContain("got yes");
    // At the read, the quiet is ~4 s: the next look comes within ~1 s (a quarter of it) and one tick (bounds left loose for a loaded machine).
    expect(after).toBeGreaterThanOrEqual(4000);
    expect(after).toBeLessThan(8000);
  }, 20_000);

  it("looks again about a second after output, however long the quiet before it", async () => {
    const { running, handle } = counted("sleep 6; printf 'continue? '; read answer; echo got $answer");
    const watch = atPrompt(handle);
    let printed = 0;
    const off = running.onActivity(() => (printed ||= Date.now()));
    await watch.promise;
    const after = Date.now() - printed;
    off();
    watch.cancel();
    running.write("y\r");
    expect((await running.result).text).toContain("got y");
    expect(printed).toBeGreaterThan(0);
    expect(after).toBeGreaterThanOrEqual(1000);
    expect(after).toBeLessThan(4000);
  }, 20_000);
});
