// Interop with Chord: our stream must be readable by a Chord client and theirs by ours.
// Oracle: `@earendil-works/chord/delta` (devDependency only). Random scripts via fast-check.
import * as chord from "@earendil-works/chord/delta";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, decoder, encoder, track, type Op, type WireOp } from "../../src/delta/index.js";
import { json, runCmd, scriptArb, type AnyTracker, type Cmd } from "./helpers.js";

type Container = Record<string, unknown> | unknown[];

function drive(t: AnyTracker, cmds: readonly Cmd[], onBatch: (ops: unknown[]) => void) {
  const held: Container[] = [];
  const flush = () => onBatch(json(t.flush() as unknown[]));
  flush();
  for (const cmd of cmds) {
    if (cmd.k === "discard") continue;
    runCmd(t, cmd, held, flush);
  }
  flush();
}

describe("interop with Chord", () => {
  it("batches our tracker emits fold to the same value with Chord's apply (decoded and wire forms)", () => {
    fc.assert(
      fc.property(scriptArb({ discard: false }, 40), ({ init, cmds }) => {
        const t = track(json(init));
        const ourEnc = encoder();
        const theirDec = chord.decoder();
        let viaOps: unknown;
        let viaWire: unknown;
        drive(t, cmds, (ops) => {
          viaOps = chord.apply(viaOps as never, json(ops) as never);
          const wire = JSON.parse(JSON.stringify(ourEnc.encode(ops as Op[])));
          viaWire = chord.apply(viaWire as never, theirDec.decode(wire));
          expect(viaOps).toEqual(json(t.target));
          expect(viaWire).toEqual(json(t.target));
        });
      }),
      { numRuns: 400 },
    );
  });

  it("batches from Chord's track fold with our apply exactly as with theirs (decoded and wire forms)", () => {
    let compared = 0;
    fc.assert(
      fc.property(scriptArb({ discard: false }, 40), ({ init, cmds }) => {
        const t = chord.track(json(init)) as unknown as AnyTracker;
        const theirEnc = chord.encoder();
        const ourDec = decoder();
        let theirs: unknown;
        let ours: unknown;
        let oursViaWire: unknown;
        let broken = false;
        drive(t, cmds, (ops) => {
          if (broken) return;
          // Their fold is the reference: a batch their own applier rejects (a producer defect on their
          // side) ends the stream, and ours must reject it too rather than invent a value.
          let theirErr: unknown;
          try {
            theirs = chord.apply(theirs as never, json(ops) as never);
          } catch (e) {
            theirErr = e;
          }
          const wire = JSON.parse(JSON.stringify(theirEnc.encode(ops as never))) as WireOp[];
          if (theirErr !== undefined) {
            expect(() => apply(ours as object, json(ops) as Op[])).toThrow();
            broken = true;
            return;
          }
          ours = apply(ours as object, json(ops) as Op[]);
          oursViaWire = apply(oursViaWire as object, ourDec.decode(wire));
          expect(ours).toEqual(theirs);
          expect(oursViaWire).toEqual(theirs);
          compared++;
        });
      }),
      { numRuns: 400 },
    );
    expect(compared).toBeGreaterThan(1000);
  });

  it("a hand-written Chord stream with interning, omission and a root splice folds with ours", () => {
    const t = chord.track({ out: "", xs: [] as number[] });
    const enc = chord.encoder();
    const dec = decoder();
    let ours: unknown;
    const ship = () => {
      ours = apply(ours as object, dec.decode(JSON.parse(JSON.stringify(enc.encode(t.flush()))) as WireOp[]));
      expect(ours).toEqual(json(t.target));
    };
    ship();
    for (let i = 0; i < 20; i++) {
      t.state.out = (t.state.out + `chunk ${i}\n`).slice(-40);
      t.state.xs.push(i);
      if (i % 7 === 6) t.state.xs.splice(0, 2);
      ship();
    }
    const r = chord.track([1, 2, 3]);
    let root = apply(undefined, r.flush() as unknown as Op[]);
    r.state.splice(1, 1, 9, 9);
    root = apply(root, json(r.flush()) as unknown as Op[]);
    expect(root).toEqual([1, 9, 9, 3]);
  });
});
