// recall with `images` (a consumer that can carry an image in a tool result): an archived image comes
// back as itself, one per answer, counted against the answer's cap at its model cost; without the
// option it is described, as before. Old images' stubs say which.
import { describe, expect, it } from "vitest";
import {
  applyMicrocompact,
  archiveKey,
  assistant,
  extractKeys,
  isImageStub,
  MemoryArchive,
  prepareHistory,
  recall,
  userText,
  type ImagePart,
  type Message,
  type ToolResultMessage,
} from "../../src/context/index.js";
import { imageCostChars } from "../../src/context/image-cost.js";
import { png } from "../support/png.js";
import { lines } from "./helpers.js";

const shot = (data: string): ImagePart => ({ type: "image", mediaType: "image/png", data, extra: { providerOptions: { a: 1 } } });
const SHOT = png(1280, 800, 300_000, 1);
const SMALL = png(300, 200, 40_000, 2);

/** An old screenshot result, stubbed; returns the archive and the stub's key. */
function archived(parts: ImagePart[], imagesRecallable = false): { archive: MemoryArchive; keys: string[]; stubs: string[] } {
  const archive = new MemoryArchive();
  const message: ToolResultMessage = { role: "tool", toolCallId: "tc-1", toolName: "screenshot", isError: false, content: parts };
  const h: Message[] = [
    userText("look"),
    assistant("", [{ id: "tc-1", name: "screenshot", input: {} }]),
    message,
    userText("a"),
    assistant("b"),
    userText("c"),
    assistant("d"),
  ];
  const { messages } = applyMicrocompact(h, { archive, imagesRecallable });
  const stubs = (messages[2] as ToolResultMessage).content.map((p) => (p.type === "text" ? p.text : ""));
  return { archive, keys: stubs.flatMap((s) => extractKeys(s)), stubs };
}

describe("recall with images", () => {
  it("gives the archived image back exactly, with a one-line text that says it is attached", () => {
    const image = shot(SHOT);
    const { archive, keys } = archived([image]);
    const r = recall(keys[0]!, archive, { images: true });
    expect(r.image).toEqual({ key: keys[0], part: image });
    expect(r.text).toBe(`[recall <<ccr:${keys[0]}>>: the image cut from an old tool result — image/png, 1280x800, 300000 bytes — is attached to this answer.]`);
    // without the option: described, no image
    const plain = recall(keys[0]!, archive);
    expect(plain.image).toBeUndefined();
    expect(plain.text).toContain("cannot show the image again");
  });

  it("one image per answer: a second image key is described and told to be recalled alone", () => {
    const { archive, keys } = archived([shot(SHOT), shot(SMALL)]);
    expect(keys).toHaveLength(2);
    const r = recall(`${keys[1]} ${keys[0]}`, archive, { images: true });
    expect(r.image?.key).toBe(keys[1]);
    expect(r.text).toContain(`<<ccr:${keys[1]}>>: the image cut from an old tool result — image/png, 300x200`);
    expect(r.text).toContain(`<<ccr:${keys[0]}>>: an image cut from an old tool result — image/png, 1280x800, 300000 bytes. One image comes back per recall`);
    expect(r.text).not.toContain(SHOT.slice(0, 200));
  });

  it("the image counts against the answer's cap at its model cost: text and image together stay within it", () => {
    const { archive, keys } = archived([shot(SHOT)]);
    const text = lines(100_000, 7);
    archive.put(text);
    const textKey = archiveKey(text);
    const cap = 20_000;
    const cost = imageCostChars(shot(SHOT));
    // 1280×800/750 = 1,366 tokens at 4 chars a token (the budgets' estimate), not its 400,000 base64 chars
    expect(cost).toBe(5_464);
    const alone = recall(textKey, archive, { maxChars: cap }).text.length;
    const r = recall(`${keys[0]} ${textKey}`, archive, { images: true, maxChars: cap });
    expect(r.image?.key).toBe(keys[0]);
    expect(r.text.length + cost).toBeLessThanOrEqual(cap);
    expect(r.text.length).toBeLessThan(alone);
    const single = recall(textKey, archive, { images: true, maxChars: cap });
    expect(single.image).toBeUndefined();
    expect(single.text.length).toBe(alone);
  });

  it("a stub says recall shows the image again only where it does; both wordings are stubs", () => {
    const shown = archived([shot(SHOT)], true).stubs[0]!;
    const described = archived([shot(SHOT)]).stubs[0]!;
    expect(shown).toMatch(/Archived as <<ccr:[0-9a-f]{16}>>: recall shows it again\.\]$/);
    expect(described).toMatch(/recall describes it; it cannot be shown again\.\]$/);
    expect(isImageStub(shown)).toBe(true);
    expect(isImageStub(described)).toBe(true);
    // prepareHistory passes the option through, and a second pass changes nothing
    const archive = new MemoryArchive();
    const message: ToolResultMessage = { role: "tool", toolCallId: "tc-1", toolName: "screenshot", isError: false, content: [shot(SHOT)] };
    const h: Message[] = [
      userText("look"),
      assistant("", [{ id: "tc-1", name: "screenshot", input: {} }]),
      message,
      userText("a"),
      assistant("b"),
      userText("c"),
      assistant("d"),
    ];
    const once = prepareHistory(h, { archive, imagesRecallable: true });
    expect(JSON.stringify(once.messages[2])).toContain("recall shows it again");
    const twice = prepareHistory(once.messages, { archive, imagesRecallable: true });
    expect(twice.report.changed).toBe(false);
  });
});

describe("recall with images: the cap holds", () => {
  it("64 image keys on the smallest cap: text and image within it, else no image and every one described", () => {
    const many = [shot(SHOT), ...Array.from({ length: 63 }, (_, i) => shot(png(1000 + i, 700, 3_000, i + 10)))];
    const { archive, keys } = archived(many);
    expect(keys).toHaveLength(64);
    const r = recall(keys.join(" "), archive, { images: true, maxChars: 16_384 });
    const cost = r.image !== undefined ? imageCostChars(r.image.part) : 0;
    expect(r.text.length + cost).toBeLessThanOrEqual(16_384);
    expect(r.image?.key).toBe(keys[0]);
    // described only (no image option): within the cap too; it was 16,896 chars
    expect(recall(keys.join(" "), archive, { maxChars: 16_384 }).text.length).toBeLessThanOrEqual(16_384);
    // a few keys leave room for it
    const few = recall(keys.slice(0, 3).join(" "), archive, { images: true, maxChars: 16_384 });
    expect(few.image?.key).toBe(keys[0]);
    expect(few.text.length + imageCostChars(few.image!.part)).toBeLessThanOrEqual(16_384);
  });
});
