// Counts that @xterm/headless 6.0.0 steps through one at a time, clamped to where more change nothing.
// Scrolling down or up (`CSI n T`, `CSI n S` where the emulator does it), inserting or deleting lines
// (`CSI n L`, `CSI n M`) n times, and tabbing forward or back (`CSI n I`, `CSI n Z`) n times: a count
// of 2,147,483,647 (the largest the parser reads) took 12 s a 10 million rows, so `printf '\e[H\e[2147483647T'`
// held the capture, and `spool run`, for most of an hour. Past the screen's height every row of the
// scroll region is blank already, and past its width the cursor stands at the edge.
/** The emulator's own parser: its handlers get the parameters it will pass on, which they may change. */
export interface RawParser {
  registerCsiHandler(id: { final: string }, handler: (params: { readonly params: Int32Array; readonly length: number }) => boolean): unknown;
}

export function clampCounts(parser: RawParser, cols: number, rows: number): void {
  const clamp = (final: string, most: number): void => {
    parser.registerCsiHandler({ final }, (params) => {
      if (params.length > 0 && params.params[0]! > most) params.params[0] = most;
      return false;
    });
  };
  for (const final of "STLM") clamp(final, rows);
  for (const final of "IZ") clamp(final, cols);
}
