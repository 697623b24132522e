// `spool mcp --http PORT`: the Streamable HTTP transport, driven by the MCP SDK's own
// StreamableHTTPClientTransport: bearer token required, tools served, and the process ends when the
// client terminates its session, ending a command still running and recording the session interrupted.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killStarted, runSpool, startSpool } from "../support/cli.js";
import { alive as running } from "../support/process-group.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { alive, textOf, until } from "./helpers.js";

afterEach(killStarted);
afterAll(removeTempDirs);

describe("spool mcp --http", () => {
  it("serves the tools over Streamable HTTP behind a bearer token and exits when the client ends its session", async () => {
    const dir = tempDir("spool-mcp-http-");
    const { child, exited, err } = startSpool(["mcp", "--http", "0", "--root", join(dir, ".spool")], { cwd: dir });
    const [, url, token] = await until(
      () => /MCP over HTTP at (\S+) \(header "Authorization: Bearer ([0-9a-f]+)"\)/.exec(err()),
      "the HTTP endpoint on stderr",
    );

    const denied = await fetch(url!, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer nope" }, body: "{}" });
    expect(denied.status).toBe(401);

    const transport = new StreamableHTTPClientTransport(new URL(url!), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new Client({ name: "spool-test", version: "1.0.0" });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      "bash",
      "process_kill",
      "process_list",
      "process_output",
      "process_write",
      "read",
    ]);
    const result = await client.callTool({ name: "bash", arguments: { command: "seq 1 100000" } });
    expect(textOf(result)).toContain("100000\n");
    expect(result.structuredContent).toMatchObject({ exitCode: 0, truncated: true, totalLines: 100000 });

    await transport.terminateSession();
    await client.close();
    expect(await exited).toBe(0);
    expect(alive(child.pid!)).toBe(false);
  });

  it("a client that ends its session mid-command ends the command, and the session shows as interrupted (as over stdio)", async () => {
    const dir = tempDir("spool-mcp-http-");
    const root = join(dir, ".spool");
    const { exited, err } = startSpool(["mcp", "--http", "0", "--root", root], { cwd: dir });
    const [, url, token] = await until(
      () => /MCP over HTTP at (\S+) \(header "Authorization: Bearer ([0-9a-f]+)"\)/.exec(err()),
      "the HTTP endpoint on stderr",
    );
    const transport = new StreamableHTTPClientTransport(new URL(url!), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new Client({ name: "spool-test", version: "1.0.0" });
    await client.connect(transport);
    const pidFile = join(dir, "sleep.pid");
    const call = client.callTool({ name: "bash", arguments: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }).catch(() => undefined);
    const pid = Number(await until(() => (existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim() || undefined : undefined), "the command's pid"));
    await transport.terminateSession();
    await client.close(); // the call's answer never comes: its stream ended with the session
    await call;
    expect(await exited).toBe(0);
    // Not kill(pid, 0): the killed sleep may not be reaped yet by whoever inherited it.
    await until(() => !running(pid), "the command's sleep to be gone", 3000);
    const [session] = JSON.parse(runSpool(["sessions", "--json", "--root", root], { cwd: dir }).stdout) as { status: string }[];
    // It read "succeeded": the session was closed after the wait for lingering connections, when the cut-off call had settled.
    expect(session).toMatchObject({ status: "interrupted" });
  });
});
