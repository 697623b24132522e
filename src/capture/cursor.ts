// When output needs the terminal model. Colour and `\r` progress frames do not: the line cleaner
// replays them exactly, and so does erase-to-end-of-line (`ESC [ K`), which only ever follows a `\r`
// in practice. Moving the cursor up, down or to a position, erasing the screen, scrolling regions,
// saving and restoring the cursor, and the alternate screen do: from the first such sequence on,
// the rest of the output goes through the emulator. So does a repeat of the previous character
// (`CSI n b`): the line cleaner would only remove it (`x\e[5b` showed `x`, the emulator `xxxxxx`).
const MOVES_CURSOR = /\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[ABCDEFGHJLMPSTXbdfrsu@]|\[\?(?:1049|1047|47)[hl]|[78DEMc])/;

/** Where the first such sequence starts, or -1. */
export function firstCursorMove(text: string): number {
  if (!text.includes("\x1b")) return -1;
  return MOVES_CURSOR.exec(text)?.index ?? -1;
}
