// Serving over stdio until the client goes: stdin ending (the client closed its end or exited), stdout
// failing (EPIPE), or the server being closed. The SDK's stdio transport does not watch for the end of
// stdin, so without this a `spool mcp` whose client died would run on with its commands. A message over
// MAX_STDIO_MESSAGE_BYTES is answered as refused instead of reaching the transport, which closed on it.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Readable, Writable } from "node:stream";
import { formatBytes } from "../capture/index.js";
import { createMessageGuard, oversizeRequestId, type OversizeMessage } from "./message-guard.js";

export type DisconnectReason = "stdin-ended" | "stdout-failed" | "closed";

/** The SDK's own bound (STDIO_DEFAULT_MAX_BUFFER_SIZE, 1.32.2): larger messages were never taken. */
export const MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024;

/** The answer to a request too large to take: a tool error the model reads for a call, else a JSON-RPC error. */
export function oversizeAnswer(message: OversizeMessage, maxBytes: number): JSONRPCMessage | undefined {
  const id = oversizeRequestId(message);
  if (id === undefined) return undefined;
  const call = /^\s*\{.*?"method"\s*:\s*"tools\/call"/s.test(message.head.slice(0, 200));
  const text =
    `spool could not take this ${call ? "tool call" : "request"}: it is ${formatBytes(message.bytes)}, over the ${formatBytes(maxBytes)} one message may hold, so nothing was run. ` +
    "No tool takes that much (a bash command holds at most 128 KiB, a process_write input 1 MiB): write large content to a file and pass its path.";
  return call
    ? { jsonrpc: "2.0", id, result: { content: [{ type: "text", text }], isError: true } }
    : { jsonrpc: "2.0", id, error: { code: -32600, message: text } };
}

export async function serveStdio(
  server: Server,
  io: { stdin?: Readable; stdout?: Writable; stderr?: Writable; maxMessageBytes?: number } = {},
): Promise<DisconnectReason> {
  const stdin = io.stdin ?? process.stdin;
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const maxBytes = io.maxMessageBytes ?? MAX_STDIO_MESSAGE_BYTES;
  let settle!: (reason: DisconnectReason) => void;
  const ended = new Promise<DisconnectReason>((resolve) => (settle = resolve));
  const onEnd = (): void => settle("stdin-ended");
  const onOutError = (): void => settle("stdout-failed");
  stdin.once("end", onEnd);
  stdin.once("close", onEnd);
  stdout.on("error", onOutError);
  // The SDK's transport waits for "drain" once per message sent while stdout is full, so results of
  // many calls ending at once (400 under load) warned MaxListenersExceededWarning on stderr: no leak,
  // each listener goes with its drain.
  const maxListeners = stdout.getMaxListeners();
  stdout.setMaxListeners(0);
  server.onclose = () => settle("closed");
  const guard = createMessageGuard(maxBytes, (message) => {
    const answer = oversizeAnswer(message, maxBytes);
    stderr.write(`spool mcp: refused a ${formatBytes(message.bytes)} message (at most ${formatBytes(maxBytes)})${answer ? "; answered it as an error" : ""}\n`);
    if (answer) void transport.send(answer).catch(() => undefined);
  });
  stdin.pipe(guard);
  // The guard hands on whole lines of at most maxBytes, so the transport's own bound is never met.
  const transport = new StdioServerTransport(guard, stdout, { maxBufferSize: maxBytes + 1 });
  await server.connect(transport);
  const reason = await ended;
  stdin.off("end", onEnd);
  stdin.off("close", onEnd);
  stdin.unpipe(guard);
  stdout.setMaxListeners(maxListeners);
  if (reason !== "closed") await server.close().catch(() => undefined);
  return reason;
}
