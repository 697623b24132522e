// An MCP server over an agent session whose recall gives images back (tools.recallImages): recalling
// an old image's key answers with the text and the image itself as an MCP image block. `spool mcp`
// offers no recall (the client keeps its own history), so this is the library's createMcpServer.
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, expect, it } from "vitest";
import { assistant, extractKeys, prepareHistory, userText, type Message } from "../../src/context/index.js";
import { openAgentSession } from "../../src/harness/index.js";
import { createMcpServer } from "../../src/mcp/index.js";
import { png } from "../support/png.js";
import { removeTempDirs, tempDir } from "../support/temp.js";

afterAll(removeTempDirs);

it("recall of an old image's key answers with the image as MCP image content", async () => {
  const root = join(tempDir("spool-mcp-recall-img-"), ".spool");
  for (const recallImages of [true, false]) {
    const session = await openAgentSession({ label: "test", root, tools: { recallImages } });
    const shot = png(800, 600, 50_000, 3);
    const history: Message[] = [
      userText("look"),
      assistant("", [{ id: "tc-1", name: "screenshot", input: {} }]),
      { role: "tool", toolCallId: "tc-1", toolName: "screenshot", isError: false, content: [{ type: "image", mediaType: "image/png", data: shot }] },
      userText("a"),
      assistant("b"),
      userText("c"),
      assistant("d"),
    ];
    const { messages } = prepareHistory(history, { workspace: session.workspace });
    const key = extractKeys(JSON.stringify(messages[2]))[0]!;
    const server = createMcpServer(session, { version: "0.0.0" });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    const result = (await client.callTool({ name: "recall", arguments: { key } })) as {
      content: { type: string; text?: string; data?: string; mimeType?: string }[];
    };
    await client.close();
    await session.close();
    if (recallImages) {
      expect(result.content).toHaveLength(2);
      expect(result.content[0]!.text).toContain("is attached to this answer");
      expect(result.content[1]).toEqual({ type: "image", data: shot, mimeType: "image/png" });
    } else {
      expect(result.content).toHaveLength(1);
      expect(result.content[0]!.text).toContain("cannot show the image again");
    }
  }
});
