// The sink records its window changes as explicit t/a ops (no diff of the window), and keeps what
// writes change beside the tracker until a flush or a read settles it. Random write/footer/replace/
// slide/image/flush sequences — the state read only now and then, so several writes settle at once —
// must leave the same text, totals and truncation as a model built on the reference window rules
// (fitTail / fitHead over the whole joined text), and every replica folded from the emitted batches
// must equal the sink's state after every forced flush.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countLines, utf8Length } from "../../src/capture/index.js";
import { apply, decoder, encoder, type Op } from "../../src/delta/index.js";
import { createToolOutput, type ToolOutputState } from "../../src/output/index.js";
import { fitHead, fitTail } from "../../src/output/window.js";

const LONG = Boolean(process.env.SPOOL_LONG);

type Cmd =
  | { k: "write"; text: string }
  | { k: "footer"; text: string }
  | { k: "replace"; text: string }
  | { k: "slide"; frac: number; text: string }
  | { k: "image" }
  | { k: "read" }
  | { k: "flush" }
  | { k: "details"; n: number }
  | { k: "alias"; what: "truncation" | "block" | "none" };

// Newlines, multi-byte characters and lone surrogate halves (a pair split across two writes).
const unit = fc.constantFrom("a", "b", "\n", "\n", "é", "😀", "\ud83d", "\ude00", "xyz");
const textArb = fc.string({ unit, minLength: 1, maxLength: 12 });
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ k: fc.constant("write" as const), text: textArb }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("footer" as const), text: fc.string({ unit, maxLength: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("replace" as const), text: textArb }) },
  {
    weight: 4,
    arbitrary: fc.record({ k: fc.constant("slide" as const), frac: fc.double({ min: 0, max: 1, noNaN: true }), text: fc.string({ unit, maxLength: 12 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ k: "image" as const }) },
  { weight: 2, arbitrary: fc.constant({ k: "read" as const }) },
  { weight: 3, arbitrary: fc.constant({ k: "flush" as const }) },
  // Details written through the proxy, and the text block or the truncation object held in details
  // too (a write is then an op at both places) or let go again.
  { weight: 1, arbitrary: fc.record({ k: fc.constant("details" as const), n: fc.integer({ min: 0, max: 9 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("alias" as const), what: fc.constantFrom("truncation" as const, "block" as const, "none" as const) }) },
);

/** A stream's two ends: batches go through the encoder, JSON and the decoder, then fold on a replica. */
function decoderPair() {
  const enc = encoder();
  const dec = decoder();
  return {
    fold: (replica: ToolOutputState | undefined, ops: readonly Op[]): ToolOutputState =>
      apply(replica, dec.decode(JSON.parse(JSON.stringify(enc.encode(ops))))),
  };
}

describe("sink window as explicit t/a ops", () => {
  it("slide() rejects a drop past the retained text with a clear error", () => {
    const out = createToolOutput({ minIntervalMs: 1e9, onFlush: () => {} });
    out.write("abc\n");
    expect(() => out.slide(5, "x")).toThrow(/drop must be an integer from 0 to the retained text's length 4, got 5/);
    expect(() => out.slide(-1, "x")).toThrow(RangeError);
    out.slide(4, "def\n");
    expect(out.state.content[0].text).toBe("def\n");
  });

  it(`random write sequences keep the reference window rules and converge on a replica (${LONG ? "20 000" : "800"} sequences)`, () => {
    let explicit = 0;
    fc.assert(
      fc.property(
        fc.constantFrom("tail" as const, "head" as const),
        fc.integer({ min: 4, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(cmdArb, { maxLength: 40 }),
        (retain, maxBytes, maxLines, cmds) => {
          const batches: Op[][] = [];
          const out = createToolOutput({ retain, maxBytes, maxLines, minIntervalMs: 1e9, onFlush: (ops) => batches.push([...ops]) });
          // The model: window text by the reference rules, footer outside it.
          let window = "";
          let footer = "";
          let truncated = false;
          let totalBytes = 0;
          let written = "";
          const enc = decoderPair();
          let folded = 0;
          let replica: ToolOutputState | undefined;
          for (const cmd of cmds) {
            if (cmd.k === "write") {
              out.write(cmd.text);
              if (footer !== "") footer += cmd.text;
              else {
                totalBytes += utf8Length(cmd.text);
                written += cmd.text;
                const fit = retain === "head" ? fitHead(window, cmd.text, maxBytes, maxLines) : fitTail(window + cmd.text, maxBytes, maxLines);
                window = fit.text;
                truncated ||= fit.cut;
              }
            } else if (cmd.k === "footer") {
              out.footer(cmd.text);
              footer += cmd.text;
            } else if (cmd.k === "slide") {
              const drop = Math.floor(cmd.frac * window.length);
              out.slide(drop, cmd.text);
              window = window.slice(drop) + cmd.text;
            } else if (cmd.k === "replace") {
              out.replace(cmd.text);
              window = cmd.text;
            } else if (cmd.k === "image") out.image({ data: "AAAA", mimeType: "image/png" });
            else if (cmd.k === "flush") out.flush({ force: true });
            else if (cmd.k === "details") out.details.n = cmd.n;
            else if (cmd.k === "alias") out.details.held = cmd.what === "none" ? null : cmd.what === "block" ? out.state.content[0] : out.state.truncation;
            if (cmd.k !== "read" && cmd.k !== "flush") continue;
            const st = out.state;
            expect(st.content[0].text).toBe(window + footer);
            expect(st.truncation.outputBytes).toBe(utf8Length(window));
            expect(st.truncation.outputLines).toBe(countLines(window));
            expect(st.truncation.truncated).toBe(truncated);
            expect(st.truncation.totalBytes).toBe(totalBytes);
            expect(st.truncation.totalLines).toBe(countLines(written));
            if (cmd.k === "flush") {
              for (; folded < batches.length; folded++) replica = enc.fold(replica, batches[folded]!);
              expect(replica).toEqual(JSON.parse(JSON.stringify(st)));
            }
          }
          out.close();
          for (; folded < batches.length; folded++) replica = enc.fold(replica, batches[folded]!);
          for (const ops of batches) for (const op of ops) if (op[0] === "t" || op[0] === "a") explicit++;
          if (batches.length > 0) expect(replica).toEqual(JSON.parse(JSON.stringify(out.state)));
        },
      ),
      { numRuns: LONG ? 20_000 : 800 },
    );
    expect(explicit).toBeGreaterThan(500);
  }, 60_000);

  it("a tail window that slides emits one t and one a per flush, never an s of the whole text", () => {
    const batches: Op[][] = [];
    const out = createToolOutput({ retain: "tail", maxBytes: 64, maxLines: 100, minIntervalMs: 1e9, onFlush: (ops) => batches.push([...ops]) });
    for (let i = 0; i < 10; i++) out.write(`line ${i} ${"x".repeat(i)}\n`);
    out.flush({ force: true });
    for (let i = 10; i < 50; i++) {
      out.write(`line ${i}\n`);
      out.flush({ force: true });
    }
    for (const ops of batches.slice(1)) {
      const textOps = ops.filter((op) => op[0] !== "r" && op[1][0] === "content");
      expect(textOps.every((op) => op[0] === "t" || op[0] === "a")).toBe(true);
    }
    expect(batches.at(-1)!.filter((op) => op[0] === "t")).toHaveLength(1);
  });
});
