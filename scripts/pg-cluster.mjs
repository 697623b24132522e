// A throwaway PostgreSQL cluster for tests and benchmarks: initdb into a temp directory, then the
// server on 127.0.0.1 at a free port. Debian's server binaries (/usr/lib/postgresql/<v>/bin) are used;
// scripts/pretest.sh installs them on a fresh machine. initdb refuses to run as root, so as root the
// cluster is made and run by the unprivileged `postgres` user (or `nobody`) through runuser.
// The server is started through a small shell that stops it (immediate mode) when our stdin pipe
// closes, so a test worker that dies never leaves a postmaster behind.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The newest Debian PostgreSQL bin directory, or undefined. */
export function findPgBin() {
  if (process.env.SPOOL_PG_BIN) return process.env.SPOOL_PG_BIN;
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")) && existsSync(join(base, v, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(base, versions[0], "bin") : undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function runAsUser() {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const line = execFileSync("getent", ["passwd", name], { encoding: "utf8" }).trim();
      const [, , uid, gid] = line.split(":");
      return { name, uid: Number(uid), gid: Number(gid) };
    } catch {
      /* try the next */
    }
  }
  throw new Error("running as root and neither a `postgres` nor a `nobody` user exists to run initdb as");
}

/**
 * Starts a cluster; resolves to { url, host, port, dir, stop(), kill() }.
 * `url` connects as the superuser `spool` (password auth on 127.0.0.1) to the database `spool`.
 */
export async function startPgCluster(options = {}) {
  const bin = findPgBin();
  if (!bin)
    throw new Error(
      "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: run `bash scripts/pretest.sh` (it installs Debian's postgresql) or set SPOOL_TEST_PG",
    );
  const dir = mkdtempSync(join(tmpdir(), "spool-pg-"));
  const data = join(dir, "data");
  const user = runAsUser();
  const as = (cmd, args) => (user ? ["runuser", ["-u", user.name, "--", cmd, ...args]] : [cmd, args]);
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  }
  // Password auth over TCP (so tests can present wrong credentials), trust on the private socket.
  const password = "spool-test-pw";
  const pwfile = join(dir, "pwfile");
  writeFileSync(pwfile, password + "\n");
  if (user) chownSync(pwfile, user.uid, user.gid);
  const [c1, a1] = as(join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "spool",
    "--pwfile",
    pwfile,
    "--auth-host=scram-sha-256",
    "--auth-local=trust",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]);
  execFileSync(c1, a1, { stdio: ["ignore", "ignore", "pipe"] });
  const port = options.port ?? (await freePort());
  const settings = [
    "-c",
    `port=${port}`,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    `unix_socket_directories=${dir}`,
    // Tests trade the server's own crash safety for speed (they kill clients, never the machine);
    // benchmarks pass { durable: true } so "os" durability includes the disk flush.
    ...(options.durable ? [] : ["-c", "fsync=off", "-c", "full_page_writes=off"]),
    "-c",
    `max_connections=${options.maxConnections ?? 200}`,
    "-c",
    "shared_buffers=64MB",
  ];
  const quoted = [join(bin, "postgres"), "-D", data, ...settings].map((w) => `'${String(w).replace(/'/g, `'\\''`)}'`).join(" ");
  // The shell owns the postmaster: stdin EOF (our death, or stop()) stops it with SIGQUIT (immediate).
  const script = `${quoted} </dev/null >>'${dir}/server.log' 2>&1 & pid=$!; cat >/dev/null; kill -QUIT $pid 2>/dev/null; wait $pid`;
  const admin = `postgres://spool:${password}@127.0.0.1:${port}/postgres`;
  let running;
  const launch = async () => {
    const [c, a] = as("sh", ["-c", script]);
    const child = spawn(c, a, { stdio: ["pipe", "ignore", "ignore"] });
    const exited = new Promise((r) => child.once("exit", r));
    running = { child, exited };
    const pg = (await import("pg")).default;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const client = new pg.Client({ connectionString: admin });
      try {
        await client.connect();
        const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = 'spool'");
        if (exists.rowCount === 0) await client.query("CREATE DATABASE spool");
        await client.end();
        return;
      } catch (e) {
        await client.end().catch(() => {});
        if (Date.now() > deadline || child.exitCode !== null) {
          child.stdin.end();
          throw new Error(`the throwaway PostgreSQL cluster in ${dir} did not start: ${e.message}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const halt = async () => {
    if (!running) return;
    const r = running;
    running = undefined;
    r.child.stdin.end();
    await r.exited;
  };
  await launch();
  return {
    url: `postgres://spool:${password}@127.0.0.1:${port}/spool`,
    password,
    host: "127.0.0.1",
    port,
    dir,
    bin,
    /** Stops the server (immediate mode) and keeps its data: `start()` brings the same cluster back. */
    halt,
    start: launch,
    /** Stops the server and removes the cluster. */
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// `node scripts/pg-cluster.mjs` starts one and prints its URL until Ctrl-C (for benchmarks by hand).
if (import.meta.url === `file://${process.argv[1]}`) {
  const c = await startPgCluster();
  console.log(c.url);
  process.on("SIGINT", () => c.stop().then(() => process.exit(0)));
}
