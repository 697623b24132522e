#!/usr/bin/env node
// A realistic noisy build for trying spool: ~256 KB of CMake/GCC-style output over ~10 s, with ANSI
// colours, `\r` progress bars, compiler warnings with source excerpts, and a compiler error near the end
// (exit code 1). Deterministic for a given seed.
//   NOISY_BUILD_SECONDS  how long to take (default 10)
//   NOISY_BUILD_SEED     vary the log (default 1)
const SECONDS = Number(process.env.NOISY_BUILD_SECONDS ?? 10);
const TARGET_BYTES = 256 * 1024;
let seed = Number(process.env.NOISY_BUILD_SEED ?? 1) >>> 0 || 1;

// mulberry32: a seeded PRNG, so runs are reproducible yet lines are varied.
function rand() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const c = (code) => (s) => `\x1b[${code}m${s}\x1b[0m`;
const bold = c("1"),
  green = c("32"),
  boldGreen = c("1;32"),
  cyan = c("36"),
  magenta = c("1;35"),
  red = c("1;31"),
  blue = c("34"),
  dim = c("2"),
  yellow = c("33");

const ROOT = "/home/ci/work/netkit";
const MODULES = {
  "src/core": ["arena", "clock", "config", "error", "event_loop", "hash", "log", "refcount", "ring", "signal", "strbuf", "thread_pool", "timer_wheel", "vec"],
  "src/net": ["addr", "buffer", "conn_pool", "dns_cache", "poll", "proxy", "ratelimit", "resolver", "retry", "tcp", "udp", "unix_sock", "backoff"],
  "src/http": ["chunked", "cookie", "date", "headers", "h2_frame", "h2_hpack", "h2_stream", "method", "parser", "router", "status", "uri", "websocket"],
  "src/tls": ["alert", "cert_store", "cipher_suites", "handshake", "record", "session_cache", "sni", "x509_verify"],
  "src/crypto": ["aes_gcm", "base64", "chacha20", "ecdh", "hkdf", "hmac", "poly1305", "random", "sha256", "sha512"],
  "src/storage": ["btree", "checksum", "compaction", "journal", "manifest", "page_cache", "snapshot", "wal"],
  "src/json": ["decode", "encode", "number", "pointer", "schema", "unicode"],
  "src/cli": ["args", "color", "main", "progress", "table"],
  "third_party/zlib": ["adler32", "crc32", "deflate", "inffast", "inflate", "inftrees", "trees", "zutil"],
  "third_party/lz4": ["lz4", "lz4frame", "lz4hc", "xxhash"],
};
const IDENTS = [
  "len",
  "rc",
  "fd",
  "buf",
  "ctx",
  "flags",
  "timeout_ms",
  "n_read",
  "opts",
  "peer",
  "cursor",
  "slot",
  "entry",
  "hdr",
  "key",
  "old_cap",
  "node",
  "tmp",
  "state",
  "retries",
];
const TYPES = ["conn_t", "ring_t", "strbuf_t", "http_req_t", "tls_rec_t", "page_t", "event_t", "timer_t", "json_val_t"];

const WARNINGS = [
  () => {
    const v = pick(IDENTS);
    return [`unused variable ‘${v}’`, "-Wunused-variable", `    ${pick(["int", "size_t", "uint32_t", "ssize_t"])} ${v} = ${int(0, 64)};`, v.length];
  },
  () => [
    "comparison of integer expressions of different signedness: ‘int’ and ‘size_t’ {aka ‘long unsigned int’}",
    "-Wsign-compare",
    `    for (int i = 0; i < ${pick(IDENTS)}->count; i++) {`,
    3,
  ],
  () => {
    const v = pick(IDENTS);
    return [`‘${v}’ may be used uninitialized`, "-Wmaybe-uninitialized", `    return ${v} + ${int(1, 9)};`, v.length];
  },
  () => {
    const v = pick(IDENTS);
    return [
      `unused parameter ‘${v}’`,
      "-Wunused-parameter",
      `static int on_${pick(["read", "write", "close", "timeout", "error"])}(${pick(TYPES)} *self, void *${v})`,
      v.length + 6,
    ];
  },
  () => [
    "format ‘%d’ expects argument of type ‘int’, but argument 3 has type ‘long int’",
    "-Wformat=",
    `    log_debug("${pick(["queued", "flushed", "evicted", "resized"])} %d ${pick(["bytes", "entries", "pages", "frames"])}", ${pick(IDENTS)});`,
    2,
  ],
  () => {
    const f = pick(["strbuf_append", "ring_push", "hash_insert", "log_write", "json_emit"]);
    return [
      `passing argument 1 of ‘${f}’ discards ‘const’ qualifier from pointer target type`,
      "-Wdiscarded-qualifiers",
      `    ${f}(${pick(IDENTS)}, ${pick(IDENTS)});`,
      5,
    ];
  },
  () => [
    "conversion from ‘uint64_t’ {aka ‘long unsigned int’} to ‘uint32_t’ {aka ‘unsigned int’} may change value",
    "-Wconversion",
    `    uint32_t ${pick(IDENTS)} = now_ns() / ${pick(["1000", "1000000", "NSEC_PER_MS"])};`,
    20,
  ],
  () => ["this statement may fall through", "-Wimplicit-fallthrough=", `        ${pick(IDENTS)} |= ${pick(["F_READ", "F_WRITE", "F_EOF", "F_HUP"])};`, 10],
];

const out = [];
const say = (s) => out.push({ text: s });
// A make progress line; its percentage is filled in once the number of steps is known.
const PCT = "\u0000pct\u0000";
const step = (s) => out.push({ text: `[${PCT}] ${s}`, k });
const bar = (label, total, unit, frames) => out.push({ bar: { label, total, unit, frames } });
let bytes = 0;
const size = () => out.reduce((n, e) => n + (e.text ? Buffer.byteLength(e.text) : 0), 0);

// --- configure
say(`${bold("netkit")} 2.4.1 — ${dim("cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo")}\n`);
for (const [what, res] of [
  ["C compiler identification", "GNU 12.2.0"],
  ["Detecting C compiler ABI info", "done"],
  ["Check for working C compiler: /usr/bin/cc", "skipped"],
  ["Looking for pthread.h", "found"],
  ["Performing Test CMAKE_HAVE_LIBC_PTHREAD", "Success"],
  ["Looking for epoll_create1", "found"],
  ["Looking for kqueue", "not found"],
  ["Looking for accept4", "found"],
  ["Check size of off_t", "done (8)"],
  ["Found OpenSSL", '/usr/lib/x86_64-linux-gnu/libcrypto.so (found version "3.0.11")'],
  ["Found ZLIB", "bundled (third_party/zlib)"],
  ["Could NOT find liburing", "missing: LIBURING_LIBRARY LIBURING_INCLUDE_DIR"],
  ["Configuring done", `(${(rand() * 2 + 0.4).toFixed(1)}s)`],
  ["Generating done", `(${(rand() * 0.3 + 0.05).toFixed(2)}s)`],
  ["Build files have been written to", `${ROOT}/build`],
])
  say(
    `-- ${what}${res.startsWith("(") || what.endsWith("to") ? " " : " - "}${res.includes("not") || res.includes("NOT") || res.startsWith("missing") ? yellow(res) : res}\n`,
  );

// --- dependencies, with download bars
say(`\n${bold("Fetching dependencies")}\n`);
bar("  zlib-1.3.1.tar.gz   ", 1.5, "MB", 24);
bar("  lz4-1.9.4.tar.gz    ", 0.35, "MB", 12);
bar("  test-vectors.tar.zst", 4.2, "MB", 30);
say(`${dim("  verified 3 archives (sha256)")}\n\n`);

// --- compile
const files = [];
for (const [dir, names] of Object.entries(MODULES)) for (const n of names) files.push([dir, n]);
for (let i = files.length - 1; i > 0; i--) {
  const j = int(0, i);
  [files[i], files[j]] = [files[j], files[i]];
}
let warnings = 0;
let k = 0;
let generated = false;
const target = (dir) => (dir.startsWith("third_party") ? dir.split("/")[1] : "netkit");
const compile = (_k, dir, name, variant = "") => {
  step(`${green(`Building C object ${dir}/CMakeFiles/${target(dir)}.dir/${name}.c.o`)}\n`);
  const defs = dir.startsWith("third_party")
    ? "-DZ_HAVE_UNISTD_H -DLZ4_FAST_DEC_LOOP=1"
    : `-DNETKIT_VERSION=\\"2.4.1\\" -DNETKIT_HAVE_EPOLL=1 -DNETKIT_LOG_LEVEL=${int(1, 4)}`;
  say(
    `${dim(`/usr/bin/cc ${defs} -I${ROOT}/include -I${ROOT}/build/generated -I${ROOT}/${dir} ${variant === "_asan" ? "-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" : variant === "_fuzz" ? "-O1 -g -fsanitize=fuzzer-no-link,address" : variant === "_static" ? "-O2 -g -fvisibility=hidden" : "-O2 -g"} -fPIC -std=c11 -Wall -Wextra -Wpedantic -MD -MT ${dir}/CMakeFiles/${target(dir)}.dir/${name}.c.o -MF CMakeFiles/${target(dir)}.dir/${name}.c.o.d -o CMakeFiles/${target(dir)}.dir/${name}.c.o -c ${ROOT}/${dir}/${name}.c`)}\n`,
  );
};
const warn = (dir, name) => {
  warnings++;
  const [msg, flag, code, width] = pick(WARNINGS)();
  const line = int(12, 900),
    col = int(5, 20);
  if (rand() < 0.5)
    say(
      `${bold(`${dir}/${name}.c:`)} In function ‘${bold(`${name}_${pick(["init", "free", "flush", "step", "parse", "grow", "lookup", "poll", "encode", "reset"])}`)}’:\n`,
    );
  say(`${bold(`${dir}/${name}.c:${line}:${col}:`)} ${magenta("warning:")} ${msg} [${magenta(flag)}]\n`);
  say(`${String(line).padStart(5)} | ${code}\n      | ${" ".repeat(Math.max(0, col - 1))}${green(`^${"~".repeat(Math.max(0, width - 1))}`)}\n`);
};
// Spread the file list over the byte budget: repeat passes for other targets (shared, static, tests).
const variants = ["", "_static", "_asan", "_test", "_fuzz"];
outer: for (const variant of variants) {
  if (variant) say(`${boldGreen(`Scanning dependencies of target netkit${variant}`)}\n`);
  for (const [dir, name0] of files) {
    if (size() > TARGET_BYTES * 0.94) break outer;
    const testing = variant === "_test" || variant === "_fuzz";
    const name = testing ? `${variant.slice(1)}_${name0}` : name0;
    const d = testing ? dir.replace(/^src|^third_party/, variant === "_test" ? "tests" : "fuzz") : dir;
    compile(k++, d, name, variant);
    if (rand() < 0.22) warn(d, name);
    if (!generated && k === 40) {
      generated = true;
      step(`${blue(bold("Generating protocol tables (h2 static table, huffman codes, status strings)"))}\n`);
      bar("  gen_tables", 512, "entries", 20);
    }
    if (variant === "_test" && rand() < 0.12) {
      step(`${boldGreen(`Linking C executable tests/test_${name0}`)}\n`);
    }
  }
  step(
    `${boldGreen(`Linking C ${variant === "_static" ? "static library libnetkit.a" : variant === "_test" || variant === "_fuzz" ? "executables" : `shared library libnetkit${variant}.so`}`)}\n`,
  );
  if (!variant) bar("  ld.lld: writing libnetkit.so.2.4.1", 100, "%", 16);
  step(`Built target netkit${variant}\n`);
}

// --- last parallel jobs: the fuzz seed corpus unpacks while the network code compiles
step(`${blue(bold("Unpacking fuzz seed corpus"))}\n`);
bar("  fuzz/corpus", 1840, "files", 18);
for (const [dir, name] of files.slice(0, 6)) compile(k++, dir.replace(/^src|^third_party/, "fuzz"), `fuzz_${name}`, "_fuzz");

// --- the failing file, interleaved with parallel jobs, then make's unwinding
compile(k++, "src/net", "socket");
say(`${bold("src/net/socket.c:")} In function ‘${bold("socket_apply_opts")}’:\n`);
say(`${bold("src/net/socket.c:214:9:")} ${red("error:")} ‘struct sock_opts’ has no member named ‘linger_ms’; did you mean ‘linger_s’?\n`);
say(`  214 |   opts->${red("linger_ms")} = cfg->linger_timeout * 1000;\n      |         ${red("^~~~~~~~~")}\n      |         ${green("linger_s")}\n`);
say(
  `${bold("src/net/socket.h:41:12:")} ${cyan("note:")} ‘linger_s’ declared here\n   41 |   uint32_t ${cyan("linger_s")};\n      |            ${cyan("^~~~~~~~")}\n`,
);
compile(k++, "src/http", "server");
say(`make[2]: *** [src/net/CMakeFiles/netkit.dir/build.make:174: src/net/CMakeFiles/netkit.dir/socket.c.o] Error 1\n`);
say(`make[2]: *** Waiting for unfinished jobs....\n`);
say(`make[1]: *** [CMakeFiles/Makefile2:312: src/net/CMakeFiles/netkit.dir/all] Error 2\n`);
say(`make: *** [Makefile:146: all] Error 2\n`);
say(`${red("build failed")}: 1 error, ${warnings} warnings\n`);

const steps = k;
for (const e of out) if (e.text?.includes(PCT)) e.text = e.text.replace(PCT, `${String(Math.min(99, Math.floor((e.k / steps) * 100))).padStart(3)}%`);

// --- playback: bars frame by frame, text paced so the whole log takes SECONDS
const total = size();
const barTime = out.reduce((n, e) => n + (e.bar ? e.bar.frames : 0), 0);
const msPerFrame = Math.min(60, (SECONDS * 1000 * 0.3) / Math.max(1, barTime));
const textMs = SECONDS * 1000 - barTime * msPerFrame;
const bytesPerMs = total / Math.max(1, textMs);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const write = (s) => (process.stdout.write(s) ? undefined : new Promise((r) => process.stdout.once("drain", r)));

async function play() {
  let pending = "";
  const start = Date.now();
  let sent = 0;
  let barMs = 0;
  const flush = async () => {
    if (pending) await write(pending);
    pending = "";
  };
  for (const e of out) {
    if (e.text) {
      pending += e.text;
      sent += Buffer.byteLength(e.text);
      // Hold the stream to its schedule, in chunks of a few KB like a real pipe.
      const due = sent / bytesPerMs + barMs;
      const ahead = due - (Date.now() - start);
      if (ahead > 25 || pending.length > 4096) {
        await flush();
        if (ahead > 0) await sleep(ahead);
      }
      continue;
    }
    await flush();
    const { label, total: max, unit, frames } = e.bar;
    for (let f = 0; f <= frames; f++) {
      const frac = f / frames;
      const filled = Math.round(frac * 20);
      const amount = unit === "%" ? "" : `  ${(frac * max).toFixed(unit === "MB" ? 1 : 0)}/${max} ${unit}`;
      await write(`\r${label} [${green("#".repeat(filled))}${" ".repeat(20 - filled)}] ${String(Math.round(frac * 100)).padStart(3)}%${amount}`);
      await sleep(msPerFrame);
      barMs += msPerFrame;
    }
    await write("\n");
  }
  await flush();
  process.exitCode = 1;
}
await play();
