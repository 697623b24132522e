// An old screenshot comes back through recall, end to end: a tool returns a fresh screenshot (400,000
// base64 chars) every step through @ai-sdk/openai-compatible against the scripted server; spool's
// prepareStep turns the old ones into one-line stubs; the model recalls the first one by the key its
// stub names, and the next request carries that image's bytes again (as an image_url part where the
// provider sends multi-part tool content, inside the tool message's text where it does not). Later
// steps age the recalled copy back into the same stub: the image is back once, not for good.
import { join } from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, jsonSchema, tool } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createSpool } from "../../dist/ai-sdk/index.js";
import { png } from "../support/png.js";
import { removeTempDirs, tempDir } from "../support/temp.js";
import { startFakeOpenAI, toolText, type ChatMessage, type ChatStep } from "./fake-openai.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(removeTempDirs);

/** Steps 0-15 take screenshots, step 16 recalls the first one, steps 17-19 take more, then the model is done. */
const RECALL_AT = 16;
const STEPS = 20;
const shot = (n: number) => png(1280, 800, 300_000, n);
const STUB =
  /Old image cleared — image\/png, 1280x800, 300000 bytes\. Archived as <<ccr:([0-9a-f]{16})>>: recall (shows it again|describes it; it cannot be shown again)\./;

function stubOf(messages: ChatMessage[], toolCallId: string): RegExpExecArray {
  const m = messages.find((x) => x.role === "tool" && x.tool_call_id === toolCallId);
  const stub = STUB.exec(m ? toolText(m) : "");
  if (!stub) throw new Error(`no image stub in the result of ${toolCallId}`);
  return stub;
}

async function run(multiPart: boolean) {
  const spool = await createSpool({ root: join(tempDir("spool-ai-sdk-recall-img-"), ".spool") });
  cleanups.push(() => spool.close());
  let recalledKey: string | undefined;
  let stubWording: string | undefined;
  const script: ChatStep[] = [];
  for (let i = 0; i < STEPS; i++) {
    if (i !== RECALL_AT) script.push(() => [{ name: "screenshot", args: { n: i } }]);
    else
      script.push((messages) => {
        const stub = stubOf(messages, "call_0_0");
        recalledKey = stub[1];
        stubWording = stub[2];
        return [{ name: "recall", args: { key: recalledKey! } }];
      });
  }
  script.push(() => "Done.");
  const server = await startFakeOpenAI(script);
  cleanups.push(() => server.close());
  const provider = createOpenAICompatible({ name: "fake", baseURL: server.baseURL, apiKey: "test-key", supportsMultiPartToolContent: multiPart });
  const screenshot = tool({
    description: "Take a screenshot of the page",
    inputSchema: jsonSchema<{ n: number }>({ type: "object", properties: { n: { type: "number" } }, required: ["n"] }),
    execute: async ({ n }) => ({ n, data: shot(n) }),
    toModelOutput: ({ output }) => ({
      type: "content",
      value: [
        { type: "text", text: `screenshot ${output.n}` },
        { type: "file", mediaType: "image/png", data: { type: "data", data: output.data } },
      ],
    }),
  });
  const result = await generateText({
    model: provider.chatModel("fake-model"),
    tools: { screenshot, recall: spool.tools.recall },
    stopWhen: isStepCount(STEPS + 1),
    prompt: "Watch the page.",
    prepareStep: spool.prepareStep as never,
  });
  expect(result.text).toBe("Done.");
  expect(server.requests).toHaveLength(STEPS + 1);
  return { requests: server.requests, recalledKey: recalledKey!, stubWording: stubWording! };
}

/** How many times the request carries the bytes of screenshot `n`. */
const copies = (request: unknown, n: number) => JSON.stringify(request).split(shot(n)).length - 1;

describe("recall gives an old image back through the AI SDK", () => {
  for (const multiPart of [false, true]) {
    it(`a recalled screenshot reaches the next request as an image again${multiPart ? " (multi-part tool content)" : ""}`, async () => {
      const { requests, recalledKey, stubWording } = await run(multiPart);
      // The stub invites the recall on this surface.
      expect(stubWording).toBe("shows it again");
      // Before the recall the first screenshot is only its stub.
      expect(copies(requests[RECALL_AT], 0)).toBe(0);
      // The request after it carries it again, once, in the recall's tool message.
      const after = requests[RECALL_AT + 1]!;
      expect(copies(after, 0)).toBe(1);
      const answer = after.messages.find((m) => m.role === "tool" && m.tool_call_id === `call_${RECALL_AT}_0`)!;
      expect(JSON.stringify(answer)).toContain(shot(0));
      expect(JSON.stringify(answer)).toContain(
        `[recall <<ccr:${recalledKey}>>: the image cut from an old tool result — image/png, 1280x800, 300000 bytes — is attached to this answer.]`,
      );
      if (multiPart) expect(JSON.stringify(answer)).toContain(`"url":"data:image/png;base64,${shot(0).slice(0, 100)}`);
      const images = (r: unknown) => Array.from({ length: STEPS }, (_, n) => copies(r, n)).reduce((a, b) => a + b, 0);
      console.log(
        `multi-part ${multiPart}: images carried / request chars: before the recall ${images(requests[RECALL_AT])} / ${JSON.stringify(requests[RECALL_AT]).length}, ` +
          `after it ${images(after)} / ${JSON.stringify(after).length}, at the end ${images(requests[STEPS])} / ${JSON.stringify(requests[STEPS]).length}`,
      );
      // Old again, the recalled copy becomes the same stub (same key): the image is back once, not for good.
      const last = requests[STEPS]!;
      expect(copies(last, 0)).toBe(0);
      expect(stubOf(last.messages, `call_${RECALL_AT}_0`)[1]).toBe(recalledKey);
    });
  }
});
