// Starts the built `spool mcp` (dist/bin/main.js) under the MCP SDK's own Client and
// StdioClientTransport, in a fresh temp directory. Needs `npm run build` first, as `npm test` does.
import { mkdtemp, rm } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export { until } from "../support/until.js";

import { SPOOL_BIN as BIN } from "../support/cli.js";

export interface Connected {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  readonly dir: string;
  readonly root: string;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** The one session directory under root/sessions. */
  sessionDir(): string;
  close(): Promise<void>;
}

export async function connect(args: string[] = []): Promise<Connected> {
  const dir = await mkdtemp(join(tmpdir(), "spool-mcp-"));
  const root = join(dir, ".spool");
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--root", root, ...args], cwd: dir, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d));
  const client = new Client({ name: "spool-test", version: "1.0.0" });
  await client.connect(transport);
  let closed = false;
  return {
    client,
    transport,
    dir,
    root,
    stderr: () => stderr,
    sessionDir() {
      const ids = readdirSync(join(root, "sessions"));
      if (ids.length !== 1) throw new Error(`expected one session, found ${ids.join(", ")}`);
      return join(root, "sessions", ids[0]!);
    },
    async close() {
      if (!closed) await client.close();
      closed = true;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("");
}
