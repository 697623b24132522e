// `spool mcp --http PORT`: the Streamable HTTP transport, driven by the MCP SDK's own
// StreamableHTTPClientTransport: bearer token required, tools served, and the process ends when the
// client terminates its session.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { alive, BIN, textOf, until } from "./helpers.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe("spool mcp --http", () => {
  it("serves the tools over Streamable HTTP behind a bearer token and exits when the client ends its session", async () => {
    const dir = await mkdtemp(join(tmpdir(), "spool-mcp-http-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const child: ChildProcess = spawn(process.execPath, [BIN, "mcp", "--http", "0", "--root", join(dir, ".spool")], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d));
    const [, url, token] = await until(
      () => /MCP over HTTP at (\S+) \(header "Authorization: Bearer ([0-9a-f]+)"\)/.exec(stderr),
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
      "recall",
    ]);
    const result = await client.callTool({ name: "bash", arguments: { command: "seq 1 100000" } });
    expect(textOf(result)).toContain("100000\n");
    expect(result.structuredContent).toMatchObject({ exitCode: 0, truncated: true, totalLines: 100000 });

    await transport.terminateSession();
    await client.close();
    expect(await exited).toBe(0);
    expect(alive(child.pid!)).toBe(false);
  });
});
