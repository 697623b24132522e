// ANSI/OSC removal, streaming: on decoded text for everything, and on raw bytes for the common
// case of complete CSI colour sequences (stripCompleteCsi, used by the fast path).
// `ansi-regex` matches complete sequences; what it cannot know is that a
// read ended in the middle of one (`\x1b[3` + `1m`). So a trailing, still-incomplete sequence is held
// back and glued to the next read. Held text is bounded: a would-be sequence longer than HOLD_LIMIT is
// not a sequence, and is released to be cleaned as ordinary text.
import { isUtf8 } from "node:buffer";
import ansiRegex from "ansi-regex";
import { trailingPartial } from "./utf8.js";

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
/** CSI final bytes that move the cursor, erase the screen, scroll or edit lines (not `K`: see cursor.ts). */
const CURSOR_FINAL = new Uint8Array(128);
for (const c of "ABCDEFGHJLMPSTXdfrsu@") CURSOR_FINAL[c.charCodeAt(0)] = 1;
const ESC_BYTE = 0x1b;
/** Bytes scanned in JavaScript for the next ESC before asking Buffer.indexOf. */
const PROBE = 16;
/** Kept runs shorter than this are moved byte by byte: cheaper than a copyWithin call. */
const SHORT_RUN = 24;

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
  return INCOMPLETE.test(text.slice(last)) ? last : -1;
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

/**
 * Coloured output without cursor tricks is plain text plus CSI sequences (ESC [ params final).
 * They are removed here, on the bytes, exactly as ansi-regex's CSI rule would on the decoded text
 * (its classes are ASCII, so bytes and characters agree). A CSI sequence still open at the end of the
 * read (a read boundary inside `ESC [ 3`) is not removed but reported as `held` trailing bytes, for the
 * caller to glue to the next read — otherwise one read in seven of coloured output fell back to the
 * string path. Anything else — another kind of escape, invalid UTF-8 that a removal could glue
 * together — returns undefined and the read takes the string path, which handles every case.
 */
export function stripCompleteCsi(buf: Buffer, out: Buffer): { bytes: Buffer; held: number } | undefined {
  // One native copy of the read, then the kept runs are moved down in place with copyWithin (a V8
  // builtin): a Buffer.copy per run (Node's checked wrapper) cost ~1.4 ms/MiB on coloured output, a
  // sequence every ~80 bytes; this ~0.7.
  out.set(buf);
  const len = buf.length;
  let at = 0;
  let from = 0;
  let held = 0;
  let i = buf.indexOf(ESC_BYTE);
  while (i !== -1) {
    if (i + 1 < len && buf[i + 1] !== 0x5b) return undefined;
    let j = i + 2;
    let b = 0;
    while (j < len && (b = buf[j]!) >= 0x30 && b <= 0x3f) j++;
    while (j < len && (b = buf[j]!) >= 0x20 && b <= 0x2f) j++;
    if (j >= len) {
      // ESC, ESC [, or ESC [ params…: still open, and short enough to be a sequence.
      if (len - i > HOLD_LIMIT) return undefined;
      held = len - i;
      break;
    }
    if (b < 0x40 || b > 0x7e) return undefined;
    // Cursor movement and screen modes need the terminal model (the string path detects them exactly).
    if (CURSOR_FINAL[b] === 1 || ((b === 0x68 || b === 0x6c) && buf[i + 2] === 0x3f)) return undefined;
    if (i - from < SHORT_RUN) for (let q = from; q < i; q++) out[at++] = buf[q]!;
    else {
      out.copyWithin(at, from, i);
      at += i - from;
    }
    from = j + 1;
    // A colour's reset is usually a word away: a short look beats a native indexOf call there.
    const probe = Math.min(from + PROBE, len);
    let p = from;
    while (p < probe && buf[p] !== ESC_BYTE) p++;
    i = p < probe ? p : buf.indexOf(ESC_BYTE, probe);
  }
  const end = len - held;
  if (!isUtf8(buf.subarray(0, held > 0 ? end : end - trailingPartial(buf)))) return undefined;
  if (at !== from) out.copyWithin(at, from, end);
  at += end - from;
  return { bytes: out.subarray(0, at), held };
}
