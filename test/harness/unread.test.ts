// The read cursor of background processes against the real capture: whatever the reads' timing and
// however small the window, every line is either returned exactly once, in order, or counted as
// skipped — with the exact number of lines and bytes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OutputCapture, resolveLimits } from "../../src/capture/index.js";
import { START, takeUnread } from "../../src/harness/unread.js";

describe("takeUnread", () => {
  it("each line is returned once or counted as skipped, with exact line and byte counts", () => {
    const line = fc.string({ unit: fc.constantFrom("a", "b", "é", "😀", " "), maxLength: 12 });
    const step = fc.oneof(
      fc.array(line, { minLength: 1, maxLength: 6 }).map((ls) => ({ kind: "lines" as const, ls })),
      fc.constant({ kind: "read" as const }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), (steps, maxLines) => {
        const capture = new OutputCapture(resolveLimits({ maxLines, maxBytes: 10_000, retain: "tail" }));
        const all: string[] = [];
        let cursor = START;
        const got: string[] = [];
        let skippedLines = 0;
        let skippedBytes = 0;
        const read = (finished: boolean): void => {
          const u = takeUnread(capture.view(), cursor, finished);
          cursor = u.cursor;
          // What was skipped comes before what is shown: account for it at its place in the stream.
          for (let i = 0; i < u.skippedLines; i++) got.push("<skipped>");
          skippedLines += u.skippedLines;
          skippedBytes += u.skippedBytes;
          if (u.text !== "") got.push(...u.text.replace(/\n$/, "").split("\n"));
        };
        let n = 0;
        for (const s of steps) {
          if (s.kind === "read") read(false);
          else {
            // Numbered, so equal texts never make two lines look alike.
            const ls = s.ls.map((l) => `${n++}:${l}`);
            all.push(...ls);
            capture.push(Buffer.from(ls.join("\n") + "\n"));
          }
        }
        capture.end();
        read(true);
        expect(got.length).toBe(all.length);
        let bytes = 0;
        got.forEach((g, i) => {
          if (g === "<skipped>") bytes += Buffer.byteLength(all[i]!) + 1;
          else expect(g).toBe(all[i]);
        });
        expect(skippedBytes).toBe(bytes);
        expect(skippedLines).toBe(got.filter((g) => g === "<skipped>").length);
      }),
      { numRuns: 300 },
    );
  });

  it("an unfinished line (a prompt) is news once; finished, it is read like any line", () => {
    const capture = new OutputCapture(resolveLimits({}));
    capture.push(Buffer.from("hello\n>>> "));
    const a = takeUnread(capture.view(), START, false);
    expect(a.text).toBe("hello\n>>> ");
    const b = takeUnread(capture.view(), a.cursor, false);
    expect(b.text).toBe("");
    capture.push(Buffer.from("print(1)\n1\n>>> "));
    const c = takeUnread(capture.view(), b.cursor, false);
    expect(c.text).toBe(">>> print(1)\n1\n>>> ");
  });

  it("a redrawn screen line that was already read is shown again from the first change", () => {
    const capture = new OutputCapture(resolveLimits({}));
    capture.push(Buffer.from("title\na 0%\nb 0%\n"));
    const a = takeUnread(capture.view(), START, false);
    capture.push(Buffer.from("\x1b[2A\x1b[2Ka 50%\n\x1b[2Kb 0%\n"));
    const b = takeUnread(capture.view(), a.cursor, false);
    expect(b.text).toBe("a 50%\nb 0%\n");
    expect(takeUnread(capture.view(), b.cursor, false).text).toBe("");
  });
});
