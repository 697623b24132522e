// A command that printed nothing but whose result carries a note (what it left running was ended):
// the result is the note itself. It began with an empty line ("\n[…]"), the separator meant to come
// between the output and the note, over MCP and in the AI SDK alike.
import { afterEach, expect, it } from "vitest";
import { connect, textOf, type Connected } from "./helpers.js";

let server: Connected | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it("a silent command whose result is only a note: the note, with no leading empty line", async () => {
  server = await connect();
  const silent = textOf(await server.client.callTool({ name: "bash", arguments: { command: "sleep 30 &" } }));
  expect(silent).toMatch(/^\[/);
  expect(silent).not.toMatch(/^\s/);
  // With output, the note stays apart from it by one empty line.
  const loud = textOf(await server.client.callTool({ name: "bash", arguments: { command: "echo hi; sleep 30 &" } }));
  expect(loud).toMatch(/^hi\n\n\[/);
});
