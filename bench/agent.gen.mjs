// Realistic tool outputs for bench:agent, fresh for every seed: `node agent.gen.mjs KIND SEED SIZE`.
//   build   — a compiler/CMake log with coloured progress, warnings and (sometimes) an error
//   tests   — a test runner: passing cases, a few failures with diffs, a summary (exit 1 on failure)
//   install — a package manager with carriage-return progress frames and ANSI colour
//   grep    — `grep -rn` style matches across a tree
//   log     — `git log --stat` style history
// SIZE is approximate bytes of output.
const [kind = "build", seedArg = "1", sizeArg = "200000"] = process.argv.slice(2);
let seed = Number(seedArg) >>> 0 || 1;
const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
const pick = (a) => a[Math.floor(rand() * a.length)];
const size = Number(sizeArg);
const words = ["parser", "lexer", "socket", "buffer", "config", "render", "cache", "worker", "router", "schema", "token", "stream"];
let out = "";
const flush = () => {
  if (out.length > 65536) {
    process.stdout.write(out);
    written += out.length;
    out = "";
  }
};
let written = 0;
const total = () => written + out.length;
let failed = false;
if (kind === "build") {
  let i = 0;
  while (total() < size) {
    const pct = String(Math.min(99, Math.floor((total() / size) * 100))).padStart(3);
    const mod = pick(words);
    if (rand() < 0.02)
      out += `src/${mod}/${mod}_${i}.c:${Math.floor(rand() * 900)}:${Math.floor(rand() * 80)}: \x1b[35mwarning:\x1b[0m unused variable '${pick(words)}_${i}' [-Wunused-variable]\n`;
    else out += `[${pct}%] \x1b[32mBuilding C object src/${mod}/CMakeFiles/${mod}.dir/${mod}_${i}.c.o\x1b[0m\n`;
    i++;
    flush();
  }
  if (rand() < 0.5) {
    failed = true;
    out += `src/net/socket.c:214:9: \x1b[31merror:\x1b[0m 'struct sock_opts' has no member named 'linger_ms'\nmake[2]: *** [src/net/CMakeFiles/net.dir/build.make:76] Error 1\n`;
  } else out += "[100%] Linking C executable app\n[100%] Built target app\n";
} else if (kind === "tests") {
  let n = 0;
  while (total() < size) {
    const file = `test/${pick(words)}/${pick(words)}.test.ts`;
    for (let c = 0; c < 20; c++) out += ` \x1b[32m✓\x1b[0m ${file} > ${pick(words)} handles case ${n++} (${Math.floor(rand() * 40)} ms)\n`;
    flush();
  }
  const fails = Math.floor(rand() * 3);
  for (let f = 0; f < fails; f++) {
    failed = true;
    out += ` \x1b[31m×\x1b[0m test/${pick(words)}.test.ts > ${pick(words)} rejects bad input\n   AssertionError: expected '${pick(words)}' to be '${pick(words)}'\n   - Expected\n   + Received\n`;
  }
  out += `\n Test Files  ${fails ? `${fails} failed | ` : ""}${Math.ceil(n / 20)} passed\n      Tests  ${fails ? `${fails} failed | ` : ""}${n} passed\n`;
} else if (kind === "install") {
  let p = 0;
  while (total() < size) {
    for (let k = 0; k <= 100; k += 5) out += `\r\x1b[36m⠋\x1b[0m reify:${pick(words)}-${p}: timing reifyNode ${k}%`;
    out += `\n\x1b[2madded ${pick(words)}-${p}@${Math.floor(rand() * 9)}.${Math.floor(rand() * 20)}.0\x1b[0m\n`;
    p++;
    flush();
  }
  out += `\nadded ${p} packages in ${Math.floor(rand() * 30)}s\n`;
} else if (kind === "grep") {
  while (total() < size)
    (out += `src/${pick(words)}/${pick(words)}.ts:${Math.floor(rand() * 2000)}:  const ${pick(words)} = ${pick(words)}.${pick(words)}(${pick(words)});\n`),
      flush();
} else {
  let c = 0;
  while (total() < size) {
    out += `commit ${Math.floor(rand() * 2 ** 52)
      .toString(16)
      .padStart(
        40,
        "0",
      )}\nAuthor: Dev ${c % 7} <dev${c % 7}@example.com>\nDate:   Mon Nov ${1 + (c % 28)} 10:00:00 2026\n\n    ${pick(words)}: fix ${pick(words)} when ${pick(words)} is empty\n\n`;
    for (let f = 0; f < 4; f++)
      out += ` src/${pick(words)}/${pick(words)}.ts | ${Math.floor(rand() * 80)} ${"+".repeat(Math.floor(rand() * 30))}${"-".repeat(Math.floor(rand() * 10))}\n`;
    c++;
    flush();
  }
}
process.stdout.write(out);
process.exitCode = failed ? 1 : 0;
