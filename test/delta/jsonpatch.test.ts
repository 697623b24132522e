// toJsonPatch(before, ops): the same change as RFC 6902 operations (lossy: a/t become replace, p becomes
// remove/add runs). Oracle: fast-json-patch (devDependency) applying the patch to `before`.
import fc from "fast-check";
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { apply, toJsonPatch, track, type Op } from "../../src/delta/index.js";
import { json, runCmd, scriptArb, type Cmd } from "./helpers.js";

type Container = Record<string, unknown> | unknown[];

/** What a generic RFC 6902 client does with the patch: receive it as JSON, apply it strictly. */
function oracle(before: unknown, patch: unknown): unknown {
  const ops = JSON.parse(JSON.stringify(patch)) as jsonpatch.Operation[];
  const doc = before === undefined ? undefined : json(before);
  return jsonpatch.applyPatch(doc, ops, true, true).newDocument;
}

describe("toJsonPatch", () => {
  it("a and t become a replace carrying the whole new string", () => {
    const before = { out: "hello" };
    const ops: Op[] = [
      ["t", ["out"], 2],
      ["a", ["out"], "!"],
    ];
    const patch = toJsonPatch(before, ops);
    expect(patch.every((p) => p.op === "replace" && p.path === "/out")).toBe(true);
    expect(patch[patch.length - 1]).toEqual({ op: "replace", path: "/out", value: "llo!" });
    expect(oracle(before, patch)).toEqual({ out: "llo!" });
  });

  it("r becomes a replace of the whole document", () => {
    expect(toJsonPatch({ a: 1 }, [["r", { b: 2 }]])).toEqual([{ op: "replace", path: "", value: { b: 2 } }]);
  });

  it("s is add on a new key and replace on an existing one; d is remove", () => {
    const before = { a: 1, xs: [1] };
    const patch = toJsonPatch(before, [
      ["s", ["a"], 2],
      ["s", ["b"], 3],
      ["s", ["xs", 0], 5],
      ["s", ["xs", 1], 6],
      ["d", ["a"]],
    ]);
    expect(patch).toEqual([
      { op: "replace", path: "/a", value: 2 },
      { op: "add", path: "/b", value: 3 },
      { op: "replace", path: "/xs/0", value: 5 },
      { op: "add", path: "/xs/1", value: 6 },
      { op: "remove", path: "/a" },
    ]);
    expect(oracle(before, patch)).toEqual({ b: 3, xs: [5, 6] });
  });

  it("p becomes remove/add runs with clamped bounds, including at the root", () => {
    const before = [0, 1, 2, 3];
    const ops: Op[] = [
      ["p", [], 1, 2, ["a", "b", "c"]],
      ["p", [], 10, 99, ["end"]],
    ];
    const patch = toJsonPatch(before, ops);
    expect(patch.filter((p) => p.op === "remove")).toHaveLength(2);
    expect(patch.filter((p) => p.op === "add")).toHaveLength(4);
    expect(oracle(before, patch)).toEqual(apply(json(before), json(ops)));
  });

  it("escapes ~ and / in keys as RFC 6901 requires", () => {
    const before = { "a/b": { "c~d": 1 } };
    const patch = toJsonPatch(before, [["s", ["a/b", "c~d"], 2]]);
    expect(patch).toEqual([{ op: "replace", path: "/a~1b/c~0d", value: 2 }]);
    expect(oracle(before, patch)).toEqual({ "a/b": { "c~d": 2 } });
  });

  it("a d on a key that does not exist emits no remove (RFC 6902 remove needs an existing target)", () => {
    // The tracker legitimately emits d for set-then-delete of a key that was absent at the last flush.
    const t = track<{ c?: number }>({});
    t.flush();
    t.state.c = 0;
    delete t.state.c;
    const ops = t.flush();
    expect(ops).toEqual([["d", ["c"]]]);
    const patch = toJsonPatch({}, ops);
    expect(patch).toEqual([]);
    expect(oracle({}, patch)).toEqual({});
  });

  it("does not modify before", () => {
    const before = { s: "x", xs: [1, 2], o: { k: 1 } };
    toJsonPatch(before, [
      ["a", ["s"], "y"],
      ["p", ["xs"], 0, 1, []],
      ["s", ["o", "k"], 2],
    ]);
    expect(before).toEqual({ s: "x", xs: [1, 2], o: { k: 1 } });
  });

  it("over random tracker scripts, fast-json-patch applying the patch to before gives the same value as our apply", () => {
    let patches = 0;
    fc.assert(
      fc.property(scriptArb({ discard: false }, 40), ({ init, cmds }) => {
        const t = track(json(init));
        let replica: unknown;
        const step = () => {
          const ops = json(t.flush());
          const before = replica === undefined ? undefined : json(replica);
          const patch = toJsonPatch(before, ops);
          replica = apply(replica as object, json(ops));
          expect(oracle(before, patch)).toEqual(replica);
          expect(replica).toEqual(json(t.target));
          patches++;
        };
        step();
        const held: Container[] = [];
        for (const cmd of cmds as Cmd[]) runCmd(t, cmd, held, step);
        step();
      }),
      { numRuns: 500 },
    );
    expect(patches).toBeGreaterThan(1000);
  });
});
