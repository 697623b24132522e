// A property of the read tool: for any text file — very long lines (multi-byte characters, surrogate
// pairs, lengths at the answer's bound and around it) among short ones, runs of short lines past the
// line bound, lines of `\r` progress frames (1 KB to ~350 KB raw), with or without a final newline —
// following the footers from offset 1 gives back the file byte-identical but for each line of frames,
// which shows its last frame (as a terminal would), every answer within the bound and no character
// split between answers.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { useReadSession } from "../../support/read-session.js";
import { followReads, LONE_SURROGATE, READ_MAX_BYTES } from "../../support/read-pages.js";

const RUNS = process.env["SPOOL_LONG"] ? 300 : 30;
const { dir: workDir, read } = useReadSession("read-fuzz");

// No "[" (a line of the file would then look like a footer note to the parser), no control characters
// or escapes (read cleans those, as it cleans command output).
const char = fc.constantFrom("a", "z", " ", "\t", "{", "}", ",", ":", '"', "0", "é", "€", "😀", "中");
const shortLine = fc.string({ unit: char, maxLength: 60 });
/** 20 KB to ~300 KB: a unit repeated. */
const longLine = fc
  .tuple(fc.string({ unit: char, minLength: 1, maxLength: 9 }), fc.integer({ min: 20_000, max: 300_000 }))
  .map(([unit, bytes]) => unit.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(unit)))));
/** Lines of exactly the answer's bound in bytes, or one off it; the lead shifts where a character falls at the slice's end. */
const boundaryLine = fc
  .tuple(fc.constantFrom("a", "é", "😀", "€"), fc.constantFrom(-1, 0, 1), fc.constantFrom("", "b", "bb", "bbb"))
  .map(([unit, off, lead]) => {
    const target = READ_MAX_BYTES + off;
    const core = unit.repeat(Math.floor((target - lead.length) / Buffer.byteLength(unit)));
    return lead + core + "x".repeat(target - lead.length - Buffer.byteLength(core));
  });
/** A line of `\r` progress frames, 1 KB to ~350 KB raw (half of them over one answer), each frame short: it shows its last frame. */
const frameLine = fc
  .tuple(fc.array(fc.string({ unit: char, minLength: 8, maxLength: 60 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 100, max: 10_000 }))
  .map(([frames, n]) => Array.from({ length: n }, (_, i) => frames[i % frames.length]!).join("\r"));
/** The file as read shows it: each line of frames as its last frame. */
const shown = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.slice(line.lastIndexOf("\r") + 1))
    .join("\n");
const shortRun = fc.integer({ min: 1, max: 2_600 }).map((n) => Array.from({ length: n }, (_, i) => `line ${i}`).join("\n"));
const fileText = fc
  .tuple(fc.array(fc.oneof({ arbitrary: shortLine, weight: 2 }, longLine, boundaryLine, frameLine, shortRun), { minLength: 1, maxLength: 8 }), fc.boolean())
  .map(([lines, newline]) => lines.join("\n") + (newline ? "\n" : ""));

describe("read: following the footers", () => {
  it("gives back any file byte-identical from offset 1 (lines of frames as their last frame), every answer within the bound, no character split", async () => {
    let n = 0;
    let slices = 0;
    let answersSeen = 0;
    await fc.assert(
      fc.asyncProperty(fileText, async (text) => {
        const path = join(workDir(), `f${n++}.txt`);
        writeFileSync(path, text);
        const answers = await followReads(read, path);
        for (const a of answers) expect(LONE_SURROGATE.test(a.body)).toBe(false);
        slices += answers.filter((a) => a.next?.column !== undefined).length;
        answersSeen += answers.length;
        const rebuilt = answers.map((a) => a.body).join("");
        const expected = shown(text);
        expect(rebuilt.length).toBe(expected.length);
        expect(Buffer.from(rebuilt).equals(Buffer.from(expected))).toBe(true);
      }),
      // An empty file (seed 551328477 in CI): its answer is the note "[The file is empty.]" alone.
      { numRuns: RUNS, examples: [[""]] },
    );
    // The runs did read long lines in slices, not only whole-line pages.
    expect(slices).toBeGreaterThan(RUNS / 2);
    expect(answersSeen).toBeGreaterThan(2 * RUNS);
  });
});
