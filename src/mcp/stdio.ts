// Serving over stdio until the client goes: stdin ending (the client closed its end or exited), stdout
// failing (EPIPE), or the server being closed. The SDK's stdio transport does not watch for the end of
// stdin, so without this a `spool mcp` whose client died would run on with its commands.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Readable, Writable } from "node:stream";

export type DisconnectReason = "stdin-ended" | "stdout-failed" | "closed";

export async function serveStdio(server: Server, io: { stdin?: Readable; stdout?: Writable } = {}): Promise<DisconnectReason> {
  const stdin = io.stdin ?? process.stdin;
  const stdout = io.stdout ?? process.stdout;
  let settle!: (reason: DisconnectReason) => void;
  const ended = new Promise<DisconnectReason>((resolve) => (settle = resolve));
  const onEnd = (): void => settle("stdin-ended");
  const onOutError = (): void => settle("stdout-failed");
  stdin.once("end", onEnd);
  stdin.once("close", onEnd);
  stdout.on("error", onOutError);
  server.onclose = () => settle("closed");
  await server.connect(new StdioServerTransport(stdin, stdout));
  const reason = await ended;
  stdin.off("end", onEnd);
  stdin.off("close", onEnd);
  if (reason !== "closed") await server.close().catch(() => undefined);
  return reason;
}
