// Explicit edits (tracker.append / tracker.truncate / tracker.set): the op-recording path a producer
// uses when it knows what changed. Random sequences of explicit appends, front-truncates, sets, generic
// assignments and structural writes must fold to the same value as the same sequence done by
// assignment only, and every replica fed through the wire codec must equal its producer after every
// flush. The sequences mix windows of leaf writes only (the tracker's leaf lane) with windows where a
// structural write comes after them (the lane spills into the pending log).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NotJsonError, PathError, track, UnsafePathError, type NonEmptyPath } from "../../src/delta/index.js";
import { json, Pipe } from "./helpers.js";

const LONG = Boolean(process.env.SPOOL_LONG);

interface Doc {
  content: { type: string; text: string }[];
  meta: { title: string; n: number; extra?: number | string | null };
}

const initial = (): Doc => ({
  content: [
    { type: "text", text: "ab\ncd\n" },
    { type: "text", text: "xyz" },
  ],
  meta: { title: "t", n: 0 },
});

// The string slots a command can address; content entries may move or vanish, so a command whose slot
// is gone is skipped on both sides alike.
const SLOTS: readonly NonEmptyPath[] = [
  ["content", 0, "text"],
  ["content", 1, "text"],
  ["meta", "title"],
];

type Cmd =
  | { k: "append"; slot: number; text: string }
  | { k: "truncate"; slot: number; frac: number }
  | { k: "assign"; slot: number; text: string; how: "append" | "slide" | "any" }
  | { k: "push"; text: string }
  | { k: "unshift"; text: string }
  | { k: "shift" }
  | { k: "setMeta" }
  | { k: "bump" }
  | { k: "alias" }
  | { k: "set"; what: "n" | "title" | "extra"; v: number | string | boolean | null }
  | { k: "many"; n: number }
  | { k: "flush" };

const META_PATHS = { n: ["meta", "n"], title: ["meta", "title"], extra: ["meta", "extra"] } as const satisfies Record<string, NonEmptyPath>;
const textArb = fc.string({ unit: fc.constantFrom("a", "b", "\n", "é", "😀", "z"), maxLength: 6 });
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ k: fc.constant("append" as const), slot: fc.nat(2), text: textArb }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant("truncate" as const), slot: fc.nat(2), frac: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("assign" as const),
      slot: fc.nat(2),
      text: textArb,
      how: fc.constantFrom("append" as const, "slide" as const, "any" as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("push" as const), text: textArb }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("unshift" as const), text: textArb }) },
  { weight: 1, arbitrary: fc.constant({ k: "shift" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "setMeta" as const }) },
  { weight: 2, arbitrary: fc.constant({ k: "bump" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "alias" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("set" as const),
      what: fc.constantFrom("n" as const, "title" as const, "extra" as const),
      v: fc.oneof(fc.integer({ min: -5, max: 5 }), textArb, fc.constant(null), fc.boolean()),
    }),
  },
  // More slots in one window than the lane keeps: the rest goes to the log.
  { weight: 1, arbitrary: fc.record({ k: fc.constant("many" as const), n: fc.integer({ min: 60, max: 70 }) }) },
  { weight: 3, arbitrary: fc.constant({ k: "flush" as const }) },
);

/** The string at `path` in `doc`, or undefined when the slot does not exist (or is not a string). */
function at(doc: unknown, path: NonEmptyPath): string | undefined {
  let node = doc as Record<string | number, unknown> | undefined;
  for (const seg of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = node[seg] as Record<string | number, unknown> | undefined;
  }
  return typeof node === "string" ? node : undefined;
}

/** Apply one command; `explicit` selects tracker.append/truncate over assignment for the string edits. */
function run(p: Pipe<Doc>, cmd: Cmd, explicit: boolean, counter: { n: number }): void {
  const s = p.state;
  const parentOf = (path: NonEmptyPath) => {
    let node: Record<string | number, unknown> = s as unknown as Record<string | number, unknown>;
    for (const seg of path.slice(0, -1)) node = node[seg] as Record<string | number, unknown>;
    return node;
  };
  switch (cmd.k) {
    case "append": {
      const path = SLOTS[cmd.slot]!;
      const cur = at(p.tracker.target, path);
      if (cur === undefined) return;
      if (explicit) p.tracker.append(path, cmd.text);
      else parentOf(path)[path[path.length - 1]!] = cur + cmd.text;
      return;
    }
    case "truncate": {
      const path = SLOTS[cmd.slot]!;
      const cur = at(p.tracker.target, path);
      if (cur === undefined) return;
      const count = Math.floor(cmd.frac * cur.length);
      if (explicit) p.tracker.truncate(path, count);
      else parentOf(path)[path[path.length - 1]!] = cur.slice(count);
      return;
    }
    case "assign": {
      const path = SLOTS[cmd.slot]!;
      const cur = at(p.tracker.target, path);
      if (cur === undefined) return;
      const next = cmd.how === "append" ? cur + cmd.text : cmd.how === "slide" ? cur.slice(1) + cmd.text : cmd.text;
      parentOf(path)[path[path.length - 1]!] = next;
      return;
    }
    case "push":
      s.content.push({ type: "text", text: cmd.text });
      return;
    case "unshift":
      s.content.unshift({ type: "text", text: cmd.text });
      return;
    case "shift":
      s.content.shift();
      return;
    case "setMeta":
      s.meta = { title: `m${counter.n++}`, n: s.meta.n };
      return;
    case "bump":
      s.meta.n++;
      return;
    case "set": {
      // title stays a string (a string slot addresses it), n a number (bump increments it); extra takes anything.
      const v = cmd.what === "title" ? String(cmd.v) : cmd.what === "n" ? (typeof cmd.v === "number" ? cmd.v : 0) : cmd.v;
      // One array per path, as a producer keeps them: the tracker's slot cache (and its fast path for
      // a counter the lane already holds) is keyed by the array.
      if (explicit) p.tracker.set(META_PATHS[cmd.what], v);
      else (s.meta as Record<string, unknown>)[cmd.what] = v;
      return;
    }
    case "many":
      for (let i = 0; i < cmd.n; i++) {
        const path: NonEmptyPath = ["meta", `k${i}`];
        if (explicit) p.tracker.set(path, counter.n + i);
        else (s.meta as Record<string, unknown>)[`k${i}`] = counter.n + i;
      }
      counter.n++;
      return;
    case "alias":
      // The same block at two positions: every explicit edit must then reach both.
      if (s.content.length > 0) s.content.push(s.content[0]!);
      return;
    case "flush":
      p.sync();
      return;
  }
}

describe("explicit string edits (append/truncate) against the generic assignment path", () => {
  it(
    `random sequences of explicit appends, truncates, assignments and structural writes fold to the generic path's value (${LONG ? "50 000" : "1 500"} sequences)`,
    () => {
      let explicitOps = 0;
      fc.assert(
        fc.property(fc.array(cmdArb, { maxLength: 50 }), (cmds) => {
          const a = new Pipe<Doc>(initial());
          const b = new Pipe<Doc>(initial());
          a.sync();
          b.sync();
          const ca = { n: 0 };
          const cb = { n: 0 };
          for (const cmd of cmds) {
            run(a, cmd, true, ca);
            run(b, cmd, false, cb);
            expect(json(a.tracker.target)).toEqual(json(b.tracker.target));
          }
          a.sync();
          b.sync();
          expect(a.replica).toEqual(b.replica);
          for (const batch of a.batches) for (const op of batch) if (op[0] === "a" || op[0] === "t") explicitOps++;
        }),
        { numRuns: LONG ? 50_000 : 1_500 },
      );
      // The generator must actually produce explicit ops on the wire, not only bases and sets.
      expect(explicitOps).toBeGreaterThan(1_000);
    },
    LONG ? 3_600_000 : 60_000,
  );

  it("an explicit append flushes as one `a` op and a front-truncate plus append as `t` then `a`", () => {
    const p = new Pipe<Doc>(initial());
    p.sync();
    p.tracker.append(["content", 0, "text"], "ef\n");
    expect(p.sync()).toEqual([["a", ["content", 0, "text"], "ef\n"]]);
    p.tracker.truncate(["content", 0, "text"], 3);
    p.tracker.append(["content", 0, "text"], "g");
    p.tracker.append(["content", 0, "text"], "h");
    expect(p.sync()).toEqual([
      ["t", ["content", 0, "text"], 3],
      ["a", ["content", 0, "text"], "gh"],
    ]);
    expect(p.tracker.target.content[0]!.text).toBe("cd\nef\ngh");
  });

  it("a truncate that reaches into text appended in the same window drops the old value and cuts the new text", () => {
    const p = new Pipe<Doc>(initial());
    p.sync();
    p.tracker.append(["meta", "title"], "uvw");
    p.tracker.truncate(["meta", "title"], 2);
    expect(p.tracker.target.meta.title).toBe("vw");
    expect(p.sync()).toEqual([
      ["t", ["meta", "title"], 1],
      ["a", ["meta", "title"], "vw"],
    ]);
  });

  it("an assignment after explicit edits is diffed against the value the edits produced", () => {
    const p = new Pipe<Doc>(initial());
    p.sync();
    p.tracker.append(["content", 1, "text"], "123");
    p.state.content[1]!.text += "456";
    expect(p.sync()).toEqual([
      ["a", ["content", 1, "text"], "123"],
      ["a", ["content", 1, "text"], "456"],
    ]);
  });

  it("explicit edits before the first flush or after a rebase ride in the base batch", () => {
    const p = new Pipe<Doc>(initial());
    p.tracker.append(["content", 0, "text"], "z");
    const ops = p.sync();
    expect(ops).toHaveLength(1);
    expect(ops[0]![0]).toBe("r");
    p.tracker.rebase();
    p.tracker.truncate(["content", 0, "text"], 1);
    expect(p.sync()[0]![0]).toBe("r");
  });

  it("set() records what the same assignment through state records, with the same checks", () => {
    const p = new Pipe<Doc>(initial());
    p.sync();
    p.tracker.set(["meta", "n"], 5);
    p.tracker.set(["meta", "title"], "tx");
    p.tracker.set(["meta", "extra"], null);
    expect(p.sync()).toEqual([
      ["s", ["meta", "n"], 5],
      ["a", ["meta", "title"], "x"],
      ["s", ["meta", "extra"], null],
    ]);
    // A container over a container is diffed, as an assignment is.
    const q = new Pipe<Doc>(initial());
    q.sync();
    p.tracker.set(["content", 1], { type: "text", text: "new" });
    q.state.content[1] = { type: "text", text: "new" };
    p.tracker.set(["content", 2], { type: "image", text: "" });
    q.state.content[2] = { type: "image", text: "" };
    p.tracker.set(["content", 1, "text"], "newer");
    q.state.content[1]!.text = "newer";
    expect(p.sync()).toEqual(q.sync());
    const t = p.tracker;
    expect(() => t.set(["meta", "n"], Number.NaN)).toThrow(NotJsonError);
    expect(() => t.set(["meta", "n"], () => 1)).toThrow(NotJsonError);
    expect(() => t.set(["__proto__", "polluted"], 1)).toThrow(UnsafePathError);
    expect(() => t.set(["missing", "x"], 1)).toThrow(/nothing at \["missing"\]/);
    expect(() => t.set(["content", "0"], 1)).toThrow(PathError);
    expect(() => t.set(["content", 5], 1)).toThrow(/holes/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(p.sync()).toEqual([]);
  });

  it("a path array changed in place after a set is resolved again, not taken from the cache", () => {
    const p = new Pipe<Doc>(initial());
    p.sync();
    const path: [string, string] = ["meta", "n"];
    p.tracker.set(path, 1);
    path[1] = "title";
    p.tracker.set(path, "changed");
    p.sync();
    expect(p.replica!.meta).toEqual({ title: "changed", n: 1 });
  });

  it("leaf writes before and after a structural write in one window keep the log's order", () => {
    const p = new Pipe<Doc>(initial());
    p.sync();
    p.state.meta.n = 1;
    p.tracker.append(["content", 0, "text"], "x");
    // An insertion before the end moves elements, so it is recorded in the log (a push at the end is not).
    p.state.content.splice(1, 0, { type: "text", text: "p" });
    p.state.meta.n = 2;
    p.tracker.append(["content", 0, "text"], "y");
    // The second set kills the first; the splice retires the text's entry, so the appends stay apart.
    expect(p.sync()).toEqual([
      ["a", ["content", 0, "text"], "x"],
      ["p", ["content"], 1, 0, [{ type: "text", text: "p" }]],
      ["s", ["meta", "n"], 2],
      ["a", ["content", 0, "text"], "y"],
    ]);
  });

  it("a block pushed again (an alias), edited explicitly, then assigned, is stated once on the wire", () => {
    // Found by the property above when pushes at an array's end went to the lane: the edit reached
    // the pushed copy twice (folded into the items, and again as its own op).
    const p = new Pipe<Doc>(initial());
    p.sync();
    p.state.content.push(p.state.content[0]!);
    p.tracker.append(["content", 0, "text"], "a");
    p.state.content[0]!.text = `${p.state.content[0]!.text}`;
    p.sync();
    expect(p.replica!.content[2]!.text).toBe(p.tracker.target.content[0]!.text);
  });

  it("thousands of slides within one window (no flush) fold into one t and one a", () => {
    const p = new Pipe<Doc>(initial());
    p.sync();
    const path: NonEmptyPath = ["content", 0, "text"];
    let model = p.tracker.target.content[0]!.text;
    for (let i = 0; i < 5000; i++) {
      const chunk = `${i.toString(36)}\n`;
      p.tracker.append(path, chunk);
      model += chunk;
      const drop = Math.min(model.length, (i * 7) % 11);
      p.tracker.truncate(path, drop);
      model = model.slice(drop);
    }
    const ops = p.sync();
    expect(ops.map((op) => op[0])).toEqual(["t", "a"]);
    expect(p.tracker.target.content[0]!.text).toBe(model);
  });

  it("rejects a path that does not lead to a string, a bad count, a non-string text and reserved segments with clear errors", () => {
    const t = track<Doc>(initial());
    expect(() => t.append(["meta", "n"], "x")).toThrow(PathError);
    expect(() => t.append(["meta", "n"], "x")).toThrow(/expected a string, found number/);
    expect(() => t.append(["missing", "x"], "x")).toThrow(/nothing at \["missing"\]/);
    expect(() => t.append(["content", 9, "text"], "x")).toThrow(PathError);
    expect(() => t.append([] as unknown as NonEmptyPath, "x")).toThrow(PathError);
    expect(() => t.append(["__proto__", "x"], "x")).toThrow(UnsafePathError);
    expect(() => t.append(["meta", "title"], 5 as unknown as string)).toThrow(/append\(\) takes a string/);
    expect(() => t.truncate(["meta", "title"], 2)).toThrow(RangeError);
    expect(() => t.truncate(["meta", "title"], -1)).toThrow(RangeError);
    expect(() => t.truncate(["meta", "title"], 0.5)).toThrow(/integer from 0 to the string's length 1/);
    expect(t.target.meta.title).toBe("t");
  });
});
