import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headTail, isWellFormed, parseStub } from "../../src/context/index.js";
import { errorLines } from "../../src/context/error-lines.js";
import { buildPreview, buildSummary } from "../../src/context/stubs.js";

const key = fc.stringMatching(/^[0-9a-f]{16}$/);

describe("head/tail cuts", () => {
  it("head + omitted + tail is the whole text; head and tail are its ends; no cut splits a surrogate pair", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.oneof(fc.constantFrom("\n", "a", "😀", "é"), fc.string({ unit: "grapheme", maxLength: 1 })), maxLength: 400 }),
        fc.nat(300),
        fc.nat(300),
        (text, h, t) => {
          const cut = headTail(text, h, t);
          expect(cut.head.length + cut.omitted + cut.tail.length).toBe(text.length);
          expect(text.startsWith(cut.head)).toBe(true);
          expect(text.endsWith(cut.tail)).toBe(true);
          expect(cut.head.length).toBeLessThanOrEqual(Math.max(h, 0));
          expect(cut.tail.length).toBeLessThanOrEqual(Math.max(t, 0));
          if (isWellFormed(text)) {
            expect(isWellFormed(cut.head)).toBe(true);
            expect(isWellFormed(cut.tail)).toBe(true);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe("stubs", () => {
  it("a preview parses back to the original's size, lines, kind and origin", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 500, maxLength: 3_000 }),
        fc.array(key, { maxLength: 2 }),
        fc.option(fc.constantFrom("/ws/results/x.txt", "/tmp/a b/spill.log"), { nil: undefined }),
        (text, keys, path) => {
          const origin = path === undefined ? { keys } : { keys, path };
          const preview = buildPreview("partial", text, 100, 50, origin, "text");
          if (preview === undefined) return;
          const parsed = parseStub(preview)!;
          expect(parsed).toMatchObject({ level: "partial", chars: text.length, kind: "text", keys });
          expect(parsed.path).toBe(path);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a preview of one line cut in two says so (it read 'lines 1-1 and 1-1 of 1'), and parses back", () => {
    const text = `{"data":[${Array.from({ length: 400 }, (_, i) => i).join(",")}]}`;
    const preview = buildPreview("partial", text, 100, 50, { keys: [] }, "JSON")!;
    expect(preview.split("\n")[0]).toMatch(/^\[Partial tool result — showing the start and the end of line 1 of 1 \(\d+ chars, JSON\)\. /);
    expect(parseStub(preview)).toMatchObject({ level: "partial", lines: 1, chars: text.length, kind: "JSON" });
  });

  it("a summary parses back exactly", () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.constantFrom("JSON", "Go source", "text"), fc.array(key, { maxLength: 3 }), (lines, chars, kind, keys) => {
        const parsed = parseStub(buildSummary({ lines, chars, kind }, { keys }));
        expect(parsed).toEqual({ level: "cleared", lines, chars, kind, keys });
      }),
      { numRuns: 300 },
    );
  });

  it("a summary counts its lines in words that agree: '1 line' (it read '1 lines'), '2 lines', and parses back", () => {
    const one = buildSummary({ lines: 1, chars: 9000, kind: "JSON" }, { keys: [] });
    expect(one).toBe("[Old tool result cleared — 1 line, 9000 chars, JSON]");
    expect(parseStub(one)).toEqual({ level: "cleared", lines: 1, chars: 9000, kind: "JSON", keys: [] });
    expect(buildSummary({ lines: 2, chars: 9000, kind: "JSON" }, { keys: [] })).toBe("[Old tool result cleared — 2 lines, 9000 chars, JSON]");
  });

  it("parseStub never throws on arbitrary text, and only a text opening with a bracket can parse", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `[Old tool result cleared — ${s}`),
          fc.string().map((s) => `[Partial tool result — ${s}`),
        ),
        (text) => {
          const parsed = parseStub(text);
          if (parsed !== undefined) expect(text.startsWith("[")).toBe(true);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("a huge tool output that merely starts like a stub is not treated as one", () => {
    const summary = buildSummary({ lines: 1, chars: 10, kind: "text" }, { keys: [] });
    expect(parseStub(summary)).toBeDefined();
    expect(parseStub(summary + "\n" + "x".repeat(100_000))).toBeUndefined();
  });
});

describe("error lines", () => {
  it("every listed line is the text's line at that number inside the cut part, or an excerpt (marked …) of it that lies inside the cut part", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom("ok", "build ERROR here", "FAIL x", "a fatal b", "errors: 2", "fine"), fc.string({ maxLength: 30 })), {
          maxLength: 60,
        }),
        fc.nat(200),
        fc.nat(200),
        (rows, a, b) => {
          const text = rows.join("\n");
          const from = Math.min(a, text.length);
          const to = Math.max(from, text.length - b);
          const firstLine = text.slice(0, from).split("\n").length;
          const all = text.split("\n");
          for (const e of errorLines(text, from, to, firstLine, { maxLines: 100, maxLineChars: 1_000 })) {
            const start =
              text
                .split("\n")
                .slice(0, e.line - 1)
                .join("\n").length + (e.line > 1 ? 1 : 0);
            if (all[e.line - 1] === e.text && start >= from && start + e.text.length <= to) continue;
            const excerpt = e.text.replace(/^…/, "").replace(/…$/, "");
            expect(e.text.startsWith("…") || e.text.endsWith("…")).toBe(true);
            const at = all[e.line - 1]!.indexOf(excerpt);
            expect(at).toBeGreaterThanOrEqual(0);
            // some occurrence of the excerpt on that line lies inside [from, to)
            let inside = false;
            for (let k = at; k >= 0; k = all[e.line - 1]!.indexOf(excerpt, k + 1)) if (start + k >= from && start + k + excerpt.length <= to) inside = true;
            expect(inside).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
