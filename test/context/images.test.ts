// Images in tool results age like text: cleared to a one-line stub once old, archived whole, described
// by recall, counted by the turn budget at their cost to the model, and the history stays paired.
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import {
  applyMicrocompact,
  assistant,
  enforceToolResultBudget,
  extractKeys,
  fromAISDK,
  imageInfo,
  isImageStub,
  MemoryArchive,
  parseImageEntry,
  prepareHistory,
  recall,
  textOf,
  toAISDK,
  userText,
  validateForProvider,
  type ImagePart,
  type Message,
  type ToolResultMessage,
} from "../../src/context/index.js";
import { png } from "../support/png.js";
import { lines } from "./helpers.js";

const shot = (data: string, extra?: Record<string, unknown>): ImagePart => ({ type: "image", mediaType: "image/png", data, ...(extra ? { extra } : {}) });
function result(parts: ToolResultMessage["content"], id = "tc-1"): ToolResultMessage {
  return { role: "tool", toolCallId: id, toolName: "screenshot", isError: false, content: parts };
}
/** [user, assistant(call), result, then `age` × (user, assistant)]. */
function fixture(message: ToolResultMessage, age: number): Message[] {
  const h: Message[] = [userText("look"), assistant("", [{ id: message.toolCallId, name: "screenshot", input: {} }]), message];
  for (let i = 0; i < age; i++) h.push(userText("next"), assistant("ok"));
  return h;
}

const SHOT = png(1280, 800, 300_000);

describe("images in tool results", () => {
  it("a 2-turn-old screenshot becomes a one-line stub that says what it was; the archive keeps the exact part; recall describes it", () => {
    const archive = new MemoryArchive();
    const image = shot(SHOT, { cache_control: { type: "ephemeral" }, filename: "a.png" });
    const message = result([{ type: "text", text: "Screenshot of the login page" }, image]);
    expect(applyMicrocompact(fixture(message, 1), { archive }).report.imagesCleared).toBe(0);

    const { messages, report } = applyMicrocompact(fixture(message, 2), { archive });
    expect(report.imagesCleared).toBe(1);
    const out = messages[2] as ToolResultMessage;
    expect(out.content[0]).toEqual({ type: "text", text: "Screenshot of the login page" });
    const stub = out.content[1]!;
    expect(stub.type).toBe("text");
    const text = (stub as { text: string }).text;
    expect(text).toMatch(/^\[Old image cleared — image\/png, 1280x800, 300000 bytes\. Archived as <<ccr:[0-9a-f]{16}>>/);
    expect(isImageStub(text)).toBe(true);
    // the cache mark stays where it was; the image's own fields do not ride on a text part
    expect((stub as { extra?: unknown }).extra).toEqual({ cache_control: { type: "ephemeral" } });
    expect(report.charsSaved).toBe(SHOT.length - text.length);
    // lossless: the archive gives back the very part
    const [key] = extractKeys(text);
    expect(report.keysArchived).toEqual([key]);
    expect(parseImageEntry(archive.get(key!)!)).toEqual(image);
    // recall says it is an image and how big, and never answers with the base64
    for (const options of [{}, { offset: 1, limit: 5 }, { grep: "A" }]) {
      const answer = recall(text, archive, options).text;
      expect(answer).toContain("an image cut from an old tool result — image/png, 1280x800, 300000 bytes");
      expect(answer.length).toBeLessThan(400);
    }
    // the text of the result is still the caption alone: the stub is no text to budgets and cuts
    expect(textOf(out)).toBe("Screenshot of the login page");
  });

  it("a second pass changes nothing; at summary age the text is cut and the image stub keeps its place and marker", () => {
    const archive = new MemoryArchive();
    const caption = lines(6_000);
    const message = result([{ type: "text", text: caption }, shot(SHOT)]);
    const first = applyMicrocompact(fixture(message, 2), { archive });
    expect(first.report).toMatchObject({ truncated: 1, imagesCleared: 1 });
    const again = applyMicrocompact(first.messages, { archive });
    expect(again.messages).toBe(first.messages);
    const imageStub = ((first.messages[2] as ToolResultMessage).content[1] as { text: string }).text;

    const later = [...first.messages, userText("more"), assistant("ok"), userText("more"), assistant("ok")];
    const second = applyMicrocompact(later, { archive });
    expect(second.report.summarized).toBe(1);
    const parts = (second.messages[2] as ToolResultMessage).content;
    expect(parts).toHaveLength(2);
    expect((parts[0] as { text: string }).text).toMatch(/^\[Old tool result cleared — /);
    expect(recall((parts[0] as { text: string }).text, archive).text).toBe(caption);
    expect((parts[1] as { text: string }).text).toBe(imageStub);
    expect(applyMicrocompact(second.messages, { archive }).messages).toBe(second.messages);
  });

  it("an image whose stub would not be shorter (a remote URL, a tiny icon) stays", () => {
    const archive = new MemoryArchive();
    const remote = result([{ type: "image", url: "https://example.com/a.png" }]);
    const tiny = result([shot("iVBORw0KGgo=")], "tc-2");
    for (const m of [remote, tiny]) {
      const { messages, report } = applyMicrocompact(fixture(m, 5), { archive });
      expect(report.imagesCleared).toBe(0);
      expect(messages[2]).toBe(m);
    }
    expect(archive.stats().entries).toBe(0);
  });

  it("a data: URL image (OpenAI's shape) is cleared too, and its entry keeps the URL", () => {
    const archive = new MemoryArchive();
    const image: ImagePart = { type: "image", url: `data:image/png;base64,${SHOT}` };
    const { messages, report } = applyMicrocompact(fixture(result([image]), 3), { archive });
    expect(report.imagesCleared).toBe(1);
    const text = ((messages[2] as ToolResultMessage).content[0] as { text: string }).text;
    expect(text).toContain("image/png, 1280x800, 300000 bytes");
    expect(parseImageEntry(archive.get(extractKeys(text)[0]!)!)).toEqual(image);
  });

  it("through prepareHistory in the AI SDK shape: 20 screenshots, only the last two turns keep theirs, and the wire stays paired in every format", () => {
    const archive = new MemoryArchive();
    const history: Message[] = [userText("test the page")];
    for (let i = 0; i < 20; i++) {
      history.push(assistant("", [{ id: `s${i}`, name: "screenshot", input: {} }]));
      history.push(result([shot(png(1280, 800, 300_000, i))], `s${i}`));
    }
    const wire = toAISDK(history);
    const before = JSON.stringify(wire).length;
    const { messages, report } = prepareHistory(fromAISDK(wire), { archive, format: "ai-sdk", assertValid: true });
    expect(report.microcompact.imagesCleared).toBe(18);
    expect(report.imageCharsBefore).toBe(20 * SHOT.length);
    expect(report.imageCharsAfter).toBe(2 * SHOT.length);
    for (const f of ["anthropic", "openai-chat", "openai-responses", "ai-sdk"] as const) expect(validateForProvider(messages, f)).toEqual([]);
    const after = JSON.stringify(toAISDK(messages)).length;
    expect(after).toBeLessThan(before / 9);
    // a second pass over the output is a fixed point
    expect(prepareHistory(messages, { archive, format: "ai-sdk" }).messages).toBe(messages);
  });
});

describe("imageInfo", () => {
  it("reads dimensions from PNG, GIF, JPEG and WebP headers, and the decoded size from the base64 length", () => {
    const b64 = (bytes: number[]) => Buffer.from(bytes).toString("base64");
    expect(imageInfo(shot(png(640, 480, 1_000)))).toEqual({ mediaType: "image/png", bytes: 1_000, payloadChars: 1_336, width: 640, height: 480 });
    const gif = [...Buffer.from("GIF89a"), 0x40, 0x01, 0xf0, 0x00, 0, 0, 0, 0];
    expect(imageInfo({ type: "image", data: b64(gif) })).toMatchObject({ mediaType: "image/gif", width: 320, height: 240 });
    // SOI, an APP0 segment of 16 bytes, then SOF0: precision, height 600, width 800
    const jpeg = [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, ...new Array<number>(14).fill(0), 0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20, 0x03];
    expect(imageInfo({ type: "image", mediaType: "image/jpeg", data: b64(jpeg) })).toMatchObject({ mediaType: "image/jpeg", width: 800, height: 600 });
    const webp = Buffer.alloc(30);
    webp.write("RIFF", 0, "latin1");
    webp.write("WEBPVP8X", 8, "latin1");
    webp.writeUIntLE(1919, 24, 3);
    webp.writeUIntLE(1079, 27, 3);
    expect(imageInfo({ type: "image", data: webp.toString("base64") })).toMatchObject({ mediaType: "image/webp", width: 1920, height: 1080 });
    // unknown bytes: no dimensions, the declared type (or "image")
    expect(imageInfo({ type: "image", data: "AAAAAAAA" })).toEqual({ mediaType: "image", bytes: 6, payloadChars: 8 });
    expect(imageInfo({ type: "image", url: "https://example.com/x.png" })).toBeUndefined();
  });
});

describe("the turn budget counts images", () => {
  it("a screenshot counts at its cost to the model (width×height/750 tokens, 4 chars each), so the text beside it is cut to fit", () => {
    const archive = new MemoryArchive();
    const history: Message[] = [
      userText("go"),
      assistant("", [
        { id: "a", name: "read", input: {} },
        { id: "b", name: "screenshot", input: {} },
      ]),
      { role: "tool", toolCallId: "a", toolName: "read", isError: false, content: [{ type: "text", text: lines(8_000) }] },
      result([shot(SHOT)], "b"),
    ];
    // 8,000 chars of text + 1280×800/750 → 1,366 tokens → 5,464 chars of image: over a 10,000-char turn
    const { messages, report } = enforceToolResultBudget(history, { archive, turnBudgetChars: 10_000, headChars: 1_000, tailChars: 500 });
    expect(report.imageChars).toBe(5_464);
    expect(report.resultsTruncated).toBe(1);
    expect(textOf(messages[2]!)).toMatch(/^\[Partial tool result — /);
    // the fresh image itself is never cut
    expect(messages[3]).toBe(history[3]);
  });
});

describe("the AI SDK's deprecated image parts", () => {
  it("image-data and an image file-data round-trip as they came, and age like any image", () => {
    const archive = new MemoryArchive();
    for (const part of [
      { type: "image-data", data: SHOT, mediaType: "image/png" },
      { type: "file-data", data: SHOT, mediaType: "image/png", filename: "shot.png" },
    ]) {
      const wire = [
        { role: "user", content: "look" },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "s", toolName: "screenshot", input: {} }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "s", toolName: "screenshot", output: { type: "content", value: [part] } }] },
      ];
      expect(JSON.stringify(toAISDK(fromAISDK(wire)))).toBe(JSON.stringify(wire));
      const old = [
        ...wire,
        { role: "user", content: "next" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "next" },
        { role: "assistant", content: "ok" },
      ];
      const { messages, report } = prepareHistory(fromAISDK(old), { archive, format: "ai-sdk" });
      expect(report.microcompact.imagesCleared).toBe(1);
      expect(textOf(messages[2]!)).toBe("");
      expect(JSON.stringify(toAISDK(messages))).toContain("[Old image cleared — image/png, 1280x800, 300000 bytes.");
    }
    // a PDF in file-data is no image: carried as it is
    const pdf = { type: "file-data", data: SHOT, mediaType: "application/pdf" };
    const neutral = fromAISDK([
      { role: "tool", content: [{ type: "tool-result", toolCallId: "s", toolName: "x", output: { type: "content", value: [pdf] } }] },
    ]);
    expect((neutral[0] as ToolResultMessage).content[0]).toEqual({ type: "raw", value: pdf });
  });
});
