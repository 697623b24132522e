// AssemblyScript source of the capture's byte kernel (compiled by scripts/build-wasm.mjs into
// ../kernel-wasm.ts; not part of the TypeScript build). One pass over a read, 64 bytes at a time:
// the bytes are copied to an output buffer without complete CSI colour sequences and without the `\r`
// of each `\r\n`, newlines are counted, and lines that may be longer than the cap are flagged.
// Anything the line assembler or the terminal model has to see — another escape, a cursor-moving CSI,
// a lone `\r`, a backspace — fails the read, which then takes the string path whole.
//
// The rules are those of the JavaScript byte path it replaced (and of ansi-regex's CSI rule on decoded
// text): ESC `[`, parameter bytes 0x30–0x3f, intermediate bytes 0x20–0x2f, a final byte 0x40–0x7e.
// A sequence still open at the end of the read is reported as held, for the caller to glue to the
// next read, if it is at most `holdLimit` bytes long.

// Results, as i32s at `res`: the kept bytes, the held tail, the newlines, whether a line may be long.

/**
 * CSI final bytes 0x40–0x7f that move the cursor, erase the screen, scroll or edit lines, as bits
 * (final − 0x40): "ABCDEFGHJLMPSTXdfrsu@". `K` (erase in line) is not among them: see cursor.ts.
 */
// biome-ignore lint/correctness/noPrecisionLoss: a u64 in AssemblyScript, exact there
const CURSOR_FINALS: u64 = 0x2c0050011935ff;

/** The 16-bit masks of four vectors as one 64-bit mask (bit k: byte k of the 64). */
function mask64(a: v128, b: v128, c: v128, d: v128): u64 {
  return (i8x16.bitmask(a) as u64) | ((i8x16.bitmask(b) as u64) << 16) | ((i8x16.bitmask(c) as u64) << 32) | ((i8x16.bitmask(d) as u64) << 48);
}

/** ESC, CR or backspace bytes of a vector (0xff where one is). */
function specials(v: v128): v128 {
  return v128.or(v128.or(i8x16.eq(v, i8x16.splat(0x1b)), i8x16.eq(v, i8x16.splat(0x0d))), i8x16.eq(v, i8x16.splat(0x08)));
}

/** Copies 64 bytes from `from` to `to` (the caller's buffers have room past their ends for it). */
function copy64(to: usize, from: usize): void {
  v128.store(to, v128.load(from));
  v128.store(to, v128.load(from, 16), 16);
  v128.store(to, v128.load(from, 32), 32);
  v128.store(to, v128.load(from, 48), 48);
}

/**
 * Scans the `len` bytes at `p` and writes the kept ones to `o`. Both buffers must be readable and
 * writable 64 bytes past `len`: the kernel copies 64 bytes at a time and ignores what lies past the
 * end. Returns 0 with the results at `res` (the kept bytes are `o[0, out)`; a held tail is
 * `p[len − held, len)`), or 1: not for the byte path.
 * `cap`: a line between two newlines of this read whose raw bytes are more than this sets the long
 * flag (its kept bytes may be fewer); lines within one 64-byte block are not checked, so for a cap
 * of 64 or more a long line is never missed.
 *
 * 64 bytes at a time: a block with no ESC, CR or backspace is copied whole; otherwise the runs
 * between those bytes are copied 64 bytes at a time (a fixed cost, no loop per run) and each special
 * byte is handled on its own, a CSI sequence's parameters found with one vector compare. A loop over
 * 16-byte vectors with a byte loop per partial vector, state in globals, measured ~1.4 ms/MiB on
 * coloured output, most of it in mispredicted branches (lengths of runs and parameters).
 */
export function scan(p: usize, o: usize, len: i32, cap: i32, holdLimit: i32, res: usize): i32 {
  let at: i32 = 0;
  let lines: i32 = 0;
  /** The input position of the newest newline, or -1 before the first. */
  let lastNl: i32 = -1;
  let long: i32 = 0;
  let held: i32 = 0;
  const vNl = i8x16.splat(0x0a);
  const vSpace = i8x16.splat(0x20);
  let i: i32 = 0;
  while (i < len) {
    const a = v128.load(p + i);
    const b = v128.load(p + i, 16);
    const c = v128.load(p + i, 32);
    const d = v128.load(p + i, 48);
    const na = i8x16.eq(a, vNl);
    const nb = i8x16.eq(b, vNl);
    const nc = i8x16.eq(c, vNl);
    const nd = i8x16.eq(d, vNl);
    const whole = i + 64 <= len;
    let nl = mask64(na, nb, nc, nd);
    let sp: u64 = 0;
    // Control bytes other than a newline (a tab is one): only then look for the special three.
    const ctl = v128.or(
      v128.or(v128.andnot(i8x16.lt_u(a, vSpace), na), v128.andnot(i8x16.lt_u(b, vSpace), nb)),
      v128.or(v128.andnot(i8x16.lt_u(c, vSpace), nc), v128.andnot(i8x16.lt_u(d, vSpace), nd)),
    );
    if (!whole || v128.any_true(ctl)) {
      sp = mask64(specials(a), specials(b), specials(c), specials(d));
      if (!whole) {
        // The last block: what lies past the end is left over from earlier reads.
        const valid: u64 = ((1 as u64) << ((len - i) as u64)) - 1;
        nl &= valid;
        sp &= valid;
      }
    }
    if (nl !== 0) {
      // Newlines are never removed (one inside a sequence fails the read), so all of these are kept.
      lines += popcnt(nl) as i32;
      const first = i + (ctz(nl) as i32);
      if (lastNl >= 0 && first - lastNl - 1 > cap) long = 1;
      lastNl = i + 63 - (clz(nl) as i32);
    }
    const blockEnd = whole ? i + 64 : len;
    if (sp === 0) {
      v128.store(o + at, a);
      v128.store(o + at, b, 16);
      v128.store(o + at, c, 32);
      v128.store(o + at, d, 48);
      at += blockEnd - i;
      i = blockEnd;
      continue;
    }
    let cur = i;
    while (true) {
      const s = sp === 0 ? blockEnd : i + (ctz(sp) as i32);
      copy64(o + at, p + cur);
      at += s - cur;
      if (sp === 0) {
        cur = blockEnd;
        break;
      }
      const x = load<u8>(p + s);
      if (x === 0x0d) {
        // Only the `\r` of `\r\n`: the newline itself is kept (and counted above).
        if (s + 1 >= len || load<u8>(p + s + 1) !== 0x0a) return 1;
        cur = s + 1;
      } else if (x === 0x1b) {
        if (s + 1 >= len) {
          held = 1;
          cur = len;
          break;
        }
        if (load<u8>(p + s + 1) !== 0x5b) return 1;
        // Parameter bytes 0x30–0x3f, then intermediate bytes 0x20–0x2f, then the final byte.
        const v = v128.load(p + s + 2);
        const inRange = i8x16.bitmask(i8x16.lt_u(i8x16.sub(v, vSpace), vSpace));
        const t = ctz((~inRange & 0xffff) | 0x10000);
        let j = s + 2 + t;
        if (t === 16) {
          // Sixteen or more: byte by byte, as the rule reads.
          let f: u32 = 0;
          j = s + 2;
          while (j < len && (f = load<u8>(p + j)) >= 0x30 && f <= 0x3f) j++;
          while (j < len && (f = load<u8>(p + j)) >= 0x20 && f <= 0x2f) j++;
        } else {
          // No parameter byte may follow an intermediate one (it would end the sequence, and fail as a final).
          const n = s + 2 + t > len ? len - s - 2 : t;
          const seen = (1 << n) - 1;
          const inter = i8x16.bitmask(i8x16.lt_u(i8x16.sub(v, vSpace), i8x16.splat(0x10))) & seen;
          if (inter !== 0 && (inRange & ~inter & seen) >> ctz(inter) !== 0) return 1;
        }
        if (j >= len) {
          // ESC [ params…: still open, for the caller to glue to the next read.
          held = len - s;
          if (held > holdLimit) return 1;
          cur = len;
          break;
        }
        const f = load<u8>(p + j) as u32;
        if (f < 0x40 || f > 0x7e) return 1;
        if (((CURSOR_FINALS >> ((f - 0x40) as u64)) & 1) !== 0) return 1;
        // Private modes (`ESC [ ? … h` / `l`): the alternate screen and friends need the terminal model.
        if ((f === 0x68 || f === 0x6c) && load<u8>(p + s + 2) === 0x3f) return 1;
        cur = j + 1;
      } else return 1;
      if (cur >= blockEnd) break;
      sp &= (~0 as u64) << ((cur - i) as u64);
    }
    i = cur;
  }
  store<i32>(res, at);
  store<i32>(res, held, 4);
  store<i32>(res, lines, 8);
  store<i32>(res, long, 12);
  return 0;
}

/** Where the caller may put its bytes: the first 16-byte boundary past the module's own data. */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}
