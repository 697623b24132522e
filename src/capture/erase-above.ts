// `CSI 1 J` (erase above: the screen from its top through the cursor) with the cursor in the last
// column, done here instead of by the emulator. @xterm/headless 6.0.0 then clears the wrap flag of the
// row after the cursor's to say the erased row no longer goes on in it, but looks that row up by its
// screen index among all rows, scrollback included: with no scrollback and the cursor on the last row
// there is no such row and it throws ("Cannot set properties of undefined (setting 'isWrapped')",
// which ended `spool run` on `printf 'one\ntwo\n\033[40;120H\033[1J'`), and otherwise it clears the
// flag of a scrollback row (joining or splitting lines there) and leaves the right one set.
// Anywhere else in the row the emulator's own erase is right (it never touches the next row).
import type { InputHandler } from "./screen.js";

interface Buffer {
  readonly x: number;
  readonly y: number;
  readonly ybase: number;
  readonly lines: { get(i: number): { isWrapped: boolean } | undefined };
}

/** Returns false to leave the sequence to the emulator, true once it was done here. */
export function eraseAbove(handler: InputHandler, buffer: Buffer, cols: number, rows: number, respectProtect: boolean): boolean {
  // As the emulator does first: the cursor back on the screen, its column at most `cols` (a pending wrap stays).
  handler._restrictCursor(cols);
  if (buffer.x + 1 < cols) return false;
  const y = buffer.y;
  handler._eraseInBufferLine(y, 0, cols, true, respectProtect);
  if (y + 1 < rows) {
    const next = buffer.lines.get(buffer.ybase + y + 1);
    if (next) next.isWrapped = false;
  }
  for (let j = y - 1; j >= 0; j--) handler._resetBufferLine(j, respectProtect);
  return true;
}
