// ANSI/OSC removal, streaming, on decoded text (the byte path removes complete CSI colour sequences
// on the raw bytes itself: kernel.ts, by the same rule).
// `ansi-regex` matches complete sequences; what it cannot know is that a
// read ended in the middle of one (`\x1b[3` + `1m`). So a trailing, still-incomplete sequence is held
// back and glued to the next read. Held text is bounded: a would-be sequence longer than HOLD_LIMIT is
// not a sequence, and is released to be cleaned as ordinary text.
import ansiRegex from "ansi-regex";

// Only ESC-introduced sequences are parsed. 8-bit C1 introducers (U+009B, U+009D, …) are left as
// characters (the view drops them as controls), as UTF-8 terminals do; this also keeps the byte-level
// fast path, which only looks for ESC, in exact agreement with this one.
// Found with indexOf and matched in place (sticky): a global replace of the whole pattern, or a
// callback filtering C1 matches out, measured 2–3× slower on ANSI-heavy output.
const SEQUENCE = new RegExp(ansiRegex().source, "y");

function stripSequences(text: string): string {
  let i = text.indexOf("\x1b");
  if (i === -1) return text;
  let out = "";
  let from = 0;
  while (i !== -1) {
    SEQUENCE.lastIndex = i;
    const m = SEQUENCE.exec(text);
    if (m) {
      out += text.slice(from, i);
      from = i + m[0].length;
      i = text.indexOf("\x1b", from);
    } else {
      i = text.indexOf("\x1b", i + 1);
    }
  }
  return out + text.slice(from);
}
/** A sequence that has begun and could still be completed by more input. */
const INCOMPLETE = /^\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*|[\]PX^_k][^\x07\x18\x1a\x1b\x80-\x9f]*|[\x20-\x2f]+)?$/;
/** String-control sequences ending in ESC may be one byte short of their ST (`ESC \`). */
const ENDS_IN_ESC_OF_ST = /^\x1b[\]PX^_k][^\x07\x18\x1a\x1b\x80-\x9f]*\x1b$/;
export const HOLD_LIMIT = 4096;

/** Where a trailing incomplete sequence starts, or -1. Looks back at most HOLD_LIMIT units. */
export function incompleteTailStart(text: string): number {
  const floor = Math.max(0, text.length - HOLD_LIMIT);
  const last = text.lastIndexOf("\x1b");
  if (last < floor) return -1;
  if (last === text.length - 1 && last > 0) {
    // A lone trailing ESC may be the first half of the ST that ends an OSC/DCS begun earlier.
    const before = text.lastIndexOf("\x1b", last - 1);
    if (before >= floor && ENDS_IN_ESC_OF_ST.test(text.slice(before))) return before;
  }
  if (!INCOMPLETE.test(text.slice(last))) return -1;
  // ESCs right before it are escapes it interrupts: text, or the start of what the terminal model
  // takes if it turns out to move the cursor — only the next read tells. They are held with it, so a
  // read boundary between `ESC` and `ESC [2A` changes nothing (as when both arrive in one read).
  // So is a sequence it interrupts (`ESC [` then `ESC`): a terminal drops it whole, this stripper
  // keeps its `[` as text, and which of the two sees it depends on the next read.
  let start = last;
  for (;;) {
    while (start > floor && text.charCodeAt(start - 1) === 0x1b) start--;
    const before = text.lastIndexOf("\x1b", start - 1);
    if (before < floor || !INCOMPLETE.test(text.slice(before, start))) return start;
    start = before;
  }
}

export class AnsiStripper {
  private held = "";

  get holding(): boolean {
    return this.held.length > 0;
  }

  /** The incomplete sequence held back so far, raw; it is no longer held. */
  take(): string {
    const held = this.held;
    this.held = "";
    return held;
  }

  push(text: string): string {
    if (this.held) {
      text = this.held + text;
      this.held = "";
    }
    const from = incompleteTailStart(text);
    if (from >= 0) {
      this.held = text.slice(from);
      text = text.slice(0, from);
    }
    return stripSequences(text);
  }

  /** End of input: whatever is held was never completed; it is returned for ordinary cleaning. */
  end(): string {
    const rest = this.held;
    this.held = "";
    return stripSequences(rest);
  }
}
