import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  archiveKey,
  enforceToolResultBudget,
  formatMarker,
  isWellFormed,
  MemoryArchive,
  parseStub,
  textOf,
  toolResult,
  type Message,
} from "../../src/context/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { A, lines, say, U } from "./helpers.js";

afterAll(removeTempDirs);
const dir = (): string => tempDir("spool-context-");

/**
 * The head and tail a preview kept. The omission line follows the head on a line of its own, so a
 * head not ending in a newline got one added; the original's length tells which case this is.
 */
function parts(preview: string, originalLength: number): { header: string; head: string; tail: string; omitted: number } {
  const nl = preview.indexOf("\n");
  const header = preview.slice(0, nl);
  const body = preview.slice(nl + 1);
  const m = /\[\.\.\. (\d+) chars omitted(?: \.\.\.\]|; lines in it that mention errors:\n[^]*?\n\.\.\.\])\n/.exec(body)!;
  const tail = body.slice(m.index + m[0].length);
  const omitted = Number(m[1]);
  let head = body.slice(0, m.index);
  if (head.length + omitted + tail.length !== originalLength) head = head.slice(0, -1);
  return { header, head, tail, omitted };
}

function run(h: Message[], resultsDir: string, extra: Parameters<typeof enforceToolResultBudget>[1] = {}) {
  return enforceToolResultBudget(h, { resultsDir, ...extra });
}

describe("enforceToolResultBudget — per result", () => {
  it("a result of exactly 20,000 chars is unchanged and 20,001 is cut", () => {
    const d = dir();
    const at = lines(20_000, 1);
    const over = lines(20_001, 2);
    const { messages, report } = run([A("a", "b"), toolResult("a", at), toolResult("b", over)], d);
    expect(textOf(messages[1]!)).toBe(at);
    expect(textOf(messages[2]!)).not.toBe(over);
    expect(report.resultsTruncated).toBe(1);
    expect(report.totalToolResults).toBe(2);
  });

  it("the full text is saved once as results/<key>.txt, byte-identical", () => {
    const d = dir();
    const big = lines(50_000, 3) + "ünïcödé 😀 end";
    const { report } = run([A("a"), toolResult("a", big)], d);
    const key = archiveKey(big);
    expect(readdirSync(d)).toEqual([`${key}.txt`]);
    expect(readFileSync(join(d, `${key}.txt`), "utf8")).toBe(big);
    expect(report.filesSaved).toEqual([join(d, `${key}.txt`)]);
    expect(report.keysSaved).toEqual([key]);
  });

  it("the preview header says it is partial, how big the whole is, and names both the file and the recall key", () => {
    const d = dir();
    const big = lines(85_432, 4);
    const { messages } = run([A("a"), toolResult("a", big)], d);
    const preview = textOf(messages[1]!);
    const header = preview.split("\n", 1)[0]!;
    const key = archiveKey(big);
    expect(header.startsWith("[Partial tool result — showing lines 1-")).toBe(true);
    expect(header).toContain(`(85432 chars, `);
    expect(header).toContain(formatMarker(key));
    expect(header).toContain(join(d, `${key}.txt`));
    expect(header).toContain(`of ${big.split("\n").length - (big.endsWith("\n") ? 1 : 0)} (`);
    expect(parseStub(preview)).toMatchObject({ level: "partial", chars: 85_432, keys: [key], path: join(d, `${key}.txt`) });
  });

  it("the omitted count is exact: head + omitted + tail = the original length, and head/tail are the original's ends", () => {
    const d = dir();
    const big = lines(33_333, 5);
    const { messages } = run([A("a"), toolResult("a", big)], d);
    const p = parts(textOf(messages[1]!), big.length);
    expect(p.head.length + p.omitted + p.tail.length).toBe(big.length);
    expect(big.startsWith(p.head)).toBe(true);
    expect(big.endsWith(p.tail)).toBe(true);
  });

  it("the head ends after a newline when the last newline is past half the head", () => {
    const d = dir();
    const big = "x".repeat(2_500) + "\n" + "y".repeat(30_000);
    const p = parts(textOf(run([A("a"), toolResult("a", big)], d).messages[1]!), big.length);
    expect(p.head).toBe("x".repeat(2_500) + "\n");
  });

  it("the head is cut at 4,000 when the last newline is in its first half", () => {
    const d = dir();
    const big = "x".repeat(1_500) + "\n" + "y".repeat(30_000);
    const p = parts(textOf(run([A("a"), toolResult("a", big)], d).messages[1]!), big.length);
    expect(p.head.length).toBe(4_000);
  });

  it("the tail starts after a newline only when the first newline is in its first half", () => {
    const d = dir();
    const snapped = "z".repeat(30_000) + "\n" + "q".repeat(1_200) + "\n" + "w".repeat(700);
    expect(parts(textOf(run([A("a"), toolResult("a", snapped)], d).messages[1]!), snapped.length).tail).toBe("w".repeat(700));
    const unsnapped = "z".repeat(30_000) + "\n" + "w".repeat(400);
    expect(parts(textOf(run([A("a"), toolResult("a", unsnapped)], d).messages[1]!), unsnapped.length).tail.length).toBe(1_000);
  });

  it("a cut never splits a surrogate pair", () => {
    const d = dir();
    const big = "😀".repeat(20_000);
    const p = parts(textOf(run([A("a"), toolResult("a", big)], d).messages[1]!), big.length);
    expect(p.head.length % 2).toBe(0);
    expect(p.tail.length % 2).toBe(0);
    expect(isWellFormed(p.head)).toBe(true);
    expect(isWellFormed(p.tail)).toBe(true);
  });

  it("a preview is never longer than the original: a small limit leaves a short result whole", () => {
    const d = dir();
    const small = lines(1_000, 6);
    const { messages, report } = run([A("a"), toolResult("a", small)], d, { maxResultChars: 100 });
    expect(textOf(messages[1]!)).toBe(small);
    expect(report.resultsTruncated).toBe(0);
    expect(readdirSync(d)).toEqual([]);
  });

  it("results outside a tool block (after prose) are ignored", () => {
    const d = dir();
    const big = lines(30_000, 7);
    const h = [A("a"), toolResult("a", "ok"), U("prose"), toolResult("x", big)];
    const { messages, report } = run(h, d);
    expect(messages).toBe(h);
    expect(report.totalToolResults).toBe(1);
  });
});

describe("enforceToolResultBudget — error lines in the omitted middle", () => {
  const log = (n: number, errorsAt: number[]) =>
    Array.from({ length: n }, (_, i) =>
      errorsAt.includes(i + 1) ? `line ${i + 1}: ERROR step ${i + 1} failed: exit 2` : `line ${i + 1}: compiled module ${i.toString(36)} ok`,
    ).join("\n") + "\n";

  it("lists lines of the cut part that mention errors, with their true line numbers", () => {
    const d = dir();
    const text = log(2_000, [1_000, 1_500]);
    const preview = textOf(run([A("a"), toolResult("a", text)], d).messages[1]!);
    expect(preview.split("\n", 1)[0]).toContain("lines in it that mention errors are listed where it is cut");
    expect(preview).toContain(
      "; lines in it that mention errors:\n1000: line 1000: ERROR step 1000 failed: exit 2\n1500: line 1500: ERROR step 1500 failed: exit 2\n...]",
    );
    const p = parts(preview, text.length);
    expect(p.head.length + p.omitted + p.tail.length).toBe(text.length);
  });

  it("does not list errors that are already visible in the head or tail, and lists at most eight", () => {
    const d = dir();
    const visible = log(2_000, [3, 1_999]);
    expect(textOf(run([A("a"), toolResult("a", visible)], d).messages[1]!)).not.toContain("mention errors");
    const many = log(
      2_000,
      Array.from({ length: 50 }, (_, i) => 500 + i * 10),
    );
    const listed = textOf(run([A("b"), toolResult("b", many)], d).messages[1]!).match(/^\d+: line \d+: ERROR/gm);
    expect(listed).toHaveLength(8);
  });
});

describe("enforceToolResultBudget — per tool caps", () => {
  it("a tool's own cap replaces the per-result limit: head all a's, tail without a's", () => {
    const d = dir();
    const s = "a".repeat(10_000) + "b".repeat(5_000) + "c".repeat(1_000);
    const h = [A("t"), toolResult("t", s, { toolName: "web_fetch" })];
    const { messages } = run(h, d, { toolCaps: { web_fetch: 8_000 } });
    const p = parts(textOf(messages[1]!), s.length);
    expect(textOf(messages[1]!)).toContain("Partial tool result");
    expect(p.head).toBe("a".repeat(4_000));
    expect(p.tail).not.toContain("a");
  });

  it("short and empty results pass through under a cap of 1000", () => {
    const d = dir();
    const h = [A("t", "u"), toolResult("t", "short"), toolResult("u", "")];
    expect(run(h, d, { toolCaps: { web_fetch: 1_000 } }).messages).toBe(h);
  });

  it("a higher cap (read: 80,000) keeps a 50,000-char result that the default would cut", () => {
    const d = dir();
    const big = lines(50_000, 8);
    const h: Message[] = [{ role: "assistant", content: [{ type: "toolCall", id: "r", name: "read", input: {} }] }, toolResult("r", big)];
    expect(run(h, d, { toolCaps: { read: 80_000 } }).messages).toBe(h);
    expect(run(h, d).messages).not.toBe(h);
  });

  it("a cap of 0 falls back to the per-result default, and an override of 12,345 wins", () => {
    const d = dir();
    const mid = lines(15_000, 9);
    const h = [A("t"), toolResult("t", mid)];
    expect(run(h, d, { toolCaps: { web_fetch: 0 } }).messages).toBe(h);
    expect(run(h, d, { toolCaps: { web_fetch: 12_345 } }).messages).not.toBe(h);
  });
});

describe("enforceToolResultBudget — per turn", () => {
  it("trims the largest results first until the turn fits, never below the 5,200 floor", () => {
    const d = dir();
    const sizes = [19_000, 18_000, 17_500, 19_500, 16_000, 18_500, 17_000, 19_900, 18_800, 17_900, 19_200, 5_000];
    const ids = sizes.map((_, i) => `c${i}`);
    const h: Message[] = [A(...ids), ...sizes.map((n, i) => toolResult(ids[i]!, lines(n, 100 + i)))];
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(200_000);
    const { messages, report } = run(h, d);
    const cut = messages
      .slice(1)
      .map((m, i) => (parseStub(textOf(m)) ? sizes[i]! : 0))
      .filter((n) => n > 0);
    const kept = sizes.filter((n) => !cut.includes(n));
    expect(Math.min(...cut)).toBeGreaterThanOrEqual(Math.max(...kept.filter((n) => n > 5_200)));
    expect(kept).toContain(5_000);
    expect(report.totalFinalChars).toBeLessThanOrEqual(200_000);
    expect(report.charsSaved).toBe(total - report.totalFinalChars);
  });
});

describe("enforceToolResultBudget — applied once and remembered", () => {
  it("a second pass returns the same array and writes no file", () => {
    const d = dir();
    const h = [A("a", "b"), toolResult("a", lines(60_000, 10)), toolResult("b", lines(25_000, 11)), say("done")];
    const first = run(h, d);
    const files = readdirSync(d).sort();
    const second = run(first.messages as Message[], d);
    expect(second.messages).toBe(first.messages);
    expect(second.report.resultsTruncated).toBe(0);
    expect(readdirSync(d).sort()).toEqual(files);
  });

  it("the same full history next turn produces byte-identical previews (prompt caches stay valid)", () => {
    const d = dir();
    const h = [U("go"), A("a"), toolResult("a", lines(60_000, 12)), say("ok")];
    const first = run(h, d);
    const next = run([...h, U("more"), A("b"), toolResult("b", "small")], d);
    expect(next.messages.slice(0, 4)).toEqual(first.messages);
    expect(next.report.filesSaved).toEqual([]);
  });

  it("a result whose full text is in a tool's spill file is referenced, not saved again", () => {
    const d = dir();
    const big = lines(40_000, 13);
    const h: Message[] = [A("a"), { ...toolResult("a", big), spillPath: "/ws/spill/a.log" }];
    const { messages, report } = run(h, d);
    expect(readdirSync(d)).toEqual([]);
    expect(report.resultsReferenced).toBe(1);
    expect(textOf(messages[1]!).split("\n", 1)[0]).toContain("/ws/spill/a.log");
  });

  it("a result that already carries an archive marker is referenced by it, not saved again", () => {
    const d = dir();
    const marker = formatMarker("0123456789abcdef");
    const big = `compressed view ${marker}\n` + lines(40_000, 14);
    const { messages, report } = run([A("a"), toolResult("a", big)], d);
    expect(readdirSync(d)).toEqual([]);
    expect(report.resultsReferenced).toBe(1);
    expect(parseStub(textOf(messages[1]!))?.keys).toEqual(["0123456789abcdef"]);
  });

  it("without a results directory the full text goes to the archive", () => {
    const archive = new MemoryArchive();
    const big = lines(30_000, 15);
    const { report } = enforceToolResultBudget([A("a"), toolResult("a", big)], { archive });
    expect(archive.get(report.keysSaved[0]!)).toBe(big);
  });

  it("when the full text cannot be saved the result is left whole and the error reported", () => {
    const d = dir();
    const blocked = join(d, "not-a-dir");
    writeFileSync(blocked, "x");
    chmodSync(blocked, 0o400);
    const big = lines(30_000, 16);
    const h = [A("a"), toolResult("a", big)];
    const { messages, report } = enforceToolResultBudget(h, { resultsDir: join(blocked, "results") });
    expect(messages).toBe(h);
    expect(report.errors[0]).toMatch(/could not be saved/);
  });
});
