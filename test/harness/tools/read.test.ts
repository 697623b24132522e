// The read tool on lines longer than one answer (minified JSON, a long log line, curl output without
// newlines): such a line comes in slices within the bound, each footer naming the exact next call
// (offset=N column=C), so following the footers gives back every byte of the file; a character is
// never split between answers. Through the real tool, on real files.
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createReadTool } from "../../../src/harness/index.js";
import { readPage } from "../../../src/harness/tools/read-page.js";
import { useReadSession } from "../../support/read-session.js";
import { followReads, LONE_SURROGATE, parseReadAnswer, READ_MAX_BYTES } from "../../support/read-pages.js";

const { dir: workDir, read } = useReadSession("read");

function file(name: string, text: string): string {
  const path = join(workDir(), name);
  writeFileSync(path, text);
  return path;
}

function rebuilt(answers: readonly { readonly body: string }[]): Buffer {
  return Buffer.from(answers.map((a) => a.body).join(""));
}

describe("read: lines longer than one answer", () => {
  it("a 5 MB one-line file comes in slices within the bound, and following the footers gives it back byte-identical", async () => {
    // 10 bytes and 5 UTF-16 units per unit, after a 2-byte lead: slice ends fall inside 2-, 3- and 4-byte characters and inside surrogate pairs.
    const text = `ab${"x€😀é".repeat(520_000)}`;
    const path = file("minified.json", text);
    expect(Buffer.byteLength(text)).toBeGreaterThan(5_000_000);
    const first = await read({ path });
    const answer = parseReadAnswer(first.text);
    expect(answer.next).toEqual({ offset: 1, column: answer.body.length + 1 });
    expect(answer.footer).toBe(
      `[Lines 1–1 of 1; line 1 is ${text.length} chars, shown here as chars 1-${answer.body.length} (${text.length - answer.body.length} left out). Next: offset=1 column=${answer.body.length + 1}.]`,
    );
    expect(Buffer.byteLength(answer.body)).toBeGreaterThan(READ_MAX_BYTES - 4);
    expect(first.text).toBe(`${answer.body}\n${answer.footer}`);

    const answers = await followReads(read, path);
    expect(answers.length).toBeGreaterThan(100);
    expect(rebuilt(answers).equals(Buffer.from(text))).toBe(true);
    for (const a of answers) {
      expect(a.body).not.toMatch(LONE_SURROGATE);
      expect(a.body).not.toContain("\ufffd");
    }
    expect(answers.at(-1)!.footer).toMatch(/^\[Lines 1–1 of 1; line 1 is shown from char \d+\.\]$/);
  });

  it("short lines, a long line and short lines again: whole lines up to the long one, its slices, then whole lines", async () => {
    const long = `[${Array.from({ length: 40_000 }, (_, i) => `{"id":${i}}`).join(",")}]`;
    const text = `first\nsecond\n${long}\nafter 1\nafter 2\n`;
    const path = file("mixed.log", text);
    const first = parseReadAnswer((await read({ path })).text);
    expect(first.body).toBe("first\nsecond\n");
    expect(first.footer).toMatch(/\n\[Lines 1–2 of 5\. Next: offset=3\.\]$/);
    const answers = await followReads(read, path);
    expect(rebuilt(answers).toString()).toBe(text);
    // All ASCII: each slice is one answer's bytes; the rest of the line and the two short lines fit in the last answer.
    const lastStart = Math.floor(long.length / READ_MAX_BYTES) * READ_MAX_BYTES + 1;
    expect(long.length - lastStart + 1 + "\nafter 1\nafter 2\n".length).toBeLessThanOrEqual(READ_MAX_BYTES);
    expect(answers.length).toBe(1 + Math.ceil(long.length / READ_MAX_BYTES));
    expect(answers.at(-1)!.body).toBe(`${long.slice(lastStart - 1)}\nafter 1\nafter 2\n`);
    expect(answers.at(-1)!.footer).toBe(`[Lines 3–5 of 5; line 3 is shown from char ${lastStart}.]`);
  });

  it("a line of exactly one answer's bytes with its newline: the slice is the whole line, and the next answer starts at its newline", async () => {
    const exact = "y".repeat(READ_MAX_BYTES);
    const text = `${exact}\nnext line\n`;
    const path = file("exact.txt", text);
    const first = await read({ path });
    expect(
      first.text ===
        `${exact}\n[Lines 1–1 of 2; line 1 is ${READ_MAX_BYTES} chars, shown here as chars 1-${READ_MAX_BYTES} (0 left out). Next: offset=1 column=${READ_MAX_BYTES + 1}.]`,
    ).toBe(true);
    const second = await read({ path, offset: 1, column: READ_MAX_BYTES + 1 });
    expect(second.text).toBe(`\nnext line\n\n[Lines 1–2 of 2; line 1 is shown from char ${READ_MAX_BYTES + 1}.]`);
    expect(rebuilt(await followReads(read, path)).toString()).toBe(text);
  });

  it("a line one byte shorter (it fits with its newline), and a last line of exactly one answer without a newline, are shown whole", async () => {
    const fits = `${"z".repeat(READ_MAX_BYTES - 1)}\n`;
    const a = parseReadAnswer((await read({ path: file("fits.txt", `${fits}tail\n`) })).text);
    expect(a.body === fits).toBe(true);
    expect(a.footer).toMatch(/^\[Showing the first 1 of 2 lines [^\n]*\]\n\[Lines 1–1 of 2\. Next: offset=2\.\]$/);
    const last = "w".repeat(READ_MAX_BYTES);
    const b = await read({ path: file("last.txt", last) });
    expect(b.text === last).toBe(true);
  });

  it("a long coloured line is never cut inside an escape sequence: no answer shows a fragment of one", async () => {
    // 17-char units: a slice end lands inside "\x1b[31m" or "\x1b[0m" in most answers
    const text = `${"\x1b[31mred\x1b[0m word ".repeat(30_000)}\n`;
    const path = file("coloured.log", text);
    const answers = await followReads(read, path);
    expect(answers.length).toBeGreaterThan(3);
    for (const a of answers) expect(a.body).not.toMatch(/\[\d*m|\x1b/);
    // cleaned, every word is there
    expect(answers.map((a) => a.body).join("")).toBe(`${"red word ".repeat(30_000)}\n`);
  });

  it("a line between 4 KiB and one answer is shown whole, not cut with a marker", async () => {
    const line = "q".repeat(10_000);
    const r = await read({ path: file("medium.txt", `a\n${line}\nb\n`) });
    expect(r.text === `a\n${line}\nb\n`).toBe(true);
  });

  it("a line of \\r progress frames, 200 KB raw, shows its last frame: one page holds the lines before it, the frame and the lines after it", async () => {
    const frames = Array.from({ length: 3_500 }, (_, i) => `\r\x1b[K ${String(i % 100).padStart(3)}% [${"#".repeat(i % 40).padEnd(40)}] ${i} files`).join("");
    const bar = `${frames}\r100% [${"#".repeat(40)}] done`;
    expect(Buffer.byteLength(bar)).toBeGreaterThan(200_000);
    const text = `npm install\nfetching\n${bar}\nadded 206 packages\nok\n`;
    const r = await read({ path: file("spill.log", text) });
    expect(r.text).toBe(`npm install\nfetching\n100% [${"#".repeat(40)}] done\nadded 206 packages\nok\n`);
    // Read from its own offset too, and with a limit that ends at it: the page says where to go on, by line.
    expect((await read({ path: file("spill.log", text), offset: 3, limit: 1 })).text).toBe(
      `100% [${"#".repeat(40)}] done\n\n[Lines 3–3 of 5. Next: offset=4.]`,
    );
    // From a column, the line is the raw line, in slices, as before.
    const sliced = parseReadAnswer((await read({ path: file("spill.log", text), offset: 3, column: 2 })).text);
    expect(sliced.next).toEqual({ offset: 3, column: expect.any(Number) });
  });

  it("a line of frames whose last frame is over one answer comes in slices of the raw line, as any long line", async () => {
    const big = "b".repeat(READ_MAX_BYTES + 10);
    const text = `${"progress ".repeat(100)}\r${big}\nafter\n`;
    const path = file("bigframe.log", text);
    const first = parseReadAnswer((await read({ path })).text);
    expect(first.next).toEqual({ offset: 1, column: expect.any(Number) });
    expect(first.body).toMatch(/^b+$/);
    // cleaned, the slices give back the last frame and the line after it
    const answers = await followReads(read, path);
    expect(answers.map((a) => a.body).join("")).toBe(`${big}\nafter\n`);
  });

  it("a column past the end of a one-character line says '1 char' (it read '1 chars')", async () => {
    const path = file("one-char.txt", "x\nyz\n");
    expect((await read({ path, offset: 1, column: 3 })).text).toBe("[Line 1 has 1 char; column 3 is past its end.]");
  });

  it("column reads on inside a line; one inside a surrogate pair starts at the pair; one past the end says so", async () => {
    const path = file("columns.txt", "alpha\nbeta 😀 gamma\ndelta\n");
    expect((await read({ path, offset: 2, column: 6 })).text).toBe("😀 gamma\ndelta\n\n[Lines 2–3 of 3; line 2 is shown from char 6.]");
    expect((await read({ path, offset: 2, column: 7 })).text).toBe("😀 gamma\ndelta\n\n[Lines 2–3 of 3; line 2 is shown from char 6.]");
    expect((await read({ path, offset: 2, column: 3, limit: 1 })).text).toBe("ta 😀 gamma\n\n[Lines 2–2 of 3; line 2 is shown from char 3. Next: offset=3.]");
    expect((await read({ path, offset: 2, column: 14 })).text).toBe("\ndelta\n\n[Lines 2–3 of 3; line 2 is shown from char 14.]");
    expect((await read({ path, offset: 2, column: 15 })).text).toBe("[Line 2 has 13 chars; column 15 is past its end.]");
    expect((await read({ path, offset: 1, column: 1 })).text).toBe("alpha\nbeta 😀 gamma\ndelta\n");
    for (const column of [0, -1, 1.5, "2"]) {
      const bad = await read({ path, column });
      expect(bad.isError).toBe(true);
      expect(bad.text).toMatch(/read "column" must be a whole number/);
    }
  });

  it("the tool's JSON Schema offers column beside offset and limit", () => {
    const tool = createReadTool({ anyFile: true });
    const properties = (tool.parameters as { properties: Record<string, unknown> }).properties;
    expect(Object.keys(properties)).toEqual(["path", "offset", "column", "limit"]);
    expect(properties["column"]).toMatchObject({ type: "integer", minimum: 1 });
    expect(tool.description).toContain("column=N");
  });
});

describe("read: the file as it is when the read begins", () => {
  it.runIf(process.platform === "linux")("a /proc file, which stats as 0 bytes, is read to its end, not called empty", async () => {
    const r = await read({ path: "/proc/self/status" });
    expect(r.isError).toBe(false);
    expect(r.text).toMatch(/^Name:\t/);
    expect(r.text).toMatch(/^Pid:\t\d+$/m);
    expect(r.text).not.toContain("empty");
  });

  // /proc/kmsg stats as an empty regular file and a read of it waits for the kernel's next message, in
  // libuv's thread pool where no abort reaches it: `spool mcp` never exited (not on stdin's end, nor on
  // SIGTERM). Reading it in a test would consume the host's kernel messages; a FIFO whose writer stays
  // open and silent waits the same way.
  it.runIf(process.platform === "linux")("a page of a stream that would wait fails at once with EAGAIN instead of blocking for ever", async () => {
    const fifo = join(workDir(), "silent.fifo");
    execFileSync("mkfifo", [fifo]);
    const writer = openSync(fifo, constants.O_RDWR); // a writer that never writes
    try {
      const t0 = performance.now();
      const page = readPage(fifo, { offset: 1, column: 1, limit: 10, limits: { maxBytes: 1000, maxLines: 10, retain: "head", maxLineBytes: 1000 } });
      await expect(page).rejects.toMatchObject({ code: "EAGAIN" });
      expect(performance.now() - t0).toBeLessThan(1000);
    } finally {
      closeSync(writer);
    }
  });

  it("a call whose signal is aborted before it starts says so, and no stream's error is left unhandled", async () => {
    const unhandled: unknown[] = [];
    const onError = (e: unknown): void => void unhandled.push(e);
    process.on("uncaughtException", onError);
    try {
      const r = await read({ path: file("aborted.txt", "hello\n") }, { signal: AbortSignal.abort() });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/^\[aborted\]/);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off("uncaughtException", onError);
    }
    expect(unhandled).toEqual([]);
  });
});
