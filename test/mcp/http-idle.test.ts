// `spool mcp --http --idle-timeout S`: a client that died without ending its session (SIGKILLed, so
// the kernel closed its sockets) leaves nothing running: after S seconds with no request open the
// session ends as on the client's DELETE. An open request is activity, so a foreground call longer than
// S is never cut; 0 never expires; bad values are usage errors.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { serveHttp } from "../../src/mcp/index.js";
import { killStarted, runSpool, startSpool } from "../support/cli.js";
import { alive as running } from "../support/process-group.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { textOf, until } from "./helpers.js";

afterEach(killStarted);
afterAll(removeTempDirs);

const ENDPOINT = /MCP over HTTP at (\S+) \(header "Authorization: Bearer ([0-9a-f]+)"\)/;
const IDLE_LINE = /^spool mcp: no request from the client for 1 s \(--idle-timeout\): ending the session and its commands$/m;

async function serve(dir: string, idle: string) {
  const root = join(dir, ".spool");
  const started = startSpool(["mcp", "--http", "0", "--idle-timeout", idle, "--root", root], { cwd: dir });
  const [, url, token] = await until(() => ENDPOINT.exec(started.err()) ?? (started.child.exitCode !== null && [started.err()]), "the HTTP endpoint on stderr");
  if (token === undefined) throw new Error(`spool mcp exited: ${url}`);
  return { ...started, root, url: url!, token };
}

async function connect(url: string, token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "spool-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

// The client in a process of its own, to be SIGKILLed: it starts a background and a foreground
// `sleep 300`, each writing its pid first (`exec` makes the shell the sleep), and waits.
const require = createRequire(import.meta.url);
const DYING_CLIENT = `
const { Client } = require(${JSON.stringify(require.resolve("@modelcontextprotocol/sdk/client/index.js"))});
const { StreamableHTTPClientTransport } = require(${JSON.stringify(require.resolve("@modelcontextprotocol/sdk/client/streamableHttp.js"))});
(async () => {
  const [url, token, only] = process.argv.slice(1);
  const client = new Client({ name: "dying", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: "Bearer " + token } } }));
  await client.callTool({ name: "bash", arguments: { command: "echo $$ > bg.pid; exec sleep 300", background: true } });
  if (only !== "background") client.callTool({ name: "bash", arguments: { command: "echo $$ > fg.pid; exec sleep 300" } }, undefined, { timeout: 600000 });
  else require("node:fs").writeFileSync("fg.pid", "none");
})();
`;

const pidIn = (file: string) => until(() => (existsSync(file) ? Number(readFileSync(file, "utf8").trim()) || undefined : undefined), file);

describe("spool mcp --http --idle-timeout", () => {
  it("a client killed mid-command: the server ends the session as its DELETE would, its commands gone, exit 0", async () => {
    const dir = tempDir("spool-mcp-idle-");
    const spool = await serve(dir, "1");
    const dying = spawn(process.execPath, ["-e", DYING_CLIENT, spool.url, spool.token], { cwd: dir, stdio: "ignore" });
    const bg = await pidIn(join(dir, "bg.pid"));
    const fg = await pidIn(join(dir, "fg.pid"));
    dying.kill("SIGKILL");
    const killedAt = Date.now();
    const code = await Promise.race([spool.exited, new Promise((r) => setTimeout(() => r("still running"), 8000))]);
    expect(code).toBe(0);
    // Measured: 1.025–1.030 s in 5 runs (the idle second, then ~25 ms to end the session and its sleeps).
    expect(Date.now() - killedAt).toBeLessThan(8000);
    expect(spool.err()).toMatch(IDLE_LINE);
    await until(() => !running(bg) && !running(fg), "both sleeps to be gone", 3000);
    const [session] = JSON.parse(runSpool(["sessions", "--json", "--root", spool.root], { cwd: dir }).stdout) as { status: string }[];
    // What the DELETE path records for a client gone mid-command (http.test.ts).
    expect(session).toMatchObject({ status: "interrupted", reason: "no request from the client for 1 s (--idle-timeout)" });
  });

  it("a client killed with only a background process running: the session reads interrupted, not succeeded", async () => {
    const dir = tempDir("spool-mcp-idle-");
    const spool = await serve(dir, "1");
    const dying = spawn(process.execPath, ["-e", DYING_CLIENT, spool.url, spool.token, "background"], { cwd: dir, stdio: "ignore" });
    const bg = await pidIn(join(dir, "bg.pid"));
    await until(() => existsSync(join(dir, "fg.pid")), "the client to be done");
    dying.kill("SIGKILL");
    expect(await spool.exited).toBe(0);
    await until(() => !running(bg), "the background sleep to be gone", 3000);
    const [session] = JSON.parse(runSpool(["sessions", "--json", "--root", spool.root], { cwd: dir }).stdout) as { status: string }[];
    expect(session).toMatchObject({ status: "interrupted", reason: "no request from the client for 1 s (--idle-timeout)" });
  });

  it("a foreground call longer than the idle time completes and its result arrives", async () => {
    const dir = tempDir("spool-mcp-idle-");
    const spool = await serve(dir, "1");
    const { client, transport } = await connect(spool.url, spool.token);
    const call = client.callTool({ name: "bash", arguments: { command: "sleep 3; echo done" } });
    // Cut by the expiry, the call would wait out the SDK's 60 s request timeout.
    const cut = spool.exited.then((code) => Promise.reject(new Error(`spool mcp exited ${code} mid-call:\n${spool.err()}`)));
    const result = await Promise.race([call, cut]);
    expect(textOf(result)).toContain("done");
    expect(result.structuredContent).toMatchObject({ exitCode: 0 });
    // A connected SDK client holds its GET stream open: idle between calls, it keeps its session.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect(spool.err()).not.toMatch(IDLE_LINE);
    await transport.terminateSession();
    await client.close();
    expect(await spool.exited).toBe(0);
  });

  it("--idle-timeout 0 never expires", async () => {
    const dir = tempDir("spool-mcp-idle-");
    const spool = await serve(dir, "0");
    await new Promise((r) => setTimeout(r, 2500));
    expect(spool.child.exitCode).toBe(null);
    const { client, transport } = await connect(spool.url, spool.token);
    await transport.terminateSession();
    await client.close();
    expect(await spool.exited).toBe(0);
  });

  it("requests without the token do not keep the session", async () => {
    const dir = tempDir("spool-mcp-idle-");
    const spool = await serve(dir, "1");
    let exited: number | null | undefined;
    void spool.exited.then((code) => (exited = code));
    const started = Date.now();
    while (exited === undefined && Date.now() - started < 5000) {
      const r = await fetch(spool.url, { method: "POST", headers: { authorization: "Bearer nope" }, body: "{}" }).catch(() => undefined);
      if (r !== undefined) expect(r.status).toBe(401);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(exited).toBe(0);
    expect(spool.err()).toMatch(IDLE_LINE);
  });

  it("serveHttp refuses an idle time a timer cannot hold", async () => {
    const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } });
    for (const idleTimeoutS of [-1, 1.5, 2_147_484, Number.NaN]) {
      await expect(serveHttp(() => server, { idleTimeoutS })).rejects.toMatchObject({ code: "SPOOL_MCP_BAD_OPTION" });
    }
  });

  it.each([
    [
      ["--http", "0", "--idle-timeout", "soon"],
      '--idle-timeout must be whole seconds from 0 (never) to 2147483, or a number with a unit (s, m, h, d: 30m), got "soon"',
    ],
    [
      ["--http", "0", "--idle-timeout=-1"],
      '--idle-timeout must be whole seconds from 0 (never) to 2147483, or a number with a unit (s, m, h, d: 30m), got "-1"',
    ],
    [
      ["--http", "0", "--idle-timeout", "1.5"],
      '--idle-timeout must be whole seconds from 0 (never) to 2147483, or a number with a unit (s, m, h, d: 30m), got "1.5"',
    ],
    [
      ["--http", "0", "--idle-timeout", "2147484"],
      '--idle-timeout must be whole seconds from 0 (never) to 2147483, or a number with a unit (s, m, h, d: 30m), got "2147484"',
    ],
    [["--idle-timeout", "60"], "--idle-timeout applies to --http only; add --http PORT or drop it"],
  ])("refuses %j with one line and exit 2", (args, message) => {
    const dir = tempDir("spool-mcp-idle-");
    const r = runSpool(["mcp", "--root", join(dir, ".spool"), ...args], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`spool mcp: ${message}\nRun 'spool mcp --help' for usage.\n`);
  });
});
