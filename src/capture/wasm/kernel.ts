// AssemblyScript source of the capture's byte kernel (compiled by scripts/build-wasm.mjs into
// ../kernel-wasm.ts; not part of the TypeScript build). A read is copied to an output buffer without
// its complete CSI colour sequences and without the `\r` of each `\r\n`; its newlines are counted,
// and lines that may be longer than the cap are flagged.
// Anything the line assembler or the terminal model has to see — another escape, a cursor-moving CSI,
// a lone `\r`, a backspace, a NUL (shown as U+2400 there) — fails the read, which then takes the
// string path whole.
//
// The rules are those of the JavaScript byte path it replaced (and of ansi-regex's CSI rule on decoded
// text): ESC `[`, parameter bytes 0x30–0x3f, intermediate bytes 0x20–0x2f, a final byte 0x40–0x7e.
// A sequence still open at the end of the read is reported as held, for the caller to glue to the
// next read, if it is at most `holdLimit` bytes long.

// Results, as i32s at `res`: the kept bytes, the held tail, the newlines, whether a line may be long,
// the special bytes seen.

/**
 * CSI final bytes 0x40–0x7f that move the cursor, erase the screen, scroll or edit lines, as bits
 * (final − 0x40): "ABCDEFGHJLMPSTXbdfrsu@" (`b`, REP, repeats the character before it). `K`
 * (erase in line) is not among them: see cursor.ts.
 */
// biome-ignore lint/correctness/noPrecisionLoss: a u64 in AssemblyScript, exact there
const CURSOR_FINALS: u64 = 0x2c0054011935ff;

/** The 16-bit masks of four vectors as one 64-bit mask (bit k: byte k of the 64). */
function mask64(a: v128, b: v128, c: v128, d: v128): u64 {
  return (i8x16.bitmask(a) as u64) | ((i8x16.bitmask(b) as u64) << 16) | ((i8x16.bitmask(c) as u64) << 32) | ((i8x16.bitmask(d) as u64) << 48);
}

/** ESC, CR, backspace or NUL bytes of a vector (0xff where one is). */
function specials(v: v128): v128 {
  return v128.or(
    v128.or(i8x16.eq(v, i8x16.splat(0x1b)), i8x16.eq(v, i8x16.splat(0x0d))),
    v128.or(i8x16.eq(v, i8x16.splat(0x08)), i8x16.eq(v, i8x16.splat(0x00))),
  );
}

/** Copies 64 bytes from `from` to `to` (the caller's buffers have room past their ends for it). */
function copy64(to: usize, from: usize): void {
  v128.store(to, v128.load(from));
  v128.store(to, v128.load(from, 16), 16);
  v128.store(to, v128.load(from, 32), 32);
  v128.store(to, v128.load(from, 48), 48);
}

/** Copies `n` bytes, 64 at a time: up to 63 bytes past `to + n` are written too. */
function copyRun(to: usize, from: usize, n: i32): void {
  copy64(to, from);
  for (let k = 64; k < n; k += 64) copy64(to + k, from + k);
}

/**
 * Scans the `len` bytes at `p` and writes the kept ones to `o`. Both buffers must be readable and
 * writable 64 bytes past `len`; `list` must hold `len + 4` i32s. Returns 0 with the results at
 * `res` (the kept bytes are `o[0, out)`; a held tail is `p[len − held, len)`), or 1: not for the byte
 * path. `cap`: a line between two newlines of this read whose raw bytes are more than this sets the
 * long flag (its kept bytes may be fewer); lines within one 64-byte block are not checked, so for a
 * cap of 64 or more a long line is never missed.
 *
 * Two passes. The first, 64 bytes at a time and without a branch on the data, counts newlines,
 * checks line lengths and lists the positions of the special bytes (ESC, CR, backspace, NUL). The second
 * goes down that list: it copies the run before each special byte, 64 bytes at a time, and handles
 * the byte (a CSI sequence's parameters found with one vector compare). Branches on the data
 * (whether a block has a newline, how many special bytes it has, where a run ends) were what it
 * cost, on the bench's generator output: one pass over 16-byte vectors with a byte loop per partial
 * vector measured ~1.0 ms/MiB on coloured output (~1.4 with its state in globals), one pass over
 * 64-byte blocks with a loop over each block's special bytes ~1.1; these two passes ~0.5 (a CSI
 * sequence every ~49 bytes), plain lines ~0.25. On plain lines a branch that skips the search for
 * special bytes in blocks without a control byte is cheaper (0.16), on coloured output it costs
 * (0.70: taken half the time): `sparse` says which to run, the caller choosing by the previous read.
 */
export function scan(p: usize, o: usize, len: i32, cap: i32, holdLimit: i32, sparse: bool, list: usize, res: usize): i32 {
  const vNl = i8x16.splat(0x0a);
  const vSpace = i8x16.splat(0x20);
  let lines: i32 = 0;
  /** The input position of the newest newline, or -1 before the first. */
  let lastNl: i32 = -1;
  let long: i32 = 0;
  let count: i32 = 0;
  for (let i: i32 = 0; i < len; i += 64) {
    const a = v128.load(p + i);
    const b = v128.load(p + i, 16);
    const c = v128.load(p + i, 32);
    const d = v128.load(p + i, 48);
    // The last block: what lies past the end is left over from earlier reads.
    const valid: u64 = len - i >= 64 ? ~(0 as u64) : ((1 as u64) << ((len - i) as u64)) - 1;
    const na = i8x16.eq(a, vNl);
    const nb = i8x16.eq(b, vNl);
    const nc = i8x16.eq(c, vNl);
    const nd = i8x16.eq(d, vNl);
    const nl = mask64(na, nb, nc, nd) & valid;
    let sp: u64 = 0;
    if (sparse) {
      // Only where a control byte other than a newline (or a tab…) is.
      const ctl = v128.or(
        v128.or(v128.andnot(i8x16.lt_u(a, vSpace), na), v128.andnot(i8x16.lt_u(b, vSpace), nb)),
        v128.or(v128.andnot(i8x16.lt_u(c, vSpace), nc), v128.andnot(i8x16.lt_u(d, vSpace), nd)),
      );
      if (v128.any_true(ctl)) sp = mask64(specials(a), specials(b), specials(c), specials(d)) & valid;
    } else sp = mask64(specials(a), specials(b), specials(c), specials(d)) & valid;
    // Newlines are never removed (one inside a sequence fails the read): all of these are kept.
    lines += popcnt(nl) as i32;
    const has = nl !== 0;
    const first = i + (ctz(nl) as i32);
    long |= (has as i32) & ((lastNl >= 0) as i32) & ((first - lastNl - 1 > cap) as i32);
    lastNl = select<i32>(i + 63 - (clz(nl) as i32), lastNl, has);
    // The positions of the special bytes; dense, four written whatever their number (the list has room).
    const n = popcnt(sp) as i32;
    const at = list + ((count as usize) << 2);
    const first4 = sparse ? 0 : 4;
    for (let k = 0; k < first4; k++) {
      store<i32>(at + ((k as usize) << 2), i + (ctz(sp) as i32));
      sp &= sp - 1;
    }
    for (let k = first4; k < n; k++) {
      store<i32>(at + ((k as usize) << 2), i + (ctz(sp) as i32));
      sp &= sp - 1;
    }
    count += n;
  }
  let out: i32 = 0;
  let cur: i32 = 0;
  let held: i32 = 0;
  for (let k = 0; k < count; k++) {
    const s = load<i32>(list + ((k as usize) << 2));
    copyRun(o + out, p + cur, s - cur);
    out += s - cur;
    const x = load<u8>(p + s);
    if (x === 0x0d) {
      // Only the `\r` of `\r\n`: the newline itself is kept (and counted above).
      if (s + 1 >= len || load<u8>(p + s + 1) !== 0x0a) return 1;
      cur = s + 1;
      continue;
    }
    if (x !== 0x1b) return 1;
    if (s + 1 >= len) {
      held = 1;
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
      const m = s + 2 + t > len ? len - s - 2 : t;
      const seen = (1 << m) - 1;
      const inter = i8x16.bitmask(i8x16.lt_u(i8x16.sub(v, vSpace), i8x16.splat(0x10))) & seen;
      if (inter !== 0 && (inRange & ~inter & seen) >> ctz(inter) !== 0) return 1;
    }
    if (j >= len) {
      // ESC [ params…: still open, for the caller to glue to the next read.
      held = len - s;
      if (held > holdLimit) return 1;
      break;
    }
    const f = load<u8>(p + j) as u32;
    if (f < 0x40 || f > 0x7e) return 1;
    if (((CURSOR_FINALS >> ((f - 0x40) as u64)) & 1) !== 0) return 1;
    // Private modes (`ESC [ ? … h` / `l`): the alternate screen and friends need the terminal model.
    if ((f === 0x68 || f === 0x6c) && load<u8>(p + s + 2) === 0x3f) return 1;
    cur = j + 1;
  }
  if (held === 0) {
    copyRun(o + out, p + cur, len - cur);
    out += len - cur;
  }
  store<i32>(res, out);
  store<i32>(res, held, 4);
  store<i32>(res, lines, 8);
  store<i32>(res, long, 12);
  store<i32>(res, count, 16);
  return 0;
}

/** Where the caller may put its bytes: the first 16-byte boundary past the module's own data. */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15;
}
