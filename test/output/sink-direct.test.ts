// Between flushes the tracker usually holds nothing, and the sink then states its own batch (t, a and
// the counters it changed) and writes the raw state itself. These check that such batches are the ones
// the tracker would have made: after details written through the proxy, a capture, a rebase, a read of
// the state, and — the case that needs the guard — the text block or the truncation object aliased into
// details, where a write is an op at every path that holds it.
import { describe, expect, it } from "vitest";
import { apply, decoder, encoder, type Op } from "../../src/delta/index.js";
import { createToolOutput, type ToolOutputState } from "../../src/output/index.js";

function stream() {
  const batches: Op[][] = [];
  const out = createToolOutput({
    retain: "tail",
    maxBytes: 48,
    maxLines: 100,
    minIntervalMs: 0,
    targetBytesPerSecond: Infinity,
    onFlush: (ops) => batches.push([...ops]),
  });
  const enc = encoder();
  const dec = decoder();
  let replica: ToolOutputState | undefined;
  let folded = 0;
  /** Fold what was emitted and compare the replica with the sink's state. */
  const check = () => {
    for (; folded < batches.length; folded++) replica = apply(replica, dec.decode(JSON.parse(JSON.stringify(enc.encode(batches[folded]!)))));
    expect(replica).toEqual(JSON.parse(JSON.stringify(out.state)));
  };
  return { out, batches, check };
}

describe("sink batches stated by the sink itself", () => {
  it("a steady stream of writes is one t, one a and the changed counters a flush, and replicates", () => {
    const { out, batches, check } = stream();
    for (let i = 0; i < 40; i++) out.write(`line ${i}\n`);
    check();
    const last = batches.at(-1)!;
    expect(last.slice(0, 2).map((op) => op[0])).toEqual(["t", "a"]);
    const counters = last.slice(2).map((op) => `${op[0]} ${(op[1] as string[]).join(".")}`);
    expect(counters.slice(0, 2)).toEqual(["s truncation.totalBytes", "s truncation.totalLines"]);
  });

  it("the truncation object aliased into details: every counter write reaches both places", () => {
    const { out, check } = stream();
    for (let i = 0; i < 5; i++) out.write(`a${i}\n`);
    out.details.t = out.state.truncation;
    out.write("b\n");
    check();
    for (let i = 0; i < 20; i++) out.write(`c${i}\n`);
    check();
    expect((out.state.details.t as { totalBytes: number }).totalBytes).toBe(out.state.truncation.totalBytes);
    // Unaliased again: the writes after go on replicating.
    delete out.details.t;
    for (let i = 0; i < 20; i++) out.write(`d${i}\n`);
    check();
  });

  it("the text block aliased into details: every edit of its text reaches both places", () => {
    const { out, check } = stream();
    out.write("x\n");
    out.details.block = out.state.content[0];
    for (let i = 0; i < 30; i++) out.write(`y${i}\n`);
    check();
    out.details.block = null;
    for (let i = 0; i < 30; i++) out.write(`z${i}\n`);
    check();
  });

  it("details, usage, a capture, an image, a rebase and reads between writes keep the replica exact", () => {
    const { out, check } = stream();
    // Details ride on the next write's flush (they do not arm the publisher), so each round writes last.
    for (let i = 0; i < 200; i++) {
      if (i % 11 === 0) out.details.n = i;
      if (i % 13 === 0) out.usage({ tokens: 1 });
      if (i % 17 === 0) void out.state.content[0].text.length;
      if (i % 29 === 0) out.rebase();
      if (i === 50) out.image({ data: "AAAA", mimeType: "image/png" });
      if (i === 100)
        out.capture({
          truncation: { ...out.state.truncation, totalBytes: 5_000, totalLines: 300, maxBytes: 30 },
          binary: false,
          rawBytes: 5_000,
        });
      out.write(`w${i}${i % 7 === 0 ? "" : "\n"}`);
      check();
    }
    out.footer("[footer]\n");
    out.write("after\n");
    out.close();
    check();
  });
});
