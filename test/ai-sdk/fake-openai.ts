// A scripted OpenAI-compatible chat-completions server on 127.0.0.1, so a real provider package
// (@ai-sdk/openai-compatible) runs its own HTTP and streaming code against spool. Each request is
// answered by the next step of a script that reads the request's messages, as a model would; every
// request body is kept for the test to inspect. Streams tool-call arguments in two chunks.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatMessage {
  role: string;
  content?: string | null | { type: string; text?: string }[];
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: { function: { name: string } }[];
  stream?: boolean;
}

export type ChatStep = (messages: ChatMessage[]) => { name: string; args: Record<string, unknown> }[] | string;

export interface FakeOpenAI {
  readonly baseURL: string;
  readonly requests: ChatRequest[];
  close(): Promise<void>;
}

/** The text of a tool message (string content, or text parts). */
export function toolText(m: ChatMessage): string {
  if (typeof m.content === "string") return m.content;
  return (m.content ?? []).map((p) => p.text ?? "").join("");
}

/** The tool message answering `toolCallId`. */
export function toolResult(messages: ChatMessage[], toolCallId: string): string {
  const m = messages.find((x) => x.role === "tool" && x.tool_call_id === toolCallId);
  if (!m) throw new Error(`no tool message for ${toolCallId}`);
  return toolText(m);
}

export async function startFakeOpenAI(steps: readonly ChatStep[]): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const request = JSON.parse(body) as ChatRequest;
      const i = requests.length;
      requests.push(request);
      const step = steps[i];
      if (!step) {
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `script has ${steps.length} steps` } }));
        return;
      }
      let answer: ReturnType<ChatStep>;
      try {
        answer = step(request.messages);
      } catch (err) {
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: (err as Error).message } }));
        return;
      }
      const calls = typeof answer === "string" ? [] : answer.map((c, k) => ({ id: `call_${i}_${k}`, name: c.name, arguments: JSON.stringify(c.args) }));
      const text = typeof answer === "string" ? answer : null;
      const finish = calls.length > 0 ? "tool_calls" : "stop";
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      const base = { id: `chatcmpl-${i}`, created: 1_700_000_000, model: request.model };
      if (!request.stream) {
        const message = {
          role: "assistant",
          content: text,
          ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) } : {}),
        };
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (delta: unknown, finishReason: string | null = null, extra: object = {}): void => {
        res.write(
          `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`,
        );
      };
      send({ role: "assistant", content: "" });
      if (text !== null) for (const word of text.split(/(?<= )/)) send({ content: word });
      calls.forEach((c, k) => {
        const half = Math.floor(c.arguments.length / 2);
        send({ tool_calls: [{ index: k, id: c.id, type: "function", function: { name: c.name, arguments: c.arguments.slice(0, half) } }] });
        send({ tool_calls: [{ index: k, function: { arguments: c.arguments.slice(half) } }] });
      });
      send({}, finish, { usage });
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
