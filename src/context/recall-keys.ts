// Finding archive keys in what the model passed to recall. Models paste markers sloppily (`ccr:KEY`,
// single brackets, upper case, spaces, inside prose or a JSON field with any name), so extraction is
// tolerant — and the payload is model-controlled, so it is one left-to-right pass with no regular
// expression that could backtrack: 1 MB of spaces or of `ccr:` repeats costs one scan.

/** JSON fields that may hold a key when the payload is an object without a marker. */
const KEY_FIELDS = ["key", "keys", "marker", "markers", "ccr", "id"];

/**
 * Tier 1: tolerant markers anywhere. Tier 2 (only if none): JSON key fields or a JSON array of
 * strings, or the whole payload as a list of bare keys. A list (the payload, or one JSON string) is
 * keys separated by whitespace or commas, each optionally quoted or backticked, or saved result
 * files as a preview names them (`results/KEY.txt`, or that path absolute); one word that is
 * neither — prose, another path — and the list names no key.
 */
export function extractRecallKeys(payload: string): string[] {
  const keys = new Set<string>();
  for (const key of markerKeys(payload)) keys.add(key);
  if (keys.size > 0) return [...keys];

  const trimmed = payload.trim();
  const candidates: string[] = [];
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      const parsed = JSON.parse(trimmed) as unknown;
      if (Array.isArray(parsed)) {
        for (const v of parsed) if (typeof v === "string") candidates.push(v);
      } else if (parsed !== null && typeof parsed === "object") {
        for (const field of KEY_FIELDS) {
          if (!Object.hasOwn(parsed, field)) continue;
          const value = (parsed as Record<string, unknown>)[field];
          if (typeof value === "string") candidates.push(value);
          else if (Array.isArray(value)) for (const v of value) if (typeof v === "string") candidates.push(v);
        }
      }
    } catch {
      // not JSON (or nested past the parser's depth): judged as a list of bare keys below
      candidates.push(trimmed);
    }
  } else candidates.push(trimmed);
  for (const candidate of candidates) {
    // judged one by one, like JSON fields: an "id" that is a tool call id does not hide the "key" field
    for (const key of bareKeys(candidate) ?? []) keys.add(key);
  }
  return [...keys];
}

/** The keys of a list of bare keys and result file paths, or undefined when any word is neither. */
function bareKeys(text: string): string[] | undefined {
  const keys: string[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && !isSpaceCode(text.charCodeAt(i)) && text.charCodeAt(i) !== 0x2c) continue; // ','
    if (i > start) {
      const word = stripWrapping(text.slice(start, i));
      const key = word.length === 16 && isHexRun(word, 0, 16) ? word.toLowerCase() : resultFileKey(word);
      if (word !== "" && key === undefined) return undefined;
      if (key !== undefined) keys.push(key);
    }
    start = i + 1;
  }
  return keys;
}

/**
 * The key of `results/KEY.txt` (or `.json`, a text saved as a JSON string), alone or after an
 * absolute directory with no `.` or `..` segment. Only the key is used — the text is looked up in
 * this session's workspace — so the directory is never opened.
 */
function resultFileKey(word: string): string | undefined {
  const ext = word.endsWith(".txt") ? 4 : word.endsWith(".json") ? 5 : 0;
  const dirEnd = word.length - ext - 16;
  if (ext === 0 || dirEnd < 8 || !isHexRun(word, dirEnd, 16)) return undefined;
  const dir = word.slice(0, dirEnd);
  if (dir !== "results/" && !(dir.startsWith("/") && dir.endsWith("/results/"))) return undefined;
  if (dir.split("/").some((segment) => segment === "." || segment === "..")) return undefined;
  return word.slice(dirEnd, dirEnd + 16).toLowerCase();
}

/** Every `[<]{0,2} ccr : KEY` (any case, any whitespace around `:`), KEY 16 hex chars not followed by a letter or digit. */
function* markerKeys(text: string): Generator<string> {
  const n = text.length;
  for (let i = 0; i + 3 <= n; i++) {
    if (!isLetter(text, i, 0x63) || !isLetter(text, i + 1, 0x63) || !isLetter(text, i + 2, 0x72)) continue;
    let j = skipSpace(text, i + 3);
    if (text.charCodeAt(j) !== 0x3a) continue; // ':'
    j = skipSpace(text, j + 1);
    if (j + 16 > n || !isHexRun(text, j, 16) || isAlnum(text.charCodeAt(j + 16))) continue;
    yield text.slice(j, j + 16).toLowerCase();
    i = j + 15;
  }
}

/** Strips whitespace, backticks, quotes and angle brackets from both ends. */
function stripWrapping(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isWrapping(s.charCodeAt(a))) a++;
  while (b > a && isWrapping(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

function isWrapping(c: number): boolean {
  return c === 0x60 || c === 0x27 || c === 0x22 || c === 0x3c || c === 0x3e || isSpaceCode(c);
}

/** `text[i]` is the lowercase ASCII letter `lower` in either case. */
function isLetter(text: string, i: number, lower: number): boolean {
  return (text.charCodeAt(i) | 0x20) === lower;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpaceCode(text.charCodeAt(i))) i++;
  return i;
}

function isHexRun(text: string, from: number, length: number): boolean {
  for (let i = from; i < from + length; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66))) return false;
  }
  return true;
}

function isAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
}

/** JavaScript's `\s`: ASCII whitespace, NBSP, the Unicode space separators, line/paragraph separators and BOM. */
function isSpaceCode(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}
