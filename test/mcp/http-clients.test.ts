// `spool mcp --http` with more than one client: each `initialize` gets an MCP session of its own over
// the one spool session, so a client restarted while the server runs connects again (it got "Server
// already initialized"), every client's calls land in the one record, a DELETE ends only its own
// MCP session unless no other client is connected, and the sessions kept are bounded.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openAgentSession, readTranscript } from "../../dist/harness/index.js";
import { createMcpServer, serveHttp } from "../../dist/mcp/index.js";
import { readJsonlSnapshot } from "../../dist/store/index.js";
import { killStarted, runSpool, startSpool } from "../support/cli.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { textOf, until } from "./helpers.js";

afterEach(killStarted);
afterAll(removeTempDirs);

const ENDPOINT = /MCP over HTTP at (\S+) \(header "Authorization: Bearer ([0-9a-f]+)"\)/;

async function connect(url: string, token: string, name: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  const bash = async (command: string) => textOf(await client.callTool({ name: "bash", arguments: { command } }));
  return { client, transport, bash };
}

const post = (url: string, token: string, headers: Record<string, string>) =>
  fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

describe("spool mcp --http with several clients", () => {
  it("a second and a third client connect while the first is gone; all their calls are in the one session", async () => {
    const dir = tempDir("spool-mcp-clients-");
    const root = join(dir, ".spool");
    const spool = startSpool(["mcp", "--http", "0", "--root", root], { cwd: dir });
    const [, url, token] = await until(() => ENDPOINT.exec(spool.err()), "the HTTP endpoint on stderr");
    const a = await connect(url!, token!, "a");
    // The second client got "Invalid Request: Server already initialized" here.
    const b = await connect(url!, token!, "b");
    expect(await a.bash("echo from-a")).toBe("from-a\n");
    expect(await b.bash("echo from-b")).toBe("from-b\n");
    // The first goes away without a DELETE, as an editor that is restarted does.
    await a.client.close();
    const c = await connect(url!, token!, "c");
    expect(await c.bash("echo from-c")).toBe("from-c\n");
    expect(await b.bash("echo b-again")).toBe("b-again\n");
    // An unknown session gets the SDK's 404, on which a client initializes again.
    const unknown = await post(url!, token!, { "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-06-18" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: -32001, message: "Session not found" } });
    // A DELETE while another client is connected ends only that client's MCP session.
    const cId = c.transport.sessionId!;
    await c.transport.terminateSession();
    await c.client.close();
    expect((await post(url!, token!, { "mcp-session-id": cId, "mcp-protocol-version": "2025-06-18" })).status).toBe(404);
    expect(await b.bash("echo b-still")).toBe("b-still\n");
    expect(spool.child.exitCode).toBe(null);
    // The last connected client's DELETE ends the server, as the one client's did.
    await b.transport.terminateSession();
    await b.client.close();
    expect(await spool.exited).toBe(0);

    const [id] = readdirSync(join(root, "sessions"));
    const transcript = readTranscript(readJsonlSnapshot(join(root, "sessions", id!, "session.jsonl")));
    const texts = transcript.filter((m) => m.toolName === "bash").map((m) => (m.content[0]?.type === "text" ? m.content[0].text : ""));
    expect(texts).toEqual(["from-a\n", "from-b\n", "from-c\n", "b-again\n", "b-still\n"]);
    const [session] = JSON.parse(runSpool(["sessions", "--json", "--root", root], { cwd: dir }).stdout) as { status: string }[];
    expect(session).toMatchObject({ status: "succeeded" });
  });

  it("keeps at most maxSessions: a new client is refused while each has a request open, and closes a gone client's session", async () => {
    const dir = tempDir("spool-mcp-clients-");
    const session = await openAgentSession({ root: join(dir, ".spool"), label: "mcp", tools: { cwd: dir, recall: false } });
    const http = await serveHttp(() => createMcpServer(session, { version: "0.0.0" }), { maxSessions: 2, idleTimeoutS: 0 });
    try {
      const a = await connect(http.url, http.token, "a");
      const b = await connect(http.url, http.token, "b");
      // A call in flight is a request open, whatever the GET streams do.
      const aCall = a.bash(`touch a.started; sleep 30`).catch(() => "cut");
      const bCall = b.bash(`touch b.started; sleep 1; echo b-done`);
      await until(() => existsSync(join(dir, "a.started")) && existsSync(join(dir, "b.started")), "both calls to start");
      await expect(connect(http.url, http.token, "c")).rejects.toThrow(
        "spool mcp already serves 2 MCP sessions, each with a request open; end one (its client's DELETE) or try again later",
      );
      const aId = a.transport.sessionId!;
      await a.client.close(); // gone without a DELETE: its requests closed
      expect(await aCall).toBe("cut");
      // Its session is the one with no request open: the new client takes its place.
      const c = await until(() => connect(http.url, http.token, "c").catch(() => undefined), "the third client to connect");
      expect(http.sessions()).toBe(2);
      expect((await post(http.url, http.token, { "mcp-session-id": aId, "mcp-protocol-version": "2025-06-18" })).status).toBe(404);
      expect(await c.bash("echo from-c")).toBe("from-c\n");
      expect(await bCall).toBe("b-done\n");
      await c.client.close();
      await b.client.close();
    } finally {
      await http.close();
      await session.close();
    }
  });
});
