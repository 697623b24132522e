// Builders for test histories (calls named "web_fetch", results via toolResult).
import { assistant, toolResult, userText, type AssistantMessage, type Message } from "../../src/context/index.js";

export function A(...ids: string[]): AssistantMessage {
  return assistant(
    "",
    ids.map((id) => ({ id, name: "web_fetch", input: { url: `https://example.com/${id}` } })),
  );
}
export const T = (id: string, text: string) => toolResult(id, text);
export const U = userText;
export const say = (text: string) => assistant(text);

/** Varied text of about `chars` characters in lines (never a repeated single character). */
export function lines(chars: number, seed = 1, label = "row"): string {
  let out = "";
  let i = 0;
  let x = seed;
  while (out.length < chars) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += `${label} ${i++} value=${x.toString(36)} status=${x % 3 === 0 ? "ok" : "pending"}\n`;
  }
  return out.slice(0, chars);
}

export function texts(messages: readonly Message[]): string[] {
  return messages.map((m) => (m.content.length > 0 && m.content[0]!.type === "text" ? m.content[0]!.text : ""));
}
