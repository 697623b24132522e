import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  ConfigError,
  createWorkspace,
  extractKeys,
  MemoryArchive,
  prepareHistory,
  recall,
  SYNTHETIC_RESULT_TEXT,
  textOf,
  toolResult,
  validatePairing,
  type Message,
} from "../../src/context/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { A, lines, say, U } from "./helpers.js";

afterAll(removeTempDirs);

function damaged(): Message[] {
  return [
    U("start"),
    toolResult("ghost", "an orphan result nobody asked for"),
    A("r1", "r2", "r3"),
    toolResult("r1", lines(60_000, 1)),
    U("interposed feedback"),
    toolResult("r2", lines(9_000, 2)),
    say("turn 1 done"),
    U("go on"),
    A("r4"),
    toolResult("r4", "small"),
    say("turn 2 done"),
    U("again"),
    say("turn 3"),
    U("and again"),
    say("turn 4"),
    U("last"),
    say("turn 5"),
  ];
}

describe("prepareHistory", () => {
  it("repairs pairing, budgets, then compacts, and reports all of it in one report", () => {
    const ws = createWorkspace({ root: tempDir("spool-context-"), sessionId: "p", env: {} });
    const { messages, report } = prepareHistory(damaged(), { workspace: ws, env: {} });
    expect(validatePairing(messages)).toEqual([]);
    expect(report.pairing.orphanResultsRemoved).toBe(1);
    expect(report.pairing.resultsRelocated).toBe(1);
    expect(report.pairing.syntheticResultsInjected).toBe(1);
    expect(report.budget.resultsTruncated).toBe(1);
    expect(report.microcompact.summarized).toBe(2);
    expect(report.filesSaved).toHaveLength(1);
    expect(existsSync(report.filesSaved[0]!)).toBe(true);
    expect(report.charsAfter).toBeLessThan(report.charsBefore / 50);
    expect(report.changed).toBe(true);
    const tools = messages.filter((m) => m.role === "tool").map(textOf);
    expect(tools[2]).toBe(SYNTHETIC_RESULT_TEXT);
    expect(tools[0]).toMatch(/^\[Old tool result cleared — \d+ lines, 60000 chars, /);
    expect(recall(tools[0]!, ws).text).toBe(lines(60_000, 1));
    expect(recall(tools[1]!, ws).text).toBe(lines(9_000, 2));
    expect(readFileSync(report.filesSaved[0]!, "utf8")).toBe(lines(60_000, 1));
  });

  it("archives the text of orphan results it removes, so they can still be recalled", () => {
    const archive = new MemoryArchive();
    const { report } = prepareHistory(damaged(), { archive, env: {} });
    expect(report.orphanKeys).toHaveLength(1);
    expect(recall(report.orphanKeys[0]!, archive).text).toBe("an orphan result nobody asked for");
    expect(report.keysArchived).toContain(report.orphanKeys[0]);
  });

  it("a second pass over its output returns the same array and archives nothing new", () => {
    const archive = new MemoryArchive();
    const first = prepareHistory(damaged(), { archive, env: {} });
    const entries = archive.stats().entries;
    const second = prepareHistory(first.messages, { archive, env: {} });
    expect(second.messages).toBe(first.messages);
    expect(second.report.changed).toBe(false);
    expect(second.report.keysArchived).toEqual([]);
    expect(archive.stats().entries).toBe(entries);
  });

  it("every marker in the output resolves through recall", () => {
    const archive = new MemoryArchive();
    const { messages } = prepareHistory(damaged(), { archive, env: {} });
    for (const key of extractKeys(messages.map(textOf).join("\n"))) expect(archive.get(key)).toBeDefined();
  });

  it("without a workspace or archive it refuses with a ConfigError instead of losing text", () => {
    expect(() => prepareHistory(damaged(), { env: {} })).toThrow(ConfigError);
    expect(() => prepareHistory(damaged(), { env: {} })).toThrow(/pass \{ workspace \}/);
  });

  it("across turns and a resume, earlier messages only change when they age a level — prompt caches stay valid", () => {
    const root = tempDir("spool-context-");
    const full: Message[] = [];
    let previous: readonly Message[] = [];
    let aged = 0;
    let stable = 0;
    for (let turn = 0; turn < 8; turn++) {
      full.push(U(`turn ${turn}`), A(`c${turn}`), toolResult(`c${turn}`, lines(turn % 2 === 0 ? 45_000 : 4_000, turn)), say(`done ${turn}`));
      // a fresh workspace object every turn, as after a process restart on the same session directory
      const ws = createWorkspace({ root, sessionId: "resume", env: {} });
      const out = prepareHistory(full, { workspace: ws, env: {} }).messages;
      previous.forEach((before, i) => {
        const after = out[i]!;
        if (JSON.stringify(after) === JSON.stringify(before)) {
          if (textOf(before).startsWith("[Partial tool result")) stable++;
          return;
        }
        aged++;
        expect(after.role, `message ${i} changed at turn ${turn}`).toBe("tool");
        expect(textOf(after)).toMatch(/^\[Old tool result (truncated|cleared) — /);
        expect(textOf(before)).not.toBe(textOf(after));
      });
      previous = out;
    }
    expect(readdirSync(join(root, "resume", "results"))).toHaveLength(4);
    expect(aged).toBeGreaterThan(0);
    expect(stable).toBeGreaterThan(0);
  });

  it("the turn option ages results as of that turn", () => {
    const archive = new MemoryArchive();
    const h = [U("a"), A("x"), toolResult("x", lines(9_000, 3)), say("b")];
    expect(prepareHistory(h, { archive, env: {} }).report.changed).toBe(false);
    expect(prepareHistory(h, { archive, env: {}, turn: 3 }).report.microcompact.truncated).toBe(1);
    expect(prepareHistory(h, { archive, env: {}, turn: 5 }).report.microcompact.summarized).toBe(1);
  });
});
