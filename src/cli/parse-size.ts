// Byte sizes on the command line (--max-bytes, --max-spill, --min-free): a whole number of bytes, or a
// number with a unit — K, M, G, T, each a power of 1024, written K, KB or KiB in either case (64K,
// 512MB, 1.5GiB), as spool prints sizes (575.1 KB is 575.1 × 1024 bytes). A fraction of a byte is
// dropped (1.3K is 1331). Only that: no signs, exponents, hex or spaces.
const UNIT_BYTES: Record<string, number> = { "": 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

const SIZE = /^(\d+(?:\.\d*)?|\.\d+)(?:([kmgt])(?:i?b)?|(b)?)$/i;

/** Bytes, or undefined when `text` is not a size. */
export function parseSize(text: string): number | undefined {
  const m = SIZE.exec(text);
  if (m === null) return undefined;
  const unit = (m[2] ?? m[3] ?? "").toLowerCase();
  if (unit === "b" && m[1]!.includes(".")) return undefined;
  return Math.floor(Number(m[1]) * UNIT_BYTES[unit]!);
}
