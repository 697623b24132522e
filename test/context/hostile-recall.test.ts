// Issue 11 §2: the model controls recall's key and grep arguments and can plant links in the
// workspace. One test per defect measured on 9458ce5, named after it.
import { execFileSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { archiveKey, createWorkspace, extractRecallKeys, MemoryArchive, readOnlyLookup, recall, RecallError, WorkspaceError } from "../../src/context/index.js";
import { createHarness, createReadTool, createRecallTool } from "../../src/harness/index.js";
import { createMemoryStore } from "../../src/store/index.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);
const dir = (): string => tempDir("spool-hostile-");

/** Best of several runs, in ms: the steady cost of `fn`, not a scheduler hiccup. */
function bestMs(fn: () => void, runs = 5): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

describe("ReDoS in --grep", () => {
  const store = new MemoryArchive();
  const key = store.put(`${"a".repeat(28)}!\nbbb\n`);

  it("(a+)+$ over a 28-character line answers at once instead of backtracking for minutes", () => {
    const t = performance.now();
    const result = recall(key, store, { grep: "(a+)+$" });
    expect(performance.now() - t).toBeLessThan(1000);
    expect(result.text).toContain("0 line(s) matching /(a+)+$/");
  });

  it("the harness recall tool returns within 1 s with the pathological pattern", async () => {
    const ws = createWorkspace({ root: dir(), env: {} });
    const k = ws.archive.put(`${"a".repeat(30)}!\n`.repeat(50));
    const harness = createHarness({ store: createMemoryStore(), workspace: ws, tools: [createRecallTool()] });
    const t = performance.now();
    const [res] = await harness.runTools("op-1", [{ toolCallId: "c1", toolName: "recall", args: { key: k, grep: "^(a|aa)+$" } }]);
    expect(performance.now() - t).toBeLessThan(1000);
    expect(res!.isError).toBe(false);
  });

  it('arguments of the wrong JSON type through the recall tool say what they got: a quoted "5", and no RE2 internals for a number as grep', async () => {
    const ws = createWorkspace({ root: dir(), env: {} });
    const k = ws.archive.put("one\ntwo\n");
    const harness = createHarness({ store: createMemoryStore(), workspace: ws, tools: [createRecallTool()] });
    let n = 0;
    const answer = async (args: Record<string, unknown>): Promise<string> => {
      n++;
      const [res] = await harness.runTools(`op-${n}`, [{ toolCallId: `c${n}`, toolName: "recall", args: { key: k, ...args } }]);
      expect(res!.isError).toBe(true);
      return (res!.content[0] as { text: string }).text;
    };
    expect(await answer({ offset: "5" })).toBe('offset must be a line number, a whole number of 1 or more, got "5".');
    expect(await answer({ limit: "10" })).toBe('limit must be a whole number of 1 or more (lines), got "10".');
    expect(await answer({ grep: 5 })).toBe("grep must be a string (a regular expression or a plain word), got 5.");
    expect(await answer({ grep: ["a"], offset: 0 })).toMatch(/^offset must be a line number/);
    // What the model sent comes back clipped: a 1 MB string, a long array.
    expect(await answer({ offset: "7".repeat(1_000_000) })).toBe(`offset must be a line number, a whole number of 1 or more, got "${"7".repeat(58)}….`);
    expect((await answer({ grep: Array.from({ length: 10_000 }, (_, i) => i) })).length).toBeLessThan(140);
  });

  it("a grep past its time budget answers with what it found and where to resume", () => {
    const big = store.put(Array.from({ length: 200_000 }, (_, i) => `line ${i} ${i % 7 === 0 ? "hit" : "miss"}`).join("\n"));
    const result = recall(big, store, { grep: "hit", limit: 1_000_000, grepBudgetMs: 0 });
    expect(result.text).toMatch(/stopped at its time budget \(0 ms\)\. Next: recall <<ccr:[0-9a-f]{16}>> grep="hit" offset=\d+/);
  });

  it("an abort interrupts a grep scan with a clear error", () => {
    const big = store.put("x".repeat(100) + "\n".repeat(1) + "y\n".repeat(100_000));
    const ac = new AbortController();
    ac.abort();
    expect(() => recall(big, store, { grep: "y", limit: 1_000_000, signal: ac.signal })).toThrow(/grep over <<ccr:[0-9a-f]{16}>> was aborted at line/);
  });

  it("patterns RE2 cannot run linearly (backreferences, lookaround) and overlong ones are clear errors", () => {
    for (const grep of ["(a)\\1", "a(?=b)", "(?<!x)y", "x".repeat(1001)]) {
      let err: unknown;
      try {
        recall(key, store, { grep });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(RecallError);
      expect((err as RecallError).code).toBe("SPOOL_RECALL_OPTION");
    }
  });

  it("JS-style /re/flags still work (i, m, s; g and y ignored)", () => {
    const k = store.put("Alpha\nbeta\nALPHA\n");
    expect(recall(k, store, { grep: "/alpha/gi" }).text).toContain("1: Alpha\n3: ALPHA");
  });
});

describe("Quadratic key extraction", () => {
  const garbage: [string, (n: number) => string][] = [
    ["spaces then x", (n) => " ".repeat(n) + "x"],
    ["ccr: then spaces", (n) => "ccr:" + " ".repeat(n)],
    ["repeated ccr:", (n) => "ccr:".repeat(n / 4)],
    ["repeated <", (n) => "<".repeat(n)],
    ["a JSON key of spaces", (n) => `{"key":"${" ".repeat(n)}x"}`],
    ["spaces between quotes", (n) => `"${" ".repeat(n)}x"`],
  ];

  it.each(garbage)("%s: 1 MB is rejected fast, and cost grows linearly (100 KB vs 1 MB)", (_name, make) => {
    const small = make(100_000);
    const large = make(1_000_000);
    const tSmall = bestMs(() => expect(extractRecallKeys(small)).toEqual([]));
    const tLarge = bestMs(() => expect(extractRecallKeys(large)).toEqual([]));
    // Linear is ~10x for 10x the input; quadratic is ~100x. The bounds are generous (timing noise on
    // a shared machine); bench/context.bench.mjs reports the real figures. The small run is floored at
    // 0.25 ms: near 0.1 ms one descheduling tipped the ratio to 52 (a loaded CI run); quadratic work on
    // 100 KB would take seconds, far past both bounds.
    expect(tLarge).toBeLessThan(500);
    expect(tLarge / Math.max(tSmall, 0.25)).toBeLessThan(50);
  });

  it("the recall error for 1 MB of garbage is one clipped line", () => {
    expect(() => recall(" ".repeat(1_000_000) + "x", new MemoryArchive())).toThrow(/^no archive key found in ".{0,130}"/);
  });

  it("more than 64 distinct keys in one call is a clear error, not 64+ lookups", () => {
    const payload = Array.from({ length: 100 }, (_, i) => `<<ccr:${archiveKey(String(i))}>>`).join(" ");
    expect(() => recall(payload, new MemoryArchive())).toThrow(/100 keys in one call; the limit is 64/);
  });
});

describe("Symlinks in archive/ and results/", () => {
  function planted(): { ws: ReturnType<typeof createWorkspace>; key: string; secret: string } {
    const root = dir();
    const secret = join(root, "secret.txt");
    writeFileSync(secret, "root:x:0:0:secret\n");
    const ws = createWorkspace({ root, sessionId: "s", env: {} });
    return { ws, key: archiveKey("whatever"), secret };
  }

  for (const where of ["archive", "results"] as const) {
    it(`a link in ${where}/ to a file outside is refused by recall, Workspace.get, readOnlyLookup and canRead alike`, () => {
      const { ws, key, secret } = planted();
      const link = where === "archive" ? join(ws.archiveDir, `${key}.ccr`) : join(ws.resultsDir, `${key}.txt`);
      symlinkSync(secret, link);
      expect(ws.canRead(link)).toBe(false);
      for (const read of [() => ws.get(key), () => readOnlyLookup(ws.dir).get(key), () => recall(key, ws), () => ws.readText(link)]) {
        let err: unknown;
        try {
          read();
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(WorkspaceError);
        expect((err as WorkspaceError).code).toBe("SPOOL_WORKSPACE_OUTSIDE");
        expect(String(err)).not.toContain("root:x");
      }
    });
  }

  it("a link that stays inside the workspace reads the same through every path", () => {
    const { ws, key } = planted();
    const text = "kept inside";
    const k = archiveKey(text);
    writeFileSync(join(ws.spillDir, "real.txt"), text);
    symlinkSync(join(ws.spillDir, "real.txt"), join(ws.resultsDir, `${k}.txt`));
    expect(ws.canRead(join(ws.resultsDir, `${k}.txt`))).toBe(true);
    expect(ws.get(k)).toBe(text);
    expect(readOnlyLookup(ws.dir).get(k)).toBe(text);
    expect(recall(k, ws).text).toBe(text);
    expect(ws.get(key)).toBeUndefined();
  });

  it("a FIFO planted under an archive name is refused, not blocked on", () => {
    const { ws, key } = planted();
    execFileSync("mkfifo", [join(ws.archiveDir, `${key}.ccr`)]);
    expect(() => ws.get(key)).toThrow(/not a regular file/);
    expect(() => readOnlyLookup(ws.dir).get(key)).toThrow(/not a regular file/);
  });

  it("put() replaces a planted link with the real entry and never touches the target", () => {
    const { ws, secret } = planted();
    const text = "the real entry";
    const k = archiveKey(text);
    symlinkSync(secret, join(ws.archiveDir, `${k}.ccr`));
    expect(ws.archive.put(text)).toBe(k);
    expect(ws.get(k)).toBe(text);
    expect(execFileSync("cat", [secret], { encoding: "utf8" })).toBe("root:x:0:0:secret\n");
  });
});

describe("Symlinks in spill/: the read tool follows the same rule", () => {
  it("a link out of the workspace and a FIFO are refused with a clear error, a file inside is read", async () => {
    const root = dir();
    const secret = join(root, "secret.txt");
    writeFileSync(secret, "root:x:0:0:secret\n");
    const ws = createWorkspace({ root, sessionId: "s", env: {} });
    symlinkSync(secret, join(ws.spillDir, "out.log"));
    execFileSync("mkfifo", [join(ws.spillDir, "pipe.log")]);
    writeFileSync(join(ws.spillDir, "ok.log"), "fine\n");
    const harness = createHarness({ store: createMemoryStore(), workspace: ws, tools: [createReadTool()] });
    const results = await harness.runTools("op-1", [
      { toolCallId: "c1", toolName: "read", args: { path: "spill/out.log" } },
      { toolCallId: "c2", toolName: "read", args: { path: "spill/pipe.log" } },
      { toolCallId: "c3", toolName: "read", args: { path: "spill/ok.log" } },
    ]);
    const text = (i: number): string => JSON.stringify(results[i]!.content);
    expect(results[0]!.isError).toBe(true);
    expect(text(0)).toContain("outside it");
    expect(text(0)).not.toContain("root:x");
    expect(results[1]!.isError).toBe(true);
    expect(text(1)).toContain("not a regular file");
    expect(results[2]!.isError).toBe(false);
    expect(text(2)).toContain("fine");
  });
});
