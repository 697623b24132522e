// tracker.positions(path): how many places hold the container at `path` — what a producer that writes
// the raw state itself checks before stating its own ops.
import { describe, expect, it } from "vitest";
import { track, UnsafePathError } from "../../src/delta/index.js";

describe("tracker.positions", () => {
  it("counts the places of a container, follows aliases made and undone, and is 0 where no container is", () => {
    const t = track({ a: { b: [{ c: 1 }] }, n: 2, s: "x" } as Record<string, unknown>);
    t.flush();
    const s = t.state as { a: { b: { c: number }[] }; n: number; s: string; [k: string]: unknown };
    expect(t.positions(["a"])).toBe(1);
    expect(t.positions(["a", "b", 0])).toBe(1);
    s.other = s.a;
    expect(t.positions(["a"])).toBe(2);
    // Aliasing a parent multiplies its children's places.
    expect(t.positions(["a", "b", 0])).toBe(2);
    s.a.b.push(s.a.b[0]!);
    expect(t.positions(["a", "b", 1])).toBe(4);
    delete s.other;
    expect(t.positions(["a", "b", 0])).toBe(2);
    expect(t.positions(["n"])).toBe(0);
    expect(t.positions(["s"])).toBe(0);
    expect(t.positions(["missing", "x"])).toBe(0);
    expect(t.positions(["a", "b", 9])).toBe(0);
    expect(() => t.positions(["__proto__"])).toThrow(UnsafePathError);
  });
});
