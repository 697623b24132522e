// Benchmark input: `node capture.gen.mjs BYTES [SEED] [ansi|cursor|short]` writes exactly BYTES of varied text lines
// (with `short`, only the running counter on each line — ~5-byte lines, like `seq` or `yes`, where any
// per-line cost dominates; with `ansi`, about one word in eight is wrapped in a colour sequence, like a test runner's output;
// with `cursor`, coloured lines as with `ansi`, and after every eight of them a three-line progress
// display is redrawn in place with cursor-up and erase-line, like docker pull or a test runner's live
// summary — the output that takes the terminal model).
// Every line is distinct (a running counter plus one of 4096 pre-built lines of mixed length and
// content), so nothing downstream can profit from repetition; the generator itself runs at disk speed.
const total = Number(process.argv[2]);
let s = Number(process.argv[3] ?? 1) >>> 0 || 1;
const rnd = () => ((s ^= s << 13), (s ^= s >>> 17), (s ^= s << 5), s >>> 0);
const cursor = process.argv[4] === "cursor";
const short = process.argv[4] === "short";
const ansi = process.argv[4] === "ansi" || cursor;
const words = [
  "compile",
  "link",
  "test",
  "PASS",
  "FAIL",
  "warning:",
  "src/index.ts",
  "ok",
  "µs",
  "→",
  "déjà",
  "λ",
  "error[E0308]",
  "node_modules/x/y.js",
  "12.5%",
  "done",
];
const pool = Array.from({ length: 4096 }, () => {
  const n = rnd() % 100 < 3 ? 60 + (rnd() % 200) : 2 + (rnd() % 14);
  let line = "";
  for (let i = 0; i < n; i++) {
    const word = words[rnd() % words.length] + (rnd() % 100000).toString(36);
    line += " " + (ansi && rnd() % 8 === 0 ? `\x1b[${31 + (rnd() % 6)}m${word}\x1b[0m` : word);
  }
  return Buffer.from(line + "\n");
});
// `short`: the decimal counter, incremented in place on its digits (as seq does), so the generator
// stays faster than what it feeds.
const digits = Buffer.alloc(24, 0x30);
let width = 1;
function shortLine(out, at) {
  for (let i = 0; i < width; i++) out[at++] = digits[i];
  out[at++] = 0x0a;
  let i = width - 1;
  while (i >= 0 && digits[i] === 0x39) digits[i--] = 0x30;
  if (i >= 0) digits[i]++;
  else {
    digits.copyWithin(1, 0, width);
    digits[0] = 0x31;
    width++;
  }
  return at;
}
const BLOCK = 1 << 20;
let written = 0;
let counter = 0;
function fill() {
  const out = Buffer.allocUnsafe(BLOCK + 4096);
  let at = 0;
  while (at < BLOCK) {
    // Under a live display each log line erases the display row it lands on first.
    if (cursor) at += out.write("\x1b[2K", at, "latin1");
    if (short) {
      at = shortLine(out, at);
      continue;
    }
    at += out.write((counter++).toString(36), at, "latin1");
    const line = pool[rnd() & 4095];
    at += line.copy(out, at);
    if (cursor && (counter & 7) === 0) {
      const p = counter % 100;
      at += out.write(`\x1b[2K\x1b[33mlayer-a\x1b[0m ${p}%\n\x1b[2Klayer-b ${(p * 7) % 100}%\n\x1b[2Klayer-c ${(p * 3) % 100}%\n\x1b[3A`, at, "latin1");
    }
  }
  return out.subarray(0, at);
}
function pump() {
  while (written < total) {
    let b = fill();
    if (b.length > total - written) b = b.subarray(0, total - written);
    written += b.length;
    if (!process.stdout.write(b)) return void process.stdout.once("drain", pump);
  }
}
pump();
