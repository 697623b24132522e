// `spool mcp --http PORT`: the Streamable HTTP transport, driven by the MCP SDK's own
// StreamableHTTPClientTransport: bearer token required, tools served, and the process ends when the
// client terminates its session.
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killStarted, startSpool } from "../support/cli.js";
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
});
