// Printing with autowrap off (`CSI ? 7 l`) one character at a time. @xterm/headless 6.0.0 mends a
// wide character that a print wrote over half of only where a print call starts and ends (a call is
// a run of printable characters between two controls, or the part of one that a write holds), and
// with autowrap off a character that does not fit lands on the last column, which can be the second
// half of a wide character. So the row depended on where a write ended: `日` at the right edge then
// `a` showed `日` when both came in one write and ` a` when they came in two. A call per character is
// what any split into writes gives, so the view no longer depends on the reads. With autowrap on
// (nearly all output) the cursor never stops on half of a wide character inside a run, and a run
// is printed in one call as before.
import type { RawParser } from "./clamp-counts.js";

type Print = (data: Uint32Array, start: number, end: number) => void;

/** The emulator's input handler, as used here. */
export interface PrintingHandler {
  print: Print;
  readonly _parser: RawParser & { setPrintHandler(handler: Print): void };
  readonly _coreService: { readonly decPrivateModes: { readonly wraparound: boolean }; readonly modes: { readonly insertMode: boolean } };
}

export function printByCharacterWithoutAutowrap(handler: PrintingHandler): void {
  handler._parser.setPrintHandler((data, start, end) => {
    // (decPrivateModes is replaced on a reset: read it each time.)
    if (handler._coreService.decPrivateModes.wraparound || end - start < 2) handler.print(data, start, end);
    else for (let i = start; i < end; i++) handler.print(data, i, i + 1);
  });
}
