// Streaming ANSI/OSC removal. `ansi-regex` matches complete sequences; what it cannot know is that a
// read ended in the middle of one (`\x1b[3` + `1m`). So a trailing, still-incomplete sequence is held
// back and glued to the next read. Held text is bounded: a would-be sequence longer than HOLD_LIMIT is
// not a sequence, and is released to be cleaned as ordinary text.
import ansiRegex from "ansi-regex";

// Only ESC-introduced sequences are parsed. 8-bit C1 introducers (U+009B, U+009D, …) are left as
// characters (the view drops them as controls), as UTF-8 terminals do; this also keeps the byte-level
// fast path, which only looks for ESC, in exact agreement with this one.
const SEQUENCE = ansiRegex();
const keepC1 = (match: string): string => (match.charCodeAt(0) === 0x1b ? "" : match);
/** A sequence that has begun and could still be completed by more input. */
const INCOMPLETE = /^\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*|[\]PX^_k][^\x07\x18\x1a\x1b\x80-\x9f]*|[\x20-\x2f]+)?$/;
/** String-control sequences ending in ESC may be one byte short of their ST (`ESC \`). */
const ENDS_IN_ESC_OF_ST = /^\x1b[\]PX^_k][^\x07\x18\x1a\x1b\x80-\x9f]*\x1b$/;
const HOLD_LIMIT = 4096;

const isIntroducer = (c: number): boolean => c === 0x1b;

/** Where a trailing incomplete sequence starts, or -1. Scans back at most HOLD_LIMIT units. */
function incompleteTailStart(text: string): number {
  const floor = Math.max(0, text.length - HOLD_LIMIT);
  let last = -1;
  for (let i = text.length - 1; i >= floor; i--) {
    if (isIntroducer(text.charCodeAt(i))) {
      last = i;
      break;
    }
  }
  if (last < 0) return -1;
  if (last === text.length - 1 && text.charCodeAt(last) === 0x1b) {
    // A lone trailing ESC may be the first half of the ST that ends an OSC/DCS begun earlier.
    for (let i = last - 1; i >= floor; i--) {
      if (isIntroducer(text.charCodeAt(i))) {
        if (ENDS_IN_ESC_OF_ST.test(text.slice(i))) return i;
        break;
      }
    }
  }
  return INCOMPLETE.test(text.slice(last)) ? last : -1;
}

export class AnsiStripper {
  private held = "";

  get holding(): boolean {
    return this.held.length > 0;
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
    return text.replace(SEQUENCE, keepC1);
  }

  /** End of input: whatever is held was never completed; it is returned for ordinary cleaning. */
  end(): string {
    const rest = this.held;
    this.held = "";
    return rest.replace(SEQUENCE, keepC1);
  }
}
